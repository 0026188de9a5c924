"""What the SMOKE checks share: which physical GPU a smoke device is, its spec sheet, its PCIe link now, words.

A smoke device ("cuda:0") is the framework's numbering; nvidia-smi, sysfs and the topology matrix use
the PCI address and nvidia-smi's index, which differ under CUDA_VISIBLE_DEVICES or CUDA's
fastest-first order.  The smoke probe reports each device's PCI bus id, and that is what joins them;
without it the only safe join is a machine with one GPU (or GPUs that are all alike).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from gpudoctor import kb
from gpudoctor.api import Finding, Fix, Severity, not_applicable
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.gpu_state import GpuState
from gpudoctor.facts.model import GpuInfo
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.smoke_model import BandwidthResult, CnnResult, MatmulResult, SmokeDevice, SmokeFacts
from gpudoctor.facts.topology_model import TopoGpu
from gpudoctor.results import Outcome
from gpudoctor.words import counted

if TYPE_CHECKING:
    from gpudoctor.kb.gpu_specs import GpuSpec

EVIDENCE = (Ev.SMOKE,)
RUN_IT = "run `gpudoctor smoke` or `gpudoctor check --smoke`"
LABELS = {"torch": "PyTorch", "tensorflow": "TensorFlow"}
BELOW_SPEC = 0.5  # a measurement below half of what the hardware is built for is a finding
SMALL_MATMUL = 4096  # below this n a big GPU is not kept busy by one matmul
BUSY_CPU_SHARE = 0.75  # a CPU workload that got less of its threads' CPU time than this ran on a busy machine


def finding(severity: Severity, message: str, fix: Fix | None = None) -> Finding:
    """A finding that cites the smoke run as its evidence."""
    return Finding(severity, message, fix, EVIDENCE)


def one_line(text: str, limit: int = 300) -> str:
    """The last non-blank line of an error or output tail, cut to ``limit`` characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class _Measured(Protocol):
    @property
    def error(self) -> str | None: ...


MeasuredT = TypeVar("MeasuredT", bound=_Measured)


def best(rows: Sequence[MeasuredT], value: Callable[[MeasuredT], float | None]) -> MeasuredT | None:
    """The row with the highest measured ``value`` among those that ran without error, else None."""
    measured = [(figure, row) for row in rows if (figure := value(row)) is not None and not row.error]
    return max(measured, key=lambda pair: pair[0])[1] if measured else None


# --------------------------------------------------------------------------- was there a run at all


def not_run(smoke: SmokeFacts) -> Outcome | None:
    """Not applicable when no smoke run is in the evidence."""
    if smoke.run.status == "not_collected":
        return not_applicable(f"no smoke workloads in the evidence ({RUN_IT})", {"status": "not_collected"})
    return None


def no_measurements(smoke: SmokeFacts, what: str) -> Outcome | None:
    """Not applicable when the run could not measure anything (SMOKE001 says why)."""
    skipped = not_run(smoke)
    if skipped is not None:
        return skipped
    if smoke.run.status not in ("ok", "timed_out"):
        return not_applicable(f"the smoke run did not measure {what} (see SMOKE001)", {"status": smoke.run.status})
    return None


def stopped_note(smoke: SmokeFacts) -> str:
    words = {"interrupt": "it was interrupted", "budget": "its time budget ran out", "timeout": "it timed out"}
    return f" (the run stopped early: {words[smoke.stopped_by]})" if smoke.stopped_by in words else ""


# --------------------------------------------------------------------------- devices and numbers


def cpu_threads(smoke: SmokeFacts) -> int | None:
    """The intra-op threads the CPU baseline ran with: from its workloads, else the CPU device's record."""
    rows: list[MatmulResult | CnnResult] = [*smoke.matmul, *smoke.cnn]
    for row in rows:
        if row.device == "cpu" and row.threads:
            return row.threads
    found = device(smoke, "cpu")
    return found.threads if found is not None else None


def threads_words(smoke: SmokeFacts) -> str:
    """ "on 2 threads" for the CPU baseline, or nothing when unknown."""
    count = cpu_threads(smoke)
    return f"on {counted(count, 'thread')}" if count else ""


def cpu_share(smoke: SmokeFacts) -> float | None:
    """The share of its threads' CPU time the CPU matmul got (None: not measured).

    The matmul's, because it keeps every thread busy: a CNN step has single-threaded parts where idle
    threads sleep, so its share is below 1 on an idle machine too.
    """
    shares = [
        r.cpu_share
        for r in smoke.matmul
        if r.device == "cpu" and r.cpu_share is not None and not r.skipped and not r.error
    ]
    return min(shares) if shares else None


def busy_cpu_note(smoke: SmokeFacts) -> str:
    """ "; the CPU baseline got 40 % of ..." when other processes had the CPUs while it ran, else nothing."""
    share = cpu_share(smoke)
    if share is None or share >= BUSY_CPU_SHARE:
        return ""
    return (
        f"; the CPU baseline got only {share * 100:.0f} % of its threads' CPU time (other processes were busy): "
        "its figures are low and the speed-ups high"
    )


def measurements(smoke: SmokeFacts) -> dict[str, list[dict[str, object]]]:
    """Every figure with how it was measured (median, spread, repetitions, warm-up, threads), per test and dtype.

    The JSON report's record of the run's figures; a workload that did not run says why (skipped, error).
    """

    def how(row: MatmulResult | CnnResult | BandwidthResult) -> dict[str, object]:
        return {
            "spread": row.spread,
            "repeats": row.repeats,
            "warmup": row.warmup,
            "skipped": row.skipped,
            "error": one_line(row.error) if row.error else None,
        }

    return {
        "matmul": [
            {
                "device": r.device,
                "dtype": r.dtype,
                "n": r.n,
                "tflops": r.tflops,
                "threads": r.threads,
                "cpu_share": r.cpu_share,
                **how(r),
            }
            for r in smoke.matmul
        ],
        "cnn": [
            {
                "device": r.device,
                "precision": r.precision,
                "batch": r.batch,
                "steps_per_s": r.steps_per_s,
                "threads": r.threads,
                "cpu_share": r.cpu_share,
                **how(r),
            }
            for r in smoke.cnn
        ],
        "bandwidth": [
            {"device": r.device, "direction": r.direction, "memory": r.memory, "gbps": r.gbps, **how(r)}
            for r in smoke.bandwidth
        ],
    }


def device(smoke: SmokeFacts, device_id: str) -> SmokeDevice | None:
    return next((d for d in smoke.devices if d.id == device_id), None)


def device_words(smoke: SmokeFacts, device_id: str) -> str:
    """ "cuda:0 (NVIDIA H100 80GB HBM3)", or the id alone when the run did not name it."""
    found = device(smoke, device_id)
    return f"{device_id} ({found.name})" if found is not None and found.name else device_id


def accelerator_ids(smoke: SmokeFacts) -> list[str]:
    ids = [d.id for d in smoke.accelerators]
    # Results for a device the "devices" list lacks (a cut record) still count when the id says GPU.
    measured = [r.device for r in smoke.matmul] + [r.device for r in smoke.cnn] + [r.device for r in smoke.bandwidth]
    for device_id in measured:
        if device_id not in ids and device_id != "cpu" and device(smoke, device_id) is None:
            ids.append(device_id)
    return ids


def times(ratio: float) -> str:
    """380.4 -> "380×", 4.26 -> "4.3×", 0.5 -> "0.5×"."""
    return f"{ratio:.0f}×" if ratio >= 10 else f"{ratio:.1f}×"


def number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "?"
    text = f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return f"{text} {unit}".rstrip()


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%"


# --------------------------------------------------------------------------- joining to the machine's facts


def gpu_for_device(facts: Facts, found: SmokeDevice | None) -> GpuInfo | None:
    """The driver's record (GpuInfo) of the physical GPU behind a smoke device, or None."""
    gpus = list(facts.gpus)
    bus = normalize_bus_id(found.pci_bus_id if found is not None else None)
    if bus:
        match = next((g for g in gpus if g.bus_id and normalize_bus_id(g.bus_id) == bus), None)
        if match is not None:
            return match
    if len(gpus) == 1:
        return gpus[0]
    # Several GPUs and no address: only when they are indistinguishable is any of them the answer.
    shapes = {(g.name, g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max) for g in gpus}
    return gpus[0] if gpus and len(shapes) == 1 and not bus else None


def spec_for(facts: Facts, found: SmokeDevice | None) -> GpuSpec | None:
    """The spec sheet for a smoke device: by the framework's name, else by the driver's."""
    spec = kb.gpu_spec_for_name(found.name if found is not None else None)
    if spec is None:
        gpu = gpu_for_device(facts, found)
        spec = kb.gpu_spec_for_name(gpu.name) if gpu is not None else None
    return spec


def state_for(facts: Facts, found: SmokeDevice | None) -> GpuState | None:
    gpu = gpu_for_device(facts, found)
    bus = normalize_bus_id(
        (gpu.bus_id if gpu is not None else None) or (found.pci_bus_id if found is not None else None)
    )
    all_states = facts.gpu_states
    if bus:
        match = next((s for s in all_states if s.bus_id == bus), None)
        if match is not None:
            return match
    if gpu is not None and gpu.index is not None:
        match = next((s for s in all_states if s.index == gpu.index), None)
        if match is not None:
            return match
    return all_states[0] if len(all_states) == 1 else None


def smi_index(facts: Facts, found: SmokeDevice | None) -> int | None:
    gpu = gpu_for_device(facts, found)
    return gpu.index if gpu is not None else None


# --------------------------------------------------------------------------- the PCIe link


@dataclass
class Link:
    gen_now: int | None
    width_now: int | None
    gen_max: int | None
    width_max: int | None
    source: str  # "nvidia-smi/NVML", "sysfs", "spec sheet" or "instance type"
    numa_node: int | None = None
    # Why this link is the one judged against, when it is not the one the evidence read ("instance type").
    note: str | None = None

    @property
    def rate_now(self) -> float | None:
        return kb.pcie_rate_gbps(self.gen_now, self.width_now)

    @property
    def rate_max(self) -> float | None:
        return kb.pcie_rate_gbps(self.gen_max, self.width_max)

    @property
    def rate_at_full_speed(self) -> float | None:
        """The link's rate once it has trained up to full speed at its present width (GPUs slow an idle link)."""
        return kb.pcie_rate_gbps(self.gen_max or self.gen_now, self.width_now)

    def words(self, gen: int | None = None, width: int | None = None) -> str:
        gen = self.gen_now if gen is None else gen
        width = self.width_now if width is None else width
        return f"Gen{gen} x{width}" if gen and width else "unknown"


def topo_gpu_for(facts: Facts, found: SmokeDevice | None) -> TopoGpu | None:
    """The merged topology's record (TopoGpu) of the physical GPU behind a smoke device, or None."""
    gpu = gpu_for_device(facts, found)
    bus = normalize_bus_id(
        (gpu.bus_id if gpu is not None else None) or (found.pci_bus_id if found is not None else None)
    )
    gpus = facts.machine_topology.gpus
    if bus:
        match = next((g for g in gpus if g.bus_id and normalize_bus_id(g.bus_id) == bus), None)
        if match is not None:
            return match
    if gpu is not None and gpu.index is not None:
        return next((g for g in gpus if g.index == gpu.index), None)
    return None


def link_for(facts: Facts, found: SmokeDevice | None) -> Link | None:
    """The PCIe link of the GPU behind a smoke device as the evidence saw it (NVML / nvidia-smi, else sysfs)."""
    gpu = topo_gpu_for(facts, found)
    if gpu is None:
        return _bus_link(facts, found)
    link = gpu.pcie
    if not link.gen_current or not link.width_current:
        return Link(None, None, None, None, "unknown", gpu.numa_node) if gpu.numa_node is not None else None
    return Link(
        link.gen_current,
        link.width_current,
        link.gen_max,
        link.width_max,
        "sysfs" if link.source == "sysfs" else "nvidia-smi",
        gpu.numa_node,
    )


def _bus_link(facts: Facts, found: SmokeDevice | None) -> Link | None:
    """Another vendor's GPU (AMD through ROCm, whose devices torch names cuda:N): its link from the PCI scan."""
    bus = normalize_bus_id(found.pci_bus_id if found is not None else None)
    functions = [d for d in facts.pci_accelerators if d.vendor_id != "10de"]
    device = next((d for d in functions if bus and d.address == bus), None)
    if device is None and not bus and len(functions) == 1:
        device = functions[0]
    if device is None:
        return None
    return Link(
        kb.pcie_gen_for_speed(device.current_link_speed),
        device.current_link_width,
        kb.pcie_gen_for_speed(device.max_link_speed),
        device.max_link_width,
        "sysfs",
        device.numa_node,
    )


def link_or_spec(facts: Facts, found: SmokeDevice | None) -> Link | None:
    """The link as the evidence saw it, else the link the product is built for (its spec sheet)."""
    link = link_for(facts, found)
    if link is not None and link.rate_now is not None:
        return link
    spec = spec_for(facts, found)
    if spec is None or spec.pcie_rate_gbps is None:
        return None
    return Link(
        spec.pcie_gen,
        spec.pcie_width,
        spec.pcie_gen,
        spec.pcie_width,
        "spec sheet",
        link.numa_node if link is not None else None,
    )


def numa_nodes(facts: Facts) -> set[int]:
    nodes = {d.numa_node for d in facts.pci_devices if d.numa_node is not None}
    return nodes | {g.numa_node for g in facts.machine_topology.gpus if g.numa_node is not None}


def numa_node_of(facts: Facts, found: SmokeDevice | None) -> int | None:
    gpu = topo_gpu_for(facts, found)
    return gpu.numa_node if gpu is not None else None
