"""``gpudoctor check``: inspect this machine (or a snapshot) and report every check."""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.node_run import NodeRun, produce_report, verdict_of
from gpudoctor.commands.report import emit_report, mark_interrupted, write_junit


@guarded
def main(args: argparse.Namespace) -> int:
    if args.junit_xml:
        refuse_existing(args.junit_xml, args.force)  # before the work, not after it
    run = produce_report(args, show_progress=args.format == "text" and not args.quiet)
    report = run.report
    interrupted_exit = mark_interrupted(report, run.interrupted_by) if run.interrupted_by is not None else None
    if args.quiet or args.format == "line" or args.exit_codes != "gpudoctor":
        return _emit_verdict(run, args, interrupted_exit)
    exit_code = emit_report(report, args)
    return interrupted_exit if interrupted_exit is not None else exit_code


def _emit_verdict(run: NodeRun, args: argparse.Namespace, interrupted_exit: int | None) -> int:
    """The scheduler-hook outputs: nothing (``-q``), the one line (``--format line``) or the usual report,
    and the exit code in the host's convention (``--exit-codes``)."""
    verdict = verdict_of(run, args)
    if not args.quiet and args.format != "line":
        emit_report(run.report, args)  # the report as asked (it writes --junit-xml too), only the exit code differs
    else:
        if args.junit_xml:
            write_junit(run.report, args.junit_xml, args.force, args.fail_on == "warning")
        if not args.quiet:
            from gpudoctor.render.common import printable

            sys.stdout.write(printable(verdict.line()) + "\n")
    if interrupted_exit is not None and args.exit_codes == "gpudoctor":
        return interrupted_exit
    return verdict.exit_code(args.exit_codes)
