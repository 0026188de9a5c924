"""``gpudoctor schema``: the JSON Schema that ``check --format json`` follows."""

from __future__ import annotations

import argparse
import json
import sys

from gpudoctor.commands.common import guarded
from gpudoctor.results import EXIT_OK


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.render.json_report import load_schema

    sys.stdout.write(json.dumps(load_schema(), indent=2) + "\n")
    return EXIT_OK
