"""``gpudoctor smoke``: run real workloads in the target Python and judge them with the SMOKE checks."""

from __future__ import annotations

import argparse

from gpudoctor.commands.common import guarded
from gpudoctor.commands.live import run_smoke
from gpudoctor.commands.report import build_report, emit_report


@guarded
def main(args: argparse.Namespace) -> int:
    """Run the workloads, collect the machine's evidence (GPU names, PCIe links), judge with the SMOKE checks."""
    from gpudoctor.evidence.collect import collect

    evidence = collect(timeout=args.timeout)
    evidence.add(run_smoke(args, show_progress=args.format == "text"))
    report, _ = build_report(evidence, {}, ["SMOKE"], None)
    table = ""
    if args.format == "text":
        from gpudoctor.facts.facts import Facts
        from gpudoctor.render.smoke_table import render_smoke_table

        table = render_smoke_table(Facts(evidence).smoke)
    return emit_report(report, args, text_before=table)
