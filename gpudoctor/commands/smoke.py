"""``gpudoctor smoke``: run real workloads in the target Python and judge them with the SMOKE checks."""

from __future__ import annotations

import argparse

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.live import ask_cloud_metadata_if_asked, run_smoke_until_signal
from gpudoctor.commands.report import build_report, emit_report, mark_interrupted


@guarded
def main(args: argparse.Namespace) -> int:
    """Run the workloads, collect the machine's evidence (GPU names, PCIe links), judge with the SMOKE checks."""
    from gpudoctor.evidence.collect import collect

    if args.junit_xml:
        refuse_existing(args.junit_xml, args.force)  # before the work, not after it
    evidence = collect(timeout=args.timeout)
    ask_cloud_metadata_if_asked(evidence, args)
    # Ctrl-C and SIGTERM stop the workloads; the report of what finished is still shown, with the signal's code.
    item, interrupted_by = run_smoke_until_signal(args, show_progress=args.format == "text")
    evidence.add(item)
    report, _ = build_report(evidence, {}, ["SMOKE"], None)
    if interrupted_by is not None:
        exit_code = mark_interrupted(report, interrupted_by)
        emit_report(report, args)
        return exit_code
    table = ""
    if args.format == "text":
        from gpudoctor.facts.facts import Facts
        from gpudoctor.render.smoke_table import render_smoke_table

        table = render_smoke_table(Facts(evidence).smoke)
    return emit_report(report, args, text_before=table)
