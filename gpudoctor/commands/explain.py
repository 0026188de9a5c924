"""``gpudoctor explain CODE``: a check's documentation (what it checks, why it matters, how to fix)."""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.common import guarded, report_load_errors
from gpudoctor.errors import UsageError
from gpudoctor.results import EXIT_OK


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.registry import load_registry

    registry = load_registry()
    registry.require_checks()
    spec = registry.by_code(args.code)
    if spec is None:
        report_load_errors(registry.load_errors)  # a module that failed to load may be where CODE lives
        raise UsageError(f"unknown check code {args.code!r} (see 'gpudoctor list-checks')")
    sys.stdout.write(f"{spec.code}: {spec.title}  [area: {spec.area}]\n\n{spec.doc}\n")
    return EXIT_OK
