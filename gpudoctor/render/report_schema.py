"""The report's JSON Schema: generated from the report's types, and the committed copy of it.

``gpudoctor schema`` prints :func:`schema_text`; ``report.schema.json`` beside this module holds the same
text for docs and other tools (a test fails when the two differ by a byte).  After changing
:mod:`gpudoctor.report_json`, regenerate it: ``python -m gpudoctor.render.report_schema --write``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from gpudoctor.render.json_schema import JsonSchema, json_schema
from gpudoctor.report_json import SCHEMA_DESCRIPTION, SCHEMA_ID, SCHEMA_TITLE, ReportJson

SCHEMA_FILE = pathlib.Path(__file__).with_name("report.schema.json")


def report_schema() -> JsonSchema:
    """The JSON Schema that ``check --format json`` follows."""
    return json_schema(ReportJson, schema_id=SCHEMA_ID, title=SCHEMA_TITLE, description=SCHEMA_DESCRIPTION)


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpudoctor.render.report_schema", description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"write {SCHEMA_FILE.name} (default: print it)")
    args = parser.parse_args(argv)
    if args.write:
        SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
    else:
        sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
