"""The result model: what a check says about the machine.

Checks return an :class:`Outcome`; the runner turns it into a :class:`CheckResult`
(adding the code, timing and status).  A :class:`Report` holds every result, where
the evidence came from, a summary of the machine, and its own "next step".
Renderers read only these types, so the JSON output is a direct, versioned image
of them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, TypedDict, Union

from gpudoctor.areas import ordered_keys

if TYPE_CHECKING:
    from gpudoctor.facts.model import GpuInfo
    from gpudoctor.report_json import FindingJson, FixJson, NextStepJson, ResultJson


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
    # Every warning or problem it found follows from another check's finding, shown there (runner_folding).
    CONSEQUENCE = "consequence"


@dataclass(frozen=True)
class Fix:
    """What to do about a finding: the exact commands to type."""

    summary: str
    commands: tuple[str, ...] = ()
    needs_root: bool = False
    url: str | None = None

    def to_dict(self) -> FixJson:
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
    # The root cause this finding names, an id of the causes table (gpudoctor.kb.causes); "" when the
    # check names none.  Findings naming the same cause, or one the first cause leads to, are folded
    # under the first as its consequences (gpudoctor.runner), so one cause is one problem.
    cause: str = ""
    # Other causes that fit the same evidence, most likely first (the error-signature catalogue ranks them).
    other_causes: tuple[str, ...] = ()
    # The evidence line(s) that gave it away, as found (renderers escape it: it is user data).
    quote: str = ""
    # Set by the runner on a finding folded under another: that finding's check code.
    consequence_of: str = ""

    def __post_init__(self) -> None:
        # Checks cite typed evidence keys (str subclasses); the result keeps their plain file names, so the
        # report compares, pickles and serialises the same whichever way a plugin named its evidence.
        object.__setattr__(self, "evidence", tuple(str(name) for name in self.evidence))

    def to_dict(self) -> FindingJson:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "evidence": list(self.evidence),
            "fix": self.fix.to_dict() if self.fix else None,
            "cause": self.cause or None,
            "other_causes": list(self.other_causes),
            "quote": self.quote or None,
            "consequence_of": self.consequence_of or None,
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
    summary: str,
    fix: Fix | None = None,
    evidence: Sequence[str] = (),
    data: dict[str, Any] | None = None,
    cause: str = "",
) -> Outcome:
    """A single problem finding whose message is also the summary."""
    return Outcome(summary, [Finding(Severity.PROBLEM, summary, fix, tuple(evidence), cause=cause)], dict(data or {}))


def warning(
    summary: str,
    fix: Fix | None = None,
    evidence: Sequence[str] = (),
    data: dict[str, Any] | None = None,
    cause: str = "",
) -> Outcome:
    """A single warning finding whose message is also the summary."""
    return Outcome(summary, [Finding(Severity.WARNING, summary, fix, tuple(evidence), cause=cause)], dict(data or {}))


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

    def to_dict(self) -> ResultJson:
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


def group_by_area(results: Iterable[CheckResult]) -> list[tuple[str, list[CheckResult]]]:
    """Results grouped by area in the areas table's order (plugin areas after, in order of first
    appearance); checks keep their run order within an area."""
    groups: dict[str, list[CheckResult]] = {}
    for result in results:
        groups.setdefault(result.area, []).append(result)
    return [(area, groups[area]) for area in ordered_keys(list(groups))]


@dataclass(frozen=True)
class NextStep:
    """The fix to do first: which check asks for it, what it found, and the fix."""

    code: str
    message: str
    fix: Fix

    def to_dict(self) -> NextStepJson:
        return {"code": self.code, "message": self.message, "fix": self.fix.to_dict()}


# The area of the preflight gates (--require-gpu, --min-gpu-memory, ...): the requirements the user stated.
GATES_AREA = "gates"


def next_step(results: Iterable[CheckResult]) -> NextStep | None:
    """The failed gate the user asked to be judged on, else the first problem (else warning) with a fix,
    reading the stack bottom-up.

    Area order is the order in which things depend on each other (bus, driver, NVML, ...), so the
    first fixable finding is usually the cause of the findings after it.  A failed gate comes first all
    the same: it is the verdict the user asked for, and its fix says what would meet it.
    """
    results = list(results)
    for result in results:
        if result.area != GATES_AREA:
            continue
        for finding in result.findings:
            if finding.severity is Severity.PROBLEM and finding.fix is not None:
                return NextStep(result.code, finding.message, finding.fix)
    groups = group_by_area(results)
    for wanted in (Severity.PROBLEM, Severity.WARNING):
        for _, area_results in groups:
            for result in area_results:
                for finding in result.findings:
                    if finding.severity is wanted and finding.fix is not None:
                        return NextStep(result.code, finding.message, finding.fix)
    return None


# ---------------------------------------------------------------- where and what the machine is
# Part of the JSON report (gpudoctor.report_json): Optional, not X | None, because the report's schema
# is generated from these annotations at run time, on Python 3.9 too.


class _SourceKind(TypedDict):
    kind: str  # "live" or "snapshot"


class ReportSource(_SourceKind, total=False):
    """Where the evidence came from: ``{"kind": "live"}`` or ``{"kind": "snapshot", "path": ...}``."""

    path: Optional[str]


class GpuRecord(TypedDict, total=False):
    """One GPU as the report's machine summary (and GPU001's data) lists it."""

    index: Optional[int]
    name: Optional[str]
    bus_id: Optional[str]
    uuid: Optional[str]
    memory_total_mib: Optional[int]
    compute_capability: Optional[str]
    compute_capability_source: Optional[str]
    architecture: Optional[str]
    compute_mode: Optional[str]
    persistence_mode: Optional[bool]
    mig_mode: Optional[str]
    mig_devices: int
    cuda_driver_max: Optional[str]


class AcceleratorRecord(TypedDict, total=False):
    """One accelerator of another vendor than NVIDIA (AMD, Intel, Apple, Google TPU), as the summary lists it."""

    vendor: str  # "amd", "intel", "apple", "google"
    name: Optional[str]
    architecture: Optional[str]  # "gfx90a", "v4"
    memory_total_mib: Optional[int]
    bus_id: Optional[str]
    driver_sees: bool  # False: only the PCI bus shows it


class PythonSummary(TypedDict):
    """The interpreter whose frameworks were probed, and why that one."""

    executable: Optional[str]
    version: Optional[str]
    how: Optional[str]


class FactsSeen(TypedDict):
    """The versions and GPU names the evidence states (lists of distinct values as written)."""

    gpu_names: list[str]
    driver_versions: list[str]
    cuda_driver_versions: list[str]
    cuda_runtime_versions: list[str]
    torch_versions: list[str]
    torch_cuda_versions: list[str]
    tensorflow_versions: list[str]
    cudnn_versions: list[str]


class PlatformSummary(TypedDict):
    """Where the machine runs: its cloud instance and what its type should have, the notebook platform, the
    container image; a value is None where it is not known."""

    provider: Optional[str]  # "aws"
    provider_name: Optional[str]  # "AWS"
    instance_type: Optional[str]  # "g5.xlarge"
    expected: Optional[str]  # what the type should show: "1× NVIDIA A10G 24 GB"; None when the kb lacks the type
    notebook: Optional[str]  # "Google Colab"
    image: Optional[str]  # "NGC PyTorch 24.01"


class MachineSummary(TypedDict, total=False):
    """The machine in a few values; every key is optional (a snapshot may lack any of them)."""

    os: Optional[str]
    kernel: Optional[str]
    gpus: list[GpuRecord]
    # Whether ``gpus`` is an established list: False when no source that lists GPUs was read, so an empty
    # list means "not known", not "none".  Reports without the key predate it: read them as True.
    gpus_known: bool
    gpus_on_bus: Optional[int]  # None when the PCI bus was not read
    # Other vendors' accelerators (NVIDIA's are ``gpus``), and their stacks' versions ({"rocm": "6.1.2"}).
    accelerators: list[AcceleratorRecord]
    accelerator_stacks: dict[str, str]
    driver_version: Optional[str]
    cuda_driver_max: Optional[str]
    container: Optional[str]
    wsl: Union[int, str, None]
    collect_duration_s: Optional[float]
    python: Optional[PythonSummary]
    platform: Optional[PlatformSummary]  # None: nothing says it is a cloud instance, a notebook or a known image
    # Every version and GPU name the evidence states, structured sources first, then free text (facts.stated).
    facts_seen: FactsSeen
    error: str  # building the summary failed: the checks already say why


def gpu_record(gpu: GpuInfo, cuda_driver_max: str | None) -> GpuRecord:
    """What a report says about one GPU: identity, memory, compute capability and modes."""
    return {
        "index": gpu.index,
        "name": gpu.name,
        "bus_id": gpu.bus_id,
        "uuid": gpu.uuid,
        "memory_total_mib": gpu.memory_total_mib,
        "compute_capability": gpu.compute_capability,
        "compute_capability_source": gpu.compute_capability_source,
        "architecture": gpu.architecture,
        "compute_mode": gpu.compute_mode,
        "persistence_mode": gpu.persistence_mode,
        "mig_mode": gpu.mig_mode_current,
        "mig_devices": len(gpu.mig_devices),
        "cuda_driver_max": cuda_driver_max,
    }


EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


@dataclass
class Report:
    """Every check's result, where the evidence came from, and gpudoctor's own failures.

    ``internal_errors`` are failures of gpudoctor itself that are not a check's (a plugin that
    failed to import): they are reported and make the run exit 3 unless something worse was found.
    """

    results: list[CheckResult]
    source: ReportSource
    machine: MachineSummary = field(default_factory=lambda: MachineSummary())
    sections: dict[str, Any] = field(default_factory=dict)  # JSON-ready values, keyed by section name
    internal_errors: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {s.value: 0 for s in Status}
        for result in self.results:
            counts[result.status.value] += 1
        return counts

    def next_step(self) -> NextStep | None:
        """The fix to do first (see :func:`next_step`)."""
        return next_step(self.results)

    def exit_code(self, fail_on: str = "problem") -> int:
        """0 clean (warnings allowed), 1 problems, 3 a check crashed or gpudoctor failed, nothing worse found."""
        statuses = {r.status for r in self.results}
        if Status.PROBLEM in statuses:
            return EXIT_PROBLEMS
        if fail_on == "warning" and Status.WARNING in statuses:
            return EXIT_PROBLEMS
        if Status.CRASHED in statuses or self.internal_errors:
            return EXIT_INTERNAL
        return EXIT_OK
