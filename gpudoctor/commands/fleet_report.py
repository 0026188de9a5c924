"""``gpudoctor fleet report``: node reports aggregated into one fleet report (text, JSON, Markdown, HTML)."""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.common import refuse_existing, use_color, write_new_file


def run(args: argparse.Namespace) -> int:
    from gpudoctor.fleet.report_aggregate import aggregate

    if args.output:
        refuse_existing(args.output, args.force)
    report = aggregate(args.paths)
    if args.format == "json":
        from gpudoctor.fleet.render_json import render_fleet_json

        text = render_fleet_json(report)
    elif args.format == "markdown":
        from gpudoctor.fleet.render_markdown import render_fleet_markdown

        text = render_fleet_markdown(report)
    elif args.format == "html":
        from gpudoctor.fleet.render_html import render_fleet_html

        text = render_fleet_html(report)
    else:
        from gpudoctor.fleet.render_text import render_fleet_text

        text = render_fleet_text(report, color=not args.output and use_color(sys.stdout))
    if args.output:
        write_new_file(args.output, text, args.force)
    else:
        sys.stdout.write(text)
    return report.exit_code
