"""The wiring as NVML reports it, from ``nvml.json``: NUMA node, CPU affinity, PCIe link, NVLinks and GPU pairs.

NVML's answers are turned into the words of ``nvidia-smi topo -m`` / ``topo -p2p r`` ("PIX", "NV18",
"OK", "GNS"), so the merged topology (``gpudoctor.facts.topology_model``) can compare and combine them
with the text sources without caring which one spoke.  Also home of the "0-13,28-41" CPU-list
helpers, which sysfs, ``topo -m`` and NVML's bitmask all meet in.  Pure functions; any input shape
gives what it can and never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpudoctor.facts.json_values import json_bool, json_dict, json_int, json_list, json_text
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.topology_model import NvLinkPort, NvLinkState, PcieLink

# Keyed by ``int | None`` so that ``json_int(value)`` (None for garbage) looks up directly.
# nvmlGpuTopologyLevel_t -> the topo -m word for the same distance.
TOPOLOGY_PATHS: dict[int | None, str] = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
# nvmlGpuP2PStatus_t -> nvidia-smi topo -p2p's legend.
P2P_STATUS: dict[int | None, str] = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DI", 5: "NS", 6: "U"}
# nvmlGpuFabricState_t
FABRIC_STATES: dict[int | None, str] = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}
REMOTE_TYPES: dict[int | None, str] = {0: "gpu", 1: "ibmnpu", 2: "switch", 255: "unknown"}

_MAX_CPU = 1 << 16  # no machine has more CPUs; a bigger "CPU id" is garbage, not a reason to build a huge set


@dataclass(frozen=True)
class NvmlGpu:
    """One GPU's wiring as NVML reported it."""

    index: int
    name: str | None = None
    bus_id: str | None = None
    numa_node: int | None = None
    cpu_affinity: str | None = None  # "0-13,28-41"; "" when NVML named no CPU
    pcie: PcieLink = field(default_factory=PcieLink)  # source "nvml" once anything is known
    nvlink: NvLinkState | None = None  # None: the GPU has no NVLink, or NVML could not say
    fabric_state: str | None = None  # "not_supported", "not_started", "in_progress", "completed"


@dataclass(frozen=True)
class NvmlPair:
    a: int
    b: int
    path: str | None = None  # topo -m words: "NV18", "PIX", ..., "SYS"
    p2p_read: str | None = None  # topo -p2p words: "OK", "NS", "GNS", ...
    p2p_nvlink: str | None = None  # the same for peer-to-peer over NVLink


@dataclass(frozen=True)
class NvmlTopology:
    """What NVML said about the wiring.  Empty (and false) when NVML was not asked or did not answer."""

    gpus: dict[int, NvmlGpu] = field(default_factory=dict)  # by NVML index
    pairs: dict[tuple[int, int], NvmlPair] = field(default_factory=dict)  # (a, b) with a < b

    def __bool__(self) -> bool:
        return bool(self.gpus or self.pairs)

    def gpu(self, index: int) -> NvmlGpu | None:
        return self.gpus.get(index)

    def pair(self, a: int, b: int) -> NvmlPair | None:
        return self.pairs.get((min(a, b), max(a, b)))


# --------------------------------------------------------------------------- CPU lists


def cpu_list(cpus: object) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``, the kernel's cpulist form; non-CPU entries are left out."""
    if not isinstance(cpus, (list, tuple, set, frozenset)):
        return ""
    ids = sorted({cpu for cpu in cpus if isinstance(cpu, int) and not isinstance(cpu, bool) and 0 <= cpu < _MAX_CPU})
    ranges: list[str] = []
    start = previous = -2  # no run yet
    for cpu in ids:
        if cpu == previous + 1:
            previous = cpu
            continue
        if start >= 0:
            ranges.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = cpu
    if start >= 0:
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
    return ",".join(ranges)


_CPU_RANGE = re.compile(r"(\d{1,6})(?:-(\d{1,6}))?")


def parse_cpu_list(text: object) -> set[int]:
    """``"0-13,28-41"`` -> the CPU ids; anything that is not wholly such a list gives an empty set."""
    if not isinstance(text, str):
        return set()
    cpus: set[int] = set()
    for part in text.strip().split(","):
        match = _CPU_RANGE.fullmatch(part.strip())
        if match is None:
            return set()
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) else low
        if high < low or high >= _MAX_CPU:
            return set()
        cpus.update(range(low, high + 1))
    return cpus


# --------------------------------------------------------------------------- NVML record -> topology


def _port(record: object) -> NvLinkPort | None:
    record = json_dict(record)
    link = json_int(record.get("link"))
    if link is None:
        return None
    remote_type = record.get("remote_type")
    remote_number = json_int(remote_type)
    return NvLinkPort(
        link=link,
        active=json_bool(record.get("active")),
        version=json_int(record.get("version")),
        remote_bus_id=normalize_bus_id(record.get("remote_bus_id")),
        remote_type=REMOTE_TYPES.get(remote_number, "unknown") if remote_number is not None else json_text(remote_type),
    )


def _gpu(record: dict[str, object]) -> NvmlGpu | None:
    index = json_int(record.get("index"))
    if index is None:
        return None
    pcie = json_dict(record.get("pcie"))
    link = PcieLink(
        gen_current=json_int(pcie.get("gen_current")),
        gen_max=json_int(pcie.get("gen_max")),
        width_current=json_int(pcie.get("width_current")),
        width_max=json_int(pcie.get("width_max")),
        replay_count=json_int(pcie.get("replay_count")),
    )
    if any(value is not None for value in vars(link).values()):
        link = replace(link, source="nvml")  # a lost GPU's empty link is nobody's word
    affinity = record.get("cpu_affinity")
    links = record.get("nvlink")
    nvlink: NvLinkState | None = None
    if isinstance(links, list):
        ports = [port for port in map(_port, links) if port is not None]
        nvlink = NvLinkState(ports=ports, source="nvml") if ports else None
    fabric = json_dict(json_dict(record.get("health")).get("fabric"))
    return NvmlGpu(
        index=index,
        name=json_text(record.get("name")),
        bus_id=normalize_bus_id(record.get("pci_bus_id")),
        numa_node=json_int(record.get("numa_node")),
        cpu_affinity=cpu_list(affinity) if isinstance(affinity, list) else None,
        pcie=link,
        nvlink=nvlink,
        fabric_state=FABRIC_STATES.get(json_int(fabric.get("state"))),
    )


def _direct_links(gpu: NvmlGpu | None, other: NvmlGpu | None) -> int:
    if gpu is None or gpu.nvlink is None or other is None or other.bus_id is None:
        return 0
    return sum(1 for port in gpu.nvlink.ports if port.active and port.remote_bus_id == other.bus_id)


def _switch_links(gpu: NvmlGpu | None) -> int:
    if gpu is None or gpu.nvlink is None:
        return 0
    return sum(1 for port in gpu.nvlink.ports if port.active and port.remote_type == "switch")


def _nvlink_path(a: NvmlGpu | None, b: NvmlGpu | None) -> str | None:
    """ "NV<n>" when the two GPUs talk over NVLink, else None.

    Links straight to the other GPU count one each.  Behind NVSwitches every link reaches every GPU,
    so the pair gets as many as the less connected of the two has up to a switch: topo -m's NV18
    between any two GPUs of an HGX H100.
    """
    direct = max(_direct_links(a, b), _direct_links(b, a))
    if direct:
        return f"NV{direct}"
    switched = min(_switch_links(a), _switch_links(b))
    return f"NV{switched}" if switched else None


def nvml_topology(data: object) -> NvmlTopology:
    """The topology NVML reported in the probe's record; an empty one for anything else."""
    if not isinstance(data, dict) or json_dict(data.get("init")).get("ok") is not True:
        return NvmlTopology()
    gpus: dict[int, NvmlGpu] = {}
    for record in json_list(data.get("devices")):
        gpu = _gpu(record) if isinstance(record, dict) else None
        if gpu is not None:
            gpus.setdefault(gpu.index, gpu)
    pairs: dict[tuple[int, int], NvmlPair] = {}
    for raw in json_list(data.get("pairs")):
        record = json_dict(raw)
        a, b = json_int(record.get("a")), json_int(record.get("b"))
        if a is None or b is None or a == b or (min(a, b), max(a, b)) in pairs:
            continue
        a, b = min(a, b), max(a, b)
        p2p = json_dict(record.get("p2p"))
        pair = NvmlPair(
            a=a,
            b=b,
            path=_nvlink_path(gpus.get(a), gpus.get(b)) or TOPOLOGY_PATHS.get(json_int(record.get("common_ancestor"))),
            p2p_read=P2P_STATUS.get(json_int(p2p.get("read"))),
            p2p_nvlink=P2P_STATUS.get(json_int(p2p.get("nvlink"))),
        )
        if pair.path or pair.p2p_read or pair.p2p_nvlink:
            pairs[(a, b)] = pair
    return NvmlTopology(gpus=gpus, pairs=pairs)
