"""Locator: run as ``TARGET_PYTHON locate_probe.py FRAMEWORK...``; says at once which frameworks are absent.

Prints one JSON object: for each framework named, its "not installed" record (the same one its own
probe would print) when it is clearly absent, or null when it is there and its own probe must run.
One interpreter answering for the frameworks a machine doesn't have costs a fraction of starting one
per framework, and leaves the CPU to the probe that is importing something heavy.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
else:
    import _probe_common as common


def main(names: list[str]) -> None:
    common.drop_probes_dir_from_path()
    answers: dict[str, dict[str, Any] | None] = {}
    for name in names:
        try:
            answers[name] = common.absent_record(name)
        except Exception:  # noqa: BLE001 - unsure: let the framework's own probe answer
            answers[name] = None
    data = (json.dumps(answers) + "\n").encode("utf-8")
    while data:
        data = data[os.write(1, data) :]
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
