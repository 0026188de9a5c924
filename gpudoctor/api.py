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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypedDict

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

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
    "CheckOptions",
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


class CheckOptions(TypedDict, total=False):
    """The run's options a check may read: the preflight gates (``check --require-gpu`` ...)."""

    require_gpu: bool
    min_gpus: int | None
    min_compute_capability: str | None  # "8.0"
    min_gpu_memory: float | None  # GiB
    min_driver: str | None  # "535.104.05"
    cuda: str | None  # "12.4"


@dataclass
class CheckContext:
    """What a check may know besides the facts: the run's options (gates, thresholds)."""

    options: CheckOptions = field(default_factory=lambda: CheckOptions())

    def option(self, name: str, default: Any = None) -> Any:
        """One option by name, ``default`` when unset.  Typed as Any because a plugin may ask for
        a name of its own; the built-in names and their types are :class:`CheckOptions`."""
        values: Mapping[str, object] = self.options
        value = values.get(name)
        return default if value is None else value


# A check: a pure function of the facts and the run's context.
CheckFunction = Callable[["Facts", CheckContext], Outcome]


@dataclass(frozen=True)
class CheckSpec:
    code: str
    area: str
    title: str
    func: CheckFunction
    module: str
    # A vendor plugin's check ("amd", "intel", "apple", "google") runs only where the evidence names that vendor
    # (gpudoctor.facts.vendor_presence); elsewhere it is not applicable, and the vendor's model is never loaded.
    vendor: str | None = None

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "")


def check(
    code: str, *, area: str, title: str, vendor: str | None = None
) -> Callable[[Callable[..., Outcome]], CheckSpec]:
    """Declare a check.  The decorated name becomes a :class:`CheckSpec` the registry finds.

    ``vendor`` ("amd", "intel", "apple", "google"): the check judges that vendor's accelerators, and is not
    applicable where nothing in the evidence names the vendor."""
    if not CODE_PATTERN.match(code):
        raise ValueError(f"check code {code!r} must look like ABC123 (letters, then three digits)")

    def decorate(func: Callable[..., Outcome]) -> CheckSpec:
        return CheckSpec(code=code, area=area, title=title, func=func, module=func.__module__, vendor=vendor)

    return decorate


def info(message: str, fix: Fix | None = None, evidence: Sequence[str] = ()) -> Finding:
    """An informational finding (does not change the check's status)."""
    return Finding(Severity.INFO, message, fix, tuple(evidence))


def finding(severity: Severity, message: str, fix: Fix | None = None, evidence: Sequence[str] = ()) -> Finding:
    return Finding(severity, message, fix, tuple(evidence))
