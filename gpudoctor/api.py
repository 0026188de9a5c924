"""The plugin API: how a check is declared.

Built-in checks (the ``gpudoctor_checks`` package, from ``checks/`` in the
source tree) use exactly this API and register through the same
``gpudoctor.checks`` entry-point group a third-party package would::

    # my_plugin.py, registered in pyproject.toml as
    # [project.entry-points."gpudoctor.checks"] mine = "my_plugin"
    from gpudoctor.api import check, ok, problem, Fix

    @check("MINE001", area="mine", title="Something about the machine")
    def something(facts, ctx):
        '''What it checks: ...

        Why it matters: ...

        How to fix: ...
        '''
        return ok("all good")

A check is a pure function of the facts (and the run's options in ``ctx``): it
never runs a command and never prints.  Its docstring is its documentation
(``gpudoctor explain CODE``) and must have the three sections above.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from gpudoctor.results import (
    Finding,
    Fix,
    Outcome,
    Severity,
    judged,
    not_applicable,
    ok,
    problem,
    warning,
    worst_finding,
)

__all__ = [
    "DOC_SECTIONS",
    "CheckContext",
    "CheckSpec",
    "Finding",
    "Fix",
    "Outcome",
    "Severity",
    "check",
    "info",
    "judged",
    "not_applicable",
    "ok",
    "problem",
    "warning",
    "worst_finding",
]

CODE_PATTERN = re.compile(r"^[A-Z][A-Z0-9]*[0-9]{3}$")
DOC_SECTIONS = ("What it checks:", "Why it matters:", "How to fix:")


@dataclass
class CheckContext:
    """What a check may know besides the facts: the run's options (gates, thresholds)."""

    options: dict[str, Any] = field(default_factory=dict)

    def option(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


@dataclass(frozen=True)
class CheckSpec:
    code: str
    area: str
    title: str
    func: Callable[[Any, CheckContext], Outcome]
    module: str

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "")


def check(code: str, *, area: str, title: str) -> Callable[[Callable[..., Outcome]], CheckSpec]:
    """Declare a check.  The decorated name becomes a :class:`CheckSpec` the registry finds."""
    if not CODE_PATTERN.match(code):
        raise ValueError(f"check code {code!r} must look like ABC123 (letters, then three digits)")

    def decorate(func: Callable[..., Outcome]) -> CheckSpec:
        return CheckSpec(code=code, area=area, title=title, func=func, module=func.__module__)

    return decorate


def info(message: str, fix: Fix | None = None, evidence: tuple[str, ...] | list[str] = ()) -> Finding:
    """An informational finding (does not change the check's status)."""
    return Finding(Severity.INFO, message, fix, tuple(evidence))


def finding(
    severity: Severity, message: str, fix: Fix | None = None, evidence: tuple[str, ...] | list[str] = ()
) -> Finding:
    return Finding(severity, message, fix, tuple(evidence))
