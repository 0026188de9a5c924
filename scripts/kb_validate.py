#!/usr/bin/env python3
"""Check the knowledge-base data files before they ship (maintainer script, not a test run).

    python scripts/kb_validate.py                 # the files inside gpudoctor/kb/data
    python scripts/kb_validate.py --data-dir DIR  # a copy being edited

Checks: every row has at least one source and every source key exists; a row whose
sources are all secondary says so in its note; driver and CUDA versions parse; within a
platform a newer CUDA release never needs an older driver; one GA row per CUDA minor; no
compute capability in two architecture rows; GPU names are unique once normalised, each
resolves to its own row (none is shadowed), and each row's architecture agrees with the
architecture table.  The framework files: PyTorch releases unique and newest first, each
variant's CUDA consistent with its cuXYZ tag, arch lists parse, Python ranges parse, the
PyPI default is one of the release's variants; TensorFlow's driver columns equal what the
driver table (in the same data directory) says for the tested CUDA; cuDNN library names
carry their major; JAX's driver floors and CuPy's package names agree with their CUDA major.
The GPU spec sheets: every figure positive or null, each name unique once normalised and found
by the lookup as its own row, compute capability and architecture agree with the driver table,
the PCIe generation is one the PCIe table has, TF32 figures carry their own sources; the PCIe
table: one row per generation, ascending, x16 = 16 lanes and duplex = twice one direction.
The Xid table: codes unique and ascending, severity and category from the allowed sets, every
command a named argument list whose only placeholder is ``{gpu}``; the health limits: names
unique, numeric limits positive, a gpudoctor-chosen value says so in its note, the persistence
brand lists disjoint.  The nvidia/cuda tags: one row per exact release, newest first, flavor and OS tokens
well-formed, cuDNN flavors spelled with the row's cuDNN token, confidence published or secondary.
Prints a summary; exits 1 on any error.


The checks live in ``scripts/kbtools/validate/`` (one module per data file); the source and header checks every
file shares in ``scripts/kbtools/sources.py``.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

SCRIPTS = pathlib.Path(__file__).resolve().parent
REPO = SCRIPTS.parent
for _path in (REPO, SCRIPTS):  # gpudoctor from the checkout, kbtools beside this script
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The names below are this script's API: the tests (and a maintainer in a REPL) reach them from here.
from kbtools.common import DEFAULT_DATA_DIR  # noqa: E402
from kbtools.validate import validate, validate_with_counts  # noqa: E402

__all__ = ["DEFAULT_DATA_DIR", "main", "validate", "validate_with_counts"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate the gpudoctor knowledge-base data files.")
    parser.add_argument("--data-dir", type=pathlib.Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    errors: list[str] = []
    counts = validate_with_counts(args.data_dir, errors)
    for filename, rows in counts.items():
        summary = ", ".join(f"{key} {value}" for key, value in rows.items())
        print(f"{filename}: {summary}")
    if errors:
        print(f"{len(errors)} error(s):")
        for error in errors:
            print(f"  - {error}")
        return 1
    print(
        "ok: every row sourced, versions parse, driver minimums monotonic, GPU names unique, "
        "framework tables consistent with the driver table, spec sheets and PCIe rates consistent, "
        "Xid rows and health limits well-formed"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
