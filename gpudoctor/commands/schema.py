"""``gpudoctor schema``: the JSON Schema that ``check --format json`` follows, generated from its types."""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.common import guarded
from gpudoctor.results import EXIT_OK


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.render.report_schema import schema_text

    sys.stdout.write(schema_text())
    return EXIT_OK
