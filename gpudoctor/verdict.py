"""A node's verdict in one line and one exit code, made for the schedulers that act on it.

Slurm's Prolog and HealthCheckProgram, Kubernetes node-problem-detector's custom plugins and Nagios-style
monitors each read an exit code by their own convention and show a short text (a drain reason, a node
condition's message, a status line).  The verdict is computed once from the report, here, and every one of
them reads it: ``check --format line``, ``check --exit-codes``, ``slurm-healthcheck`` and ``fleet run``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpudoctor.results import EXIT_INTERNAL, EXIT_OK, EXIT_PROBLEMS, NextStep, Report, Severity, Status


class VerdictState(str, enum.Enum):
    OK = "ok"
    WARNING = "warning"
    PROBLEM = "problem"
    UNKNOWN = "unknown"  # gpudoctor could not judge: it failed, a check crashed, the budget ran out


# The exit code each host reads, by state.  npd: node-problem-detector's custom plugin protocol (0 OK,
# 1 NonOK, anything else Unknown); nagios: the monitoring-plugins convention (0 OK, 1 WARNING, 2 CRITICAL,
# 3 UNKNOWN); gpudoctor: the tool's own (0 clean, 1 problems, 3 gpudoctor failed).
EXIT_CONVENTIONS: dict[str, dict[VerdictState, int]] = {
    "gpudoctor": {
        VerdictState.OK: EXIT_OK,
        VerdictState.WARNING: EXIT_OK,
        VerdictState.PROBLEM: EXIT_PROBLEMS,
        VerdictState.UNKNOWN: EXIT_INTERNAL,
    },
    "npd": {VerdictState.OK: 0, VerdictState.WARNING: 0, VerdictState.PROBLEM: 1, VerdictState.UNKNOWN: 2},
    "nagios": {VerdictState.OK: 0, VerdictState.WARNING: 1, VerdictState.PROBLEM: 2, VerdictState.UNKNOWN: 3},
}
# Bad usage (exit 2 in gpudoctor's convention) in each host's words: "unknown" everywhere but Nagios, whose
# UNKNOWN is 3 (its 2 would page someone as CRITICAL).
USAGE_EXIT = {"gpudoctor": 2, "npd": 2, "nagios": 3}

# Slurm keeps a drain reason whole, but `sinfo -R` shows about 40 characters and people read it in a
# column: the code and the words that matter come first, and the line is cut at a word near this length.
MAX_REASON_CHARS = 200
REASON_PREFIX = "gpudoctor: "


@dataclass(frozen=True)
class Verdict:
    state: VerdictState
    code: str | None  # the check whose finding is the reason (the next step's, else the worst), None when ok
    reason: str  # one printable line without the prefix: "DRV002 Driver/library version mismatch ..."
    problems: int
    warnings: int

    def exit_code(self, convention: str = "gpudoctor") -> int:
        return EXIT_CONVENTIONS[convention][self.state]

    def line(self) -> str:
        """The one line a host shows: "gpudoctor: ..." (a drain reason, a node condition message)."""
        return REASON_PREFIX + self.reason


def one_line(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` as one printable line of at most ``limit`` characters, cut at a word boundary with "…".

    Control characters become spaces: the line reaches a scheduler's state and other people's terminals.
    """
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def node_verdict(report: Report, fail_on: str = "problem", stopped: str | None = None) -> Verdict:
    """The report's verdict.  ``stopped``: why the run did not finish (a budget, a signal): then nothing found
    is not "ok" but "unknown", unless a problem was already found (that stands whatever else was missed)."""
    counts = report.counts()
    problems, warnings = counts.get(Status.PROBLEM.value, 0), counts.get(Status.WARNING.value, 0)
    step = report.next_step()
    if problems or (fail_on == "warning" and warnings):
        wanted = Severity.PROBLEM if problems else Severity.WARNING
        code, text = _reason(report, wanted, step)
        more = problems + (warnings if not problems else 0) - 1
        suffix = f" (+{more} more)" if more > 0 else ""
        state = VerdictState.PROBLEM
        return Verdict(
            state, code, one_line(f"{code} {text}", MAX_REASON_CHARS - len(suffix)) + suffix, problems, warnings
        )
    crashed = [r.code for r in report.results if r.status is Status.CRASHED]
    if stopped or crashed or report.internal_errors:
        if stopped:
            why = f"not judged: {stopped}"
        elif crashed:
            why = f"not judged: check {', '.join(crashed[:3])} crashed"
        else:
            why = f"not judged: {report.internal_errors[0]}"
        return Verdict(VerdictState.UNKNOWN, crashed[0] if crashed else None, one_line(why), problems, warnings)
    if warnings:
        code, text = _reason(report, Severity.WARNING, step)
        others = f" (+{warnings - 1} more)" if warnings > 1 else ""
        line = one_line(f"{code} {text}", MAX_REASON_CHARS - len(others)) + others
        return Verdict(VerdictState.WARNING, code, line, problems, warnings)
    ok = counts.get(Status.OK.value, 0)
    return Verdict(VerdictState.OK, None, f"ok: {ok} checks ok, no problem", problems, warnings)


def _reason(report: Report, wanted: Severity, step: NextStep | None) -> tuple[str, str]:
    """The check code and message naming the reason: the next step's (the first fixable finding reading the
    stack bottom-up) when it has that severity, else the first finding of that severity, else a summary."""
    if step is not None:
        for result in report.results:
            if result.code == step.code and any(f.severity is wanted for f in result.findings):
                return step.code, _with_fix(step.message, step.fix.summary)
    for result in report.results:
        for finding in result.findings:
            if finding.severity is wanted:
                return result.code, _with_fix(finding.message, finding.fix.summary if finding.fix else None)
    status = Status.PROBLEM if wanted is Severity.PROBLEM else Status.WARNING
    for result in report.results:
        if result.status is status:
            return result.code, result.summary
    return "", "see the report"


def _with_fix(message: str, fix: str | None) -> str:
    """ "<message> → <first sentence of the fix>": a drain reason that says what to do, not only what broke."""
    if not fix:
        return message
    first = fix.split(". ")[0].rstrip(".")
    return f"{message} → {first}"
