"""The result model: what a check says about the machine.

Checks return an :class:`Outcome`; the runner turns it into a :class:`CheckResult`
(adding the code, timing and status).  Renderers read only these types, so the
JSON output is a direct, versioned image of them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    """How bad one finding is."""

    INFO = "info"
    WARNING = "warning"
    PROBLEM = "problem"


class Status(str, enum.Enum):
    """The verdict of one check, shown as one line in the report."""

    OK = "ok"
    WARNING = "warning"
    PROBLEM = "problem"
    NOT_APPLICABLE = "not_applicable"
    CRASHED = "crashed"


@dataclass(frozen=True)
class Fix:
    """What to do about a finding: the exact commands to type."""

    summary: str
    commands: tuple[str, ...] = ()
    needs_root: bool = False
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "commands": list(self.commands),
            "needs_root": self.needs_root,
            "url": self.url,
        }


@dataclass(frozen=True)
class Finding:
    """One thing a check noticed, with the evidence that led there and the fix."""

    severity: Severity
    message: str
    fix: Fix | None = None
    evidence: tuple[str, ...] = ()
    code: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "evidence": list(self.evidence),
            "fix": self.fix.to_dict() if self.fix else None,
        }


@dataclass
class Outcome:
    """What a check function returns.

    ``summary`` is the one line shown next to the check's mark.  ``data`` carries
    the numbers behind it, so JSON consumers get values rather than prose.
    """

    summary: str
    findings: list[Finding] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    applicable: bool = True

    @property
    def status(self) -> Status:
        if not self.applicable:
            return Status.NOT_APPLICABLE
        severities = {f.severity for f in self.findings}
        if Severity.PROBLEM in severities:
            return Status.PROBLEM
        if Severity.WARNING in severities:
            return Status.WARNING
        return Status.OK


def ok(summary: str, data: dict[str, Any] | None = None, findings: list[Finding] | None = None) -> Outcome:
    """All is well (informational findings allowed)."""
    return Outcome(summary, list(findings or []), dict(data or {}))


def worst_finding(findings: list[Finding]) -> Finding | None:
    """The first problem, else the first warning; None when there are only notes."""
    return next((f for f in findings if f.severity is Severity.PROBLEM), None) or next(
        (f for f in findings if f.severity is Severity.WARNING), None
    )


def judged(findings: list[Finding], data: dict[str, Any] | None, ok_summary: str) -> Outcome:
    """An outcome summarised by its worst finding, or ``ok_summary`` when every finding is a note."""
    worst = worst_finding(findings)
    return Outcome(worst.message if worst else ok_summary, list(findings), dict(data or {}))


def not_applicable(reason: str, data: dict[str, Any] | None = None) -> Outcome:
    """The check has nothing to judge here (no GPU, evidence not collected, gate not asked for)."""
    return Outcome(reason, [], dict(data or {}), applicable=False)


def problem(
    summary: str, fix: Fix | None = None, evidence: tuple[str, ...] | list[str] = (), data: dict[str, Any] | None = None
) -> Outcome:
    """A single problem finding whose message is also the summary."""
    return Outcome(summary, [Finding(Severity.PROBLEM, summary, fix, tuple(evidence))], dict(data or {}))


def warning(
    summary: str, fix: Fix | None = None, evidence: tuple[str, ...] | list[str] = (), data: dict[str, Any] | None = None
) -> Outcome:
    """A single warning finding whose message is also the summary."""
    return Outcome(summary, [Finding(Severity.WARNING, summary, fix, tuple(evidence))], dict(data or {}))


@dataclass
class CheckResult:
    """A check's outcome as the runner recorded it."""

    code: str
    area: str
    title: str
    status: Status
    summary: str
    findings: list[Finding] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    traceback: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "area": self.area,
            "title": self.title,
            "status": self.status.value,
            "summary": self.summary,
            "findings": [f.to_dict() for f in self.findings],
            "data": self.data,
            "duration_s": round(self.duration_s, 6),
            "traceback": self.traceback,
        }


EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


@dataclass
class Report:
    """Every check's result plus where the evidence came from."""

    results: list[CheckResult]
    source: dict[str, Any]
    machine: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for result in self.results:
            counts[result.status.value] += 1
        return counts

    def exit_code(self, fail_on: str = "problem") -> int:
        """0 clean (warnings allowed), 1 problems, 3 a check crashed and nothing worse was found."""
        statuses = {r.status for r in self.results}
        if Status.PROBLEM in statuses:
            return EXIT_PROBLEMS
        if fail_on == "warning" and Status.WARNING in statuses:
            return EXIT_PROBLEMS
        if Status.CRASHED in statuses:
            return EXIT_INTERNAL
        return EXIT_OK
