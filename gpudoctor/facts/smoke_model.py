"""Typed facts of a smoke run: real workloads on every accelerator and on the CPU, measured in one run.

The smoke probes (``gpudoctor/probes/smoke_torch.py``, ``smoke_tensorflow.py``) run in the target
Python like the framework probes and print one JSON document, stored as ``smoke.json``; it is
evidence like any other (``collect --smoke`` stores it, ``check --from`` replays it).

The JSON contract (``probe_version`` 1)::

    {
      "probe": "smoke", "probe_version": 1, "framework": "torch" | "tensorflow",
      "framework_version": "2.13.0+cpu",
      "python": {...the framework probes' python record...},
      "mode": "quick" | "full", "budget_s": 30.0, "elapsed_s": 12.3,
      "stopped_by": null | "interrupt" | "budget",      # why some workloads did not run
      "devices": [{"id": "cpu", "kind": "cpu", "name": "AMD EPYC 7B13", "threads": 2},
                  {"id": "cuda:0", "kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "capability": "9.0",
                   "memory_total_mib": 81559, "memory_free_mib": 80000, "pci_bus_id": "0000:01:00.0"}],
      "matmul": [{"device": "cuda:0", "dtype": "fp32" | "tf32" | "fp16" | "bf16", "n": 8192,
                  "repeats": 20, "seconds": 0.0123,       # median seconds of one n×n×n matmul
                  "tflops": 89.1, "error": null, "skipped": null | "why",
                  <measurement>, "threads": 2 | null}],   # threads: the CPU's intra-op threads (null on a GPU)
      "cnn": [{"device": "cpu", "precision": "fp32" | "amp", "batch": 64, "steps": 20,  # steps: all, warm-up too
               "seconds_per_step": 0.012,                # median over the timed samples
               "steps_per_s": 83.3, "loss_first": 2.31, "loss_last": 0.41, "loss_decreased": true,
               "error": null, "skipped": null, <measurement>, "threads": 2 | null}],
      "bandwidth": [{"device": "cuda:0", "direction": "h2d" | "d2h" | "d2d",
                     "memory": "pageable" | "pinned" | "device", "bytes": 268435456, "repeats": 10,
                     "gbps": 24.1,                       # median, GB/s with GB = 1e9 bytes
                     "error": null, "skipped": null, <measurement>}],
      "p2p": [{"src": "cuda:0", "dst": "cuda:1", "access": true, "gbps": 45.3, "error": null, "skipped": null}],
      "allreduce": {"backend": "nccl" | "gloo", "world_size": 2, "device_kind": "cuda" | "cpu",
                    "bytes": 67108864, "repeats": 10, "seconds": 0.05,     # median per all-reduce
                    "algbw_gbps": 1.3, "busbw_gbps": 1.3,                 # as nccl-tests defines them
                    "ddp_step_s": 0.05, "ddp_loss_decreased": true,
                    "error": null, "skipped": null} | null,
      "errors": {question: error text}, "probe_error": null | traceback tail
    }

``<measurement>`` (how the figure was measured, ``gpudoctor/probes/_smoke_measure.py``): ``"repeats"`` (timed
samples), ``"warmup"`` (warm-up samples before them), ``"warmup_settled"`` (two warm-up samples agreed, rather
than the warm-up cap ending it), ``"spread"`` ((p75 - p25) / median of the samples), ``"ended_by"`` ("target":
the spread was small; "max": the repetitions cap; "time": the workload's window) and ``"ops_per_sample"``;
CPU workloads add ``"cpu_share"``: the process's CPU seconds over threads × wall seconds (1.0: its threads
ran all the time; well below: other processes had the CPUs, and the CPU figure is the share it got).
Older probes leave them out (None).

Progress while it runs: lines on the probe's stderr of the form
``@@gpudoctor-progress {"stage": "matmul", "detail": "cuda:0 fp16", "done": 3, "total": 12}``
(written by ``gpudoctor/probes/_probe_common.py``'s ``progress``); the parent draws them, everything else on stderr is log.

``None`` means not measured; a workload that could not run has ``skipped`` (budget, unsupported
dtype, no second GPU...) or ``error`` (it raised: the text, verbatim).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.facts.framework_model import ProbeRun, PythonTarget

# The protocol's constants have their one home in gpudoctor.probes.protocol; named here for this model's readers.
from gpudoctor.probes.protocol import PROGRESS_PREFIX as PROGRESS_PREFIX
from gpudoctor.probes.protocol import SMOKE_FILE as SMOKE_FILE


@dataclass(frozen=True)
class SmokeDevice:
    id: str  # "cpu", "cuda:0"
    kind: str  # "cpu", "cuda", "rocm", "mps"...
    name: str | None = None
    capability: str | None = None
    memory_total_mib: int | None = None
    memory_free_mib: int | None = None
    pci_bus_id: str | None = None
    threads: int | None = None

    @property
    def accelerator(self) -> bool:
        return self.kind != "cpu"


@dataclass(frozen=True)
class MatmulResult:
    device: str
    dtype: str
    n: int | None = None
    repeats: int | None = None
    seconds: float | None = None
    tflops: float | None = None
    error: str | None = None
    skipped: str | None = None
    spread: float | None = None  # (p75 - p25) / median of the timed samples
    warmup: int | None = None
    threads: int | None = None  # the CPU's intra-op threads (None on a GPU)
    cpu_share: float | None = None  # CPU seconds / (threads × wall seconds): < 1 on a busy machine


@dataclass(frozen=True)
class CnnResult:
    device: str
    precision: str
    batch: int | None = None
    steps: int | None = None
    seconds_per_step: float | None = None
    steps_per_s: float | None = None
    loss_first: float | None = None
    loss_last: float | None = None
    loss_decreased: bool | None = None
    error: str | None = None
    skipped: str | None = None
    repeats: int | None = None  # timed samples (``steps`` counts every step, warm-up too)
    spread: float | None = None
    warmup: int | None = None
    threads: int | None = None
    cpu_share: float | None = None


@dataclass(frozen=True)
class BandwidthResult:
    device: str
    direction: str  # "h2d", "d2h", "d2d"
    memory: str  # "pageable", "pinned", "device"
    bytes: int | None = None
    repeats: int | None = None
    gbps: float | None = None
    error: str | None = None
    skipped: str | None = None
    spread: float | None = None
    warmup: int | None = None


@dataclass(frozen=True)
class P2pResult:
    src: str
    dst: str
    access: bool | None = None
    gbps: float | None = None
    error: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class AllreduceResult:
    backend: str | None = None
    world_size: int | None = None
    device_kind: str | None = None
    bytes: int | None = None
    repeats: int | None = None
    seconds: float | None = None
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    ddp_step_s: float | None = None
    ddp_loss_decreased: bool | None = None
    error: str | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class SmokeFacts:
    run: ProbeRun = field(default_factory=ProbeRun)
    framework: str | None = None
    framework_version: str | None = None
    python: PythonTarget | None = None
    mode: str | None = None
    budget_s: float | None = None
    elapsed_s: float | None = None
    stopped_by: str | None = None
    devices: list[SmokeDevice] = field(default_factory=list)
    matmul: list[MatmulResult] = field(default_factory=list)
    cnn: list[CnnResult] = field(default_factory=list)
    bandwidth: list[BandwidthResult] = field(default_factory=list)
    p2p: list[P2pResult] = field(default_factory=list)
    allreduce: AllreduceResult | None = None
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def accelerators(self) -> list[SmokeDevice]:
        return [d for d in self.devices if d.accelerator]
