"""The machine's topology as facts: how each GPU reaches the CPU, the other GPUs and the NICs.

One merged view (``MachineTopology``) built from every source that says something about it:
NVML (links, P2P, common ancestor, NVLink state per link), ``nvidia-smi topo -m`` / ``topo -p2p r``,
``nvidia-smi -q -x`` and sysfs (PCIe link speed and width), ``nvidia-smi nvlink -s``, the process's
CPU affinity and the NUMA nodes.  The checks (``TOPO*``), ``gpudoctor topo`` and its SVG all read
this one model, so they never disagree.  ``None`` is "unknown", never "no".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Path kinds of ``nvidia-smi topo -m``, nearest first.  "NV#" is a bonded set of # NVLinks.
PCIE_PATHS = ("PIX", "PXB", "PHB", "NODE", "SYS")
PATH_MEANING = {
    "X": "itself",
    "PIX": "at most one PCIe bridge",
    "PXB": "several PCIe bridges, no host bridge",
    "PHB": "through a PCIe host bridge (the CPU)",
    "NODE": "between PCIe host bridges of one NUMA node",
    "SYS": "across the NUMA interconnect (QPI/UPI/xGMI) between CPU sockets",
    "SOC": "across CPU sockets (older drivers' name for SYS)",
    "NV": "a bonded set of NVLinks",
}


def nvlink_count(path: str | None) -> int | None:
    """The number of NVLinks a topo cell names ("NV12" -> 12); None for a PCIe path or nothing."""
    match = re.fullmatch(r"NV(\d{1,2})", path or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class TopoMatrix:
    """What ``nvidia-smi topo -m`` printed, read as is.

    Devices are named by their column labels: "GPU0", "NIC3".  ``links`` holds both orders of every
    pair that had a readable cell.  ``nic_names`` comes from the "NIC Legend" ("NIC0" -> "mlx5_0").
    """

    gpus: list[int] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)  # "NIC0", ... in column order
    nic_names: dict[str, str] = field(default_factory=dict)
    links: dict[tuple[str, str], str] = field(default_factory=dict)  # ("GPU0", "NIC1") -> "PIX"
    cpu_affinity: dict[int, str] = field(default_factory=dict)  # GPU -> "0-13,28-41" ("" = printed empty)
    numa_affinity: dict[int, int] = field(default_factory=dict)  # GPU -> NUMA node
    gpu_numa_id: dict[int, int] = field(default_factory=dict)  # GPU -> "GPU NUMA ID" column (Grace/C2C)
    has_legend: bool = False
    complete: bool = True  # False when rows were missing or cells unreadable (excerpts, garbled pastes)
    error: str | None = None  # nvidia-smi's own error line, when it printed one instead of a matrix

    def link(self, a: str, b: str) -> str | None:
        return self.links.get((a, b)) or self.links.get((b, a))

    def gpu_link(self, a: int, b: int) -> str | None:
        return self.link(f"GPU{a}", f"GPU{b}")


@dataclass(frozen=True)
class P2PMatrix:
    """``nvidia-smi topo -p2p r`` (or w/n/a/p): whether each GPU pair can do that peer-to-peer operation.

    Statuses as nvidia-smi prints them: "OK", "CNS" (chipset not supported), "GNS" (GPU not supported),
    "TNS" (topology not supported), "NS" (not supported), "U" (unknown), "DI" (disabled by driver),
    "DR" (disabled by regkey: what the legend of current drivers lists).
    """

    capability: str | None = None  # "r", "w", "n", "a", "p" (read, write, nvlink, atomics, prop)
    gpus: list[int] = field(default_factory=list)
    status: dict[tuple[int, int], str] = field(default_factory=dict)  # both orders
    error: str | None = None

    def get(self, a: int, b: int) -> str | None:
        return self.status.get((a, b)) or self.status.get((b, a))


@dataclass(frozen=True)
class PcieLink:
    """A GPU's PCIe link now and at best.  Links downclock at idle, so a low current generation at idle is
    normal; a narrow current width is not."""

    gen_current: int | None = None
    gen_max: int | None = None  # the most both ends support (NVML's "max", sysfs's max_link_speed)
    width_current: int | None = None
    width_max: int | None = None
    source: str | None = None  # "nvml", "nvidia-smi -q -x", "sysfs", "lspci"
    replay_count: int | None = None  # PCIe replays (NVML): link errors the hardware retried


@dataclass(frozen=True)
class NvLinkPort:
    link: int
    active: bool | None = None
    version: int | None = None
    remote_bus_id: str | None = None  # the GPU (or NVSwitch) at the other end, "0000:18:00.0"
    remote_type: str | None = None  # "gpu", "switch", "ibmnpu", "unknown"
    speed_gbps: float | None = None  # the link's speed as ``nvidia-smi nvlink -s`` prints it (GB/s)


@dataclass(frozen=True)
class NvLinkState:
    """The NVLinks of one GPU as NVML (or ``nvidia-smi nvlink -s``) reports them."""

    ports: list[NvLinkPort] = field(default_factory=list)  # every link the GPU reported, up or down
    source: str | None = None  # "nvml", "nvidia-smi nvlink -s"
    # False: the GPU has no NVLink ("Device does not have or support Nvlink"); True: it has NVLinks, even
    # when none is up and none was listed ("Unable to retrieve Nvlink information as all links are inActive").
    supported: bool | None = None
    note: str | None = None  # nvidia-smi's own line about this GPU's links, when it printed one

    @property
    def total(self) -> int:
        return len(self.ports)

    @property
    def active(self) -> int:
        return sum(1 for port in self.ports if port.active)

    @property
    def down(self) -> list[int]:
        return [port.link for port in self.ports if port.active is False]


@dataclass(frozen=True)
class TopoGpu:
    index: int
    name: str | None = None
    bus_id: str | None = None
    numa_node: int | None = None  # sysfs numa_node / NVML / topo -m "NUMA Affinity"
    cpu_affinity: str | None = None  # the CPUs near this GPU, "0-13,28-41"
    form_factor: str | None = None  # "sxm", "pcie", None (from the name and the knowledge base)
    pcie: PcieLink = field(default_factory=PcieLink)
    nvlink: NvLinkState | None = None  # None: nobody reported NVLinks for this GPU


@dataclass(frozen=True)
class GpuPair:
    a: int
    b: int
    path: str | None = None  # "NV18", "PIX", ..., "SYS" (topo -m, or NVML's common ancestor in topo -m words)
    path_source: str | None = None  # "nvidia-smi topo -m", "nvml"
    p2p_read: str | None = None  # "OK", "NS", "GNS", ... (topo -p2p r, or NVML's P2P status)
    p2p_source: str | None = None

    @property
    def nvlinks(self) -> int | None:
        return nvlink_count(self.path)


@dataclass(frozen=True)
class Nic:
    label: str  # "NIC0"
    name: str | None = None  # "mlx5_0"
    nearest_gpus: list[int] = field(default_factory=list)  # GPUs on a PIX/PXB path to it


@dataclass(frozen=True)
class AmdTopoGpu:
    """One physical AMD GPU as the KFD topology describes it (its compute partitions folded into it)."""

    index: int  # position among the AMD GPUs, in KFD node order (how rocm-smi and amd-smi usually number them)
    bus_id: str | None = None  # the first partition's, "0000:63:00.0"
    name: str | None = None  # the marketing name where an AMD tool gave one for this bus id
    gfx_target: str | None = None  # "gfx90a"
    device_id: str | None = None  # "740f"
    numa_node: int | None = None
    hive_id: str | None = None  # GPUs of one XGMI hive share it
    kfd_nodes: tuple[int, ...] = ()  # one per compute partition (CPX: several)
    render_minors: tuple[int, ...] = ()  # /dev/dri/renderD<minor>

    @property
    def partitions(self) -> int:
        return max(len(self.kfd_nodes), 1)


@dataclass(frozen=True)
class XgmiLink:
    """An XGMI (AMD Infinity Fabric) link between two physical AMD GPUs, ``a < b`` (``AmdTopoGpu.index``)."""

    a: int
    b: int
    hive_id: str | None = None  # the hive both are in (None when KFD gives them different ones)
    weight: int | None = None  # KFD's link weight (lower is nearer), the least of the partitions' links
    hops: int | None = None  # where the source says


@dataclass(frozen=True)
class MachineTopology:
    gpus: list[TopoGpu] = field(default_factory=list)
    pairs: list[GpuPair] = field(default_factory=list)  # a < b, every pair with anything known
    nics: list[Nic] = field(default_factory=list)
    nics_links: dict[tuple[int, str], str] = field(default_factory=dict)  # (GPU, "NIC0") -> "PIX"
    numa_nodes: dict[int, str] = field(default_factory=dict)  # node -> its CPU list, "0-31,64-95"
    process_cpus: str | None = None  # the CPUs this process may run on (sched_getaffinity), "0-255"
    nvswitches: int = 0  # NVSwitch bridges on the PCI bus
    fabric_manager: str | None = None  # "active", "inactive", "failed", "not-installed", None (not asked)
    fabric_states: dict[int, str] = field(default_factory=dict)  # GPU -> NVML fabric state ("completed", ...)
    sources: list[str] = field(default_factory=list)  # the evidence the view was built from
    # AMD GPUs and their XGMI links, from the KFD topology; kept apart from ``gpus`` (NVIDIA's indices) so a
    # machine with GPUs of both vendors numbers each as its own tools do.
    amd_gpus: tuple[AmdTopoGpu, ...] = ()
    xgmi_links: tuple[XgmiLink, ...] = ()

    def xgmi_link(self, a: int, b: int) -> XgmiLink | None:
        low, high = min(a, b), max(a, b)
        return next((link for link in self.xgmi_links if link.a == low and link.b == high), None)

    def gpu(self, index: int) -> TopoGpu | None:
        return next((gpu for gpu in self.gpus if gpu.index == index), None)

    def pair(self, a: int, b: int) -> GpuPair | None:
        low, high = min(a, b), max(a, b)
        return next((pair for pair in self.pairs if pair.a == low and pair.b == high), None)
