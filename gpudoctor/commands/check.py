"""``gpudoctor check``: inspect this machine (or a snapshot) and report every check.

As a scheduler hook it also speaks the host's language: ``-q`` prints nothing, ``--format line`` prints the
verdict in one line, and ``--exit-codes`` answers in the host's exit codes (node-problem-detector, Nagios).
"""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.common import guarded, one_line, refuse_existing, report_load_errors
from gpudoctor.commands.node_run import LEVEL_WORDS, NodeRun, produce_report, verdict_of
from gpudoctor.commands.report import emit_report, mark_interrupted, write_junit
from gpudoctor.errors import InputError
from gpudoctor.verdict import USAGE_EXIT


@guarded
def main(args: argparse.Namespace) -> int:
    convention: str = getattr(args, "exit_codes", "gpudoctor")
    try:
        return _check(args)
    except InputError as exc:
        if convention == "gpudoctor":
            raise  # guarded says it: one line, exit 2
        # Bad input in the host's words: for Nagios a 2 would be CRITICAL, a page about a healthy machine.
        sys.stderr.write(f"gpudoctor: error: {one_line(str(exc))}\n")
        return USAGE_EXIT[convention]


def _check(args: argparse.Namespace) -> int:
    if args.junit_xml:
        refuse_existing(args.junit_xml, args.force)  # before the work, not after it
    run = produce_report(args, show_progress=args.format == "text" and not args.quiet)
    interrupted_exit = _say_why_it_stopped(run)
    verdict = verdict_of(run, args)
    if args.quiet or args.format == "line":
        report_load_errors(run.report.internal_errors)
        if args.junit_xml:
            write_junit(run.report, args.junit_xml, args.force, args.fail_on == "warning")
        if not args.quiet:
            sys.stdout.write(verdict.line() + "\n")  # one printable ASCII line (gpudoctor.verdict.one_line)
            sys.stdout.flush()
    else:
        # The report as asked (it writes --junit-xml too); its summary's exit code is the verdict's (a run the
        # budget cut short says 3 there too, as the process does).
        emit_report(
            run.report,
            args,
            exit_code=verdict.exit_code("gpudoctor") if run.stopped and run.interrupted_by is None else None,
        )
        level = getattr(args, "level", "standard")
        if args.format == "text" and level != "standard" and not args.from_path:
            sys.stdout.write(f"Level {level}: {LEVEL_WORDS[level]}\n")
            sys.stdout.flush()
    if interrupted_exit is not None and args.exit_codes == "gpudoctor":
        return interrupted_exit  # 128 + the signal, as a shell expects of a command that a signal ended
    # The verdict's exit code: in gpudoctor's convention the report's own (0, 1, 3), and 3 also when the budget
    # ran out before anything was found (not judged is not healthy); in the host's otherwise.
    return verdict.exit_code(args.exit_codes)


def _say_why_it_stopped(run: NodeRun) -> int | None:
    """Mark a run a signal cut short (the report's ``sections.collection`` and stderr; the exit code for it),
    or say on stderr that the budget ran out (the report's section says so already)."""
    report = run.report
    if run.interrupted_by is not None:
        scope = dict(report.sections.get("collection") or {})  # the level and budget produce_report recorded
        exit_code = mark_interrupted(report, run.interrupted_by)
        report.sections["collection"] = {**scope, **report.sections["collection"]}
        return exit_code
    if run.stopped is not None:
        sys.stderr.write(f"gpudoctor: {run.stopped}: the report holds only what finished\n")
    return None
