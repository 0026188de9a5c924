"""``gpudoctor list-checks``: every check (built-in and plugins) with its code, area and title."""

from __future__ import annotations

import argparse
import json
import sys

from gpudoctor.areas import area_order, area_title
from gpudoctor.commands.common import guarded, report_load_errors
from gpudoctor.results import EXIT_INTERNAL, EXIT_OK


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.registry import load_registry

    registry = load_registry()
    registry.require_checks()
    if args.format == "json":
        rows = [
            {
                "code": c.code,
                "area": c.area,
                "area_title": area_title(c.area),
                "area_order": area_order(c.area),
                "title": c.title,
                "module": c.module,
            }
            for c in registry.checks
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        width = max((len(c.code) for c in registry.checks), default=6)
        for spec in registry.checks:
            sys.stdout.write(f"{spec.code:<{width}}  {spec.area:<12} {spec.title}\n")
    report_load_errors(registry.load_errors)
    return EXIT_INTERNAL if registry.load_errors else EXIT_OK
