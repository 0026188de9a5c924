"""The fleet report's typed model: what ``fleet report`` computes from many node reports, and what every
renderer (text, JSON, Markdown, HTML) reads.  Nothing here reads files or decides anything.

A node report is boiled down to a :class:`NodeSummary` as it is read (the reports themselves are never
all held at once); the aggregate is computed from the summaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NodeProblem:
    """One check that found a problem (or warning) on a node, in the words of its first finding."""

    code: str
    area: str
    severity: str  # "problem" or "warning"; "crashed" for a check that crashed (message says so)
    message: str
    cause: str | None  # the root-cause id, when the finding named one
    fix: str | None  # the fix's summary
    command: str | None  # the fix's first command, if any


@dataclass(frozen=True)
class Measurement:
    """One smoke figure of one GPU model on a node: "matmul bf16 TFLOP/s" = 701.8 (higher is better)."""

    metric: str
    value: float
    unit: str
    # Added by the fleet report: which device gave the figure ("cuda:3"; the node's slowest GPU), if known.
    device: str | None = None


@dataclass
class NodeSummary:
    """What the fleet report keeps of one node's report."""

    node: str
    source: str  # the file it was read from
    exit_code: int | None
    worst: str  # "ok", "warning", "problem", "crashed", "unknown"
    areas: dict[str, str]  # area -> worst status of its checks (not_applicable left out)
    problems: list[NodeProblem]
    # Configuration, for drift within a group of identical nodes: "driver", "cuda_driver_max", "torch",
    # "tensorflow", "cuda_toolkit", "os", "kernel", "pcie" ("Gen4 x16 ×8" style summary) ...; missing = unknown.
    config: dict[str, str]
    gpu_model: str | None  # "NVIDIA H100 80GB HBM3", None when the report names no GPU
    gpu_count: int
    measurements: list[Measurement] = field(default_factory=list)

    @property
    def hardware(self) -> str:
        """The group key of identical nodes: GPU model × count ("8× NVIDIA H100 80GB HBM3", "no GPU")."""
        if not self.gpu_model:
            return "no GPU"
        return f"{self.gpu_count}× {self.gpu_model}"


@dataclass(frozen=True)
class Unreadable:
    """A file given to ``fleet report`` that is not a node report, and why (it is listed, never fatal)."""

    source: str
    why: str


@dataclass(frozen=True)
class ProblemGroup:
    """Nodes with the same problem: "12 nodes: DRV002 driver 550 / library 555 mismatch → reboot"."""

    code: str
    severity: str
    message: str
    cause: str | None
    fix: str | None
    command: str | None
    nodes: list[str]


@dataclass(frozen=True)
class Drift:
    """A configuration value that differs within a group of identical nodes: the usual value and the odd ones."""

    hardware: str
    key: str
    usual: str  # the value most nodes of the group have
    usual_count: int
    odd: dict[str, list[str]]  # other value -> nodes with it


@dataclass(frozen=True)
class Outlier:
    """A node whose smoke figure is below its GPU model's median by more than the robust threshold."""

    node: str
    hardware: str
    metric: str
    unit: str
    value: float
    median: float
    mad: float
    robust_z: float  # (value - median) / (1.4826 · MAD); negative is slower
    peers: int  # nodes of the same hardware with this metric


@dataclass
class FleetReport:
    nodes: list[NodeSummary]
    unreadable: list[Unreadable]
    problem_groups: list[ProblemGroup]
    drift: list[Drift]
    outliers: list[Outlier]
    areas: list[str]  # the table's columns, in the areas' order
    missing: list[tuple[str, str]] = field(default_factory=list)  # (node, why) from fleet-missing.json files

    @property
    def exit_code(self) -> int:
        """0 every node clean; 1 a node has a problem, did not answer, is an outlier or a file was unreadable."""
        if self.missing or self.unreadable or self.outliers:
            return 1
        return 1 if any(n.worst in ("problem", "crashed", "unknown") for n in self.nodes) else 0
