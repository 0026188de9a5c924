"""A node's verdict in one line and one exit code, made for the schedulers that act on it.

Slurm's Prolog and HealthCheckProgram, Kubernetes node-problem-detector's custom plugins and Nagios-style
monitors each read an exit code by their own convention and show a short text (a drain reason, a node
condition's message, a status line).  The verdict is computed once from the report, here, and every one of
them reads it: ``check --format line``, ``check --exit-codes``, ``slurm-healthcheck`` and ``fleet run``.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass

from gpudoctor.evidence.redact import strip_url_credentials
from gpudoctor.results import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_PROBLEMS,
    CheckResult,
    Finding,
    NextStep,
    Report,
    Severity,
    Status,
    group_by_area,
)


class VerdictState(str, enum.Enum):
    OK = "ok"
    WARNING = "warning"
    PROBLEM = "problem"
    UNKNOWN = "unknown"  # gpudoctor could not judge: it failed, a check crashed, the budget ran out


# The exit code each host reads, by state.  npd: node-problem-detector's custom plugin protocol (0 OK,
# 1 NonOK, anything else Unknown); nagios: the monitoring-plugins convention (0 OK, 1 WARNING, 2 CRITICAL,
# 3 UNKNOWN); gpudoctor: the tool's own (0 clean, 1 problems, 3 gpudoctor failed or could not judge).
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

# A node check's time limit when no --budget is given, by --level: what each level's work needs on a real GPU
# node, with room (quick: files and nvidia-smi; standard: + importing the frameworks; full: + the smoke
# workloads).  The one table `fleet run` (Slurm, Ray) and `fleet k8s` read.
DEFAULT_LEVEL_BUDGET_S = {"quick": 60.0, "standard": 180.0, "full": 600.0}

# Slurm keeps a drain reason whole, but `sinfo -R` shows about 20 characters by default and node-problem-
# detector keeps 80 of a plugin's output (max_output_length): the code and the words that matter come first,
# and the line is cut at a word near this length.
MAX_REASON_CHARS = 200
REASON_PREFIX = "gpudoctor: "
# Of a long reason the fix keeps at least this much; the finding's message is shortened first.
_FIX_CHARS = 80
_ELLIPSIS = "..."
_ARROW = " -> "

# The line reaches scheduler state and other people's terminals, some of which cut it by bytes (sinfo's
# columns): it is plain ASCII.  The typographic characters the checks' texts use get ASCII spellings; any
# other character loses its accents (NFKD) or becomes "?".
_ASCII_SPELLINGS = {
    "→": "->",
    "←": "<-",
    "…": "...",
    "—": "-",
    "–": "-",
    "−": "-",
    "×": "x",
    "≥": ">=",
    "≤": "<=",
    "≈": "~",
    "≠": "!=",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "µ": "u",
    "°": " deg",
}
# A fix text's sentences, and inside each the clause after a colon ("The GPU stopped answering: save the log").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)")
# The verbs fix texts open their instructions with; a clause starting with another word describes the cause.
_ACTION_VERBS_TEXT = """
    add allow ask attach blacklist build check choose configure contact create delete disable downgrade drain
    enable end enroll export find fix free give hold increase install keep kill list load lower make mount move
    open pass pin plug point power put raise read rebuild reboot recreate reduce reinstall reload remove replace
    request rerun reseat reset restart run save see select set shorten start stop switch turn uninstall unload
    unset update upgrade use wait
"""
_ACTION_VERBS = frozenset(_ACTION_VERBS_TEXT.split())
# The words an instruction under a condition opens with ("If it has a GPU, replace it with a CUDA build").
_CONDITIONS = frozenset({"if", "when", "where", "on", "in", "with", "after", "before", "once", "for"})
_PUNCTUATION = "`'\",;:.!?()"


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
    """``text`` as one printable ASCII line of at most ``limit`` characters, cut at a word with "...".

    Control characters become spaces and credentials in URLs are removed: the line reaches a scheduler's
    state and other people's terminals.
    """
    flat = " ".join(_ascii(strip_url_credentials(text)).split())
    if len(flat) <= limit:
        return flat
    if limit <= len(_ELLIPSIS):
        return flat[: max(limit, 0)].rstrip()
    cut = flat[: limit - len(_ELLIPSIS) + 1]  # one more: a word that ends exactly there is kept whole
    space = cut.rfind(" ")
    cut = cut[:space] if space > limit // 2 else cut[:-1]
    return cut.rstrip(" ,;:-") + _ELLIPSIS


def _ascii(text: str) -> str:
    out = []
    for ch in text:
        if " " <= ch <= "~":
            out.append(ch)
        elif ch in _ASCII_SPELLINGS:
            out.append(_ASCII_SPELLINGS[ch])
        elif ch.isspace() or not ch.isprintable():
            out.append(" ")
        else:
            plain = "".join(c for c in unicodedata.normalize("NFKD", ch) if " " <= c <= "~")
            out.append(plain or "?")
    return "".join(out)


def node_verdict(report: Report, fail_on: str = "problem", stopped: str | None = None) -> Verdict:
    """The report's verdict.  ``stopped``: why the run did not finish (a budget, a signal): then nothing found
    is not "ok" but "unknown", unless a problem was already found (that stands whatever else was missed)."""
    counts = report.counts()
    problems, warnings = counts.get(Status.PROBLEM.value, 0), counts.get(Status.WARNING.value, 0)
    step = report.next_step()
    if problems or (fail_on == "warning" and warnings):
        wanted = Severity.PROBLEM if problems else Severity.WARNING
        more = (problems if problems else warnings) - 1
        code, line = _reason_line(report, wanted, step, more)
        return Verdict(VerdictState.PROBLEM, code, line, problems, warnings)
    crashed = [r.code for r in report.results if r.status is Status.CRASHED]
    if stopped or crashed or report.internal_errors:
        if stopped:
            why = f"not judged: {stopped}"
        elif crashed:
            why = f"not judged: check {', '.join(crashed[:3])} crashed"
        else:
            why = f"not judged: {report.internal_errors[0]}"
        crashed_code = None if stopped or not crashed else crashed[0]
        return Verdict(VerdictState.UNKNOWN, crashed_code, one_line(why), problems, warnings)
    if warnings:
        code, line = _reason_line(report, Severity.WARNING, step, warnings - 1)
        return Verdict(VerdictState.WARNING, code, line, problems, warnings)
    ok = counts.get(Status.OK.value, 0)
    return Verdict(VerdictState.OK, None, f"ok: {ok} checks ok, no problem", problems, warnings)


def _reason_line(report: Report, wanted: Severity, step: NextStep | None, more: int) -> tuple[str, str]:
    """(code, "<CODE> <what was found> -> <what to do> (+N more)"), at most :data:`MAX_REASON_CHARS` long.

    A long message is shortened before the fix is: a drain reason that says what to do is worth more than
    the rest of the finding's sentence."""
    code, message, fix = _reason(report, wanted, step)
    suffix = f" (+{more} more)" if more > 0 else ""
    room = MAX_REASON_CHARS - len(suffix)
    head = f"{code} " if code else ""
    brief = one_line(brief_fix(fix), _FIX_CHARS) if fix else ""
    tail = _ARROW + brief if brief else ""
    body = one_line(message, max(room - len(head) - len(tail), _FIX_CHARS)) + tail
    return code, one_line(head + body, room) + suffix


def _reason(report: Report, wanted: Severity, step: NextStep | None) -> tuple[str, str, str | None]:
    """(check code, message, fix summary) naming the reason: the next step's (the first fixable finding reading
    the stack bottom-up, so usually the root cause) when it has that severity; else the first finding of that
    severity in area order; else the first result of that status."""
    if step is not None:
        for result in report.results:
            if result.code == step.code and any(_is_step(f, step, wanted) for f in result.findings):
                return step.code, step.message, step.fix.summary
    ordered: list[CheckResult] = [r for _, results in group_by_area(report.results) for r in results]
    for result in ordered:
        for finding in result.findings:
            if finding.severity is wanted:
                return result.code, finding.message, finding.fix.summary if finding.fix else None
    status = Status.PROBLEM if wanted is Severity.PROBLEM else Status.WARNING
    for result in ordered:
        if result.status is status:
            return result.code, result.summary, None
    return "", "see the report", None


def _is_step(finding: Finding, step: NextStep, wanted: Severity) -> bool:
    return finding.severity is wanted and finding.message == step.message and finding.fix == step.fix


def brief_fix(summary: str) -> str:
    """What a fix text says to do, in its first instruction: "The driver was upgraded while the old module
    stayed loaded. Reboot; or, ..." -> "Reboot".  A text that opens with its cause ("The GPU stopped answering:
    save the kernel log, ...") is read from the first clause that starts with a verb, else from what follows
    its first colon; asides in parentheses and alternatives after ";" are left for the report."""
    text = summary
    while True:  # innermost first: "(multiprocessing.set_start_method('spawn'))"
        shorter = _PARENTHETICAL.sub("", text)
        if shorter == text:
            break
        text = shorter
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    if not sentences:
        return ""
    clauses = [part.strip() for sentence in sentences for part in sentence.split(": ", 1) if part.strip()]
    action = next((c for c in clauses if _starts_with_verb(c)), None)
    if action is None:
        action = sentences[0].split(": ", 1)[-1]
    action = action.split("; ")[0].strip().rstrip(".")
    return action[:1].upper() + action[1:]


def _starts_with_verb(clause: str) -> bool:
    """Whether ``clause`` is an instruction: "Reboot; or ...", or one under a condition ("If it has a GPU,
    replace it", "On macOS, install ...")."""
    words = clause.split(maxsplit=1)
    if not words:
        return False
    if words[0].strip(_PUNCTUATION).lower() in _ACTION_VERBS:
        return True
    _, comma, rest = clause.partition(", ")
    return bool(comma) and words[0].lower() in _CONDITIONS and _starts_with_verb(rest)
