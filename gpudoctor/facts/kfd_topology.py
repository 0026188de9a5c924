"""The KFD topology (/sys/class/kfd/kfd/topology) as typed nodes and links.

The amdgpu driver's compute side (KFD) describes every CPU socket and GPU (or GPU compute partition, in
CPX/DPX/QPX modes) as a numbered node with a ``properties`` file of ``name value`` lines, and each node's
links (``io_links``) to the others. Read directly, it names the GPUs without any ROCm tool installed.

What the numbers mean:

- ``gfx_target_version`` is major·10000 + minor·100 + stepping, and the LLVM target name prints minor and
  stepping in hex: 90010 -> gfx90a, 90402 -> gfx942, 110000 -> gfx1100. Kernels before it was added (the
  Vega 10 fixture) do not have it: the target is then unknown, not guessed.
- ``location_id`` is the PCI bus/device/function (bus << 8 | device << 3 | function), ``domain`` the segment.
- io_link ``type`` 11 is XGMI and 2 is PCIe (ROCm k8s-device-plugin ``internal/pkg/allocator/device.go``).
- KFD numbers its CPU nodes by NUMA proximity domain, so the CPU node a GPU's PCIe link reaches is the
  GPU's NUMA node.
- VRAM is the sum of the frame-buffer memory banks (heap type 1 public, 2 private); older kernels also
  say ``local_mem_size``. Neither is in every capture: then it is unknown.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.facts.amd_model import GpuLink, KfdNode, KfdTopology
from gpudoctor.facts.json_values import json_dict
from gpudoctor.facts.tolerant import never_raises

LINK_TYPES = {11: "xgmi", 2: "pcie"}
FRAME_BUFFER_HEAPS = (1, 2)  # HSA_MEM_HEAP_TYPE_FB_PUBLIC, HSA_MEM_HEAP_TYPE_FB_PRIVATE
_PROPERTY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+(-?\d{1,24})\s*$")


def properties(text: object) -> dict[str, int]:
    """A KFD ``properties`` file as name -> integer; lines that are not ``name number`` are skipped."""
    if not isinstance(text, str):
        return {}
    values: dict[str, int] = {}
    for line in text.splitlines():
        match = _PROPERTY.match(line)
        if match:
            values[match.group(1)] = int(match.group(2))
    return values


def gfx_target(version: int | None) -> str | None:
    """``gfx_target_version`` as the LLVM target name: 90010 -> "gfx90a"; None for 0, absent or out of range."""
    if version is None or version <= 0 or version >= 1_000_000:
        return None
    major, minor, stepping = version // 10000, (version // 100) % 100, version % 100
    if minor > 15 or stepping > 15:  # one hex digit each in the name; anything else is not a target version
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


def bus_id(domain: int | None, location: int | None) -> str | None:
    """ "0000:63:00.0" from KFD's ``domain`` and ``location_id``; None when the location is unknown."""
    if location is None or location <= 0 or location > 0xFFFF:
        return None
    segment = domain if domain is not None and 0 <= domain <= 0xFFFF else 0
    return f"{segment:04x}:{location >> 8:02x}:{(location >> 3) & 0x1F:02x}.{location & 0x7:x}"


def physical_bus(bus: str | None) -> str | None:
    """The PCI device a (partition's) bus id belongs to, without its function: "0000:05:00"."""
    return bus.rsplit(".", 1)[0] if bus and "." in bus else bus


def _positive(values: dict[str, int], name: str) -> int | None:
    value = values.get(name)
    return value if value is not None and value > 0 else None


def _vram(banks: dict[str, object], values: dict[str, int]) -> int | None:
    sizes = []
    for text in banks.values():
        bank = properties(text)
        if bank.get("heap_type") in FRAME_BUFFER_HEAPS and (bank.get("size_in_bytes") or 0) > 0:
            sizes.append(bank["size_in_bytes"])
    if sizes:
        return sum(sizes)
    return _positive(values, "local_mem_size")


def _node(node_id: int, record: dict[str, object]) -> KfdNode:
    values = properties(record.get("properties"))
    raw_gpu_id = record.get("gpu_id")
    gpu_id = int(raw_gpu_id.strip()) if isinstance(raw_gpu_id, str) and raw_gpu_id.strip().isdecimal() else None
    is_gpu = (gpu_id or 0) > 0 or (values.get("simd_count") or 0) > 0
    simds, per_cu = values.get("simd_count"), values.get("simd_per_cu")
    name = record.get("name")
    device = _positive(values, "device_id") if is_gpu else None
    return KfdNode(
        node_id=node_id,
        is_gpu=is_gpu,
        gfx_target=gfx_target(values.get("gfx_target_version")) if is_gpu else None,
        device_id=f"{device:04x}" if device is not None and device <= 0xFFFF else None,
        compute_units=simds // per_cu if is_gpu and simds and per_cu and simds > 0 and per_cu > 0 else None,
        vram_bytes=_vram(json_dict(record.get("mem_banks")), values) if is_gpu else None,
        render_minor=_positive(values, "drm_render_minor") if is_gpu else None,
        bus_id=bus_id(values.get("domain"), values.get("location_id")) if is_gpu else None,
        hive_id=str(values["hive_id"]) if is_gpu and (values.get("hive_id") or 0) > 0 else None,
        num_xcc=_positive(values, "num_xcc") if is_gpu else None,
        cpu_cores=values.get("cpu_cores_count") if not is_gpu and values.get("cpu_cores_count") is not None else None,
        name=(name.strip() or None) if isinstance(name, str) else None,
    )


def _links(node_id: int, record: dict[str, object], cpu_nodes: set[int]) -> list[GpuLink]:
    links = []
    for _, text in sorted(json_dict(record.get("io_links")).items(), key=lambda kv: (len(kv[0]), kv[0])):
        values = properties(text)
        target = values.get("node_to")
        kind = values.get("type")
        if target is None or kind is None:
            continue
        links.append(
            GpuLink(
                from_node=values.get("node_from", node_id),
                to_node=target,
                link_type=LINK_TYPES.get(kind, str(kind)),
                hops=values.get("hops"),
                weight=values.get("weight"),
                to_cpu=target in cpu_nodes,
            )
        )
    return links


def _unknown() -> KfdTopology | None:
    return None


@never_raises(_unknown)
def parse_kfd_topology(data: object) -> KfdTopology | None:
    """``kfd-topology.json`` as typed nodes and links; None when not collected or unreadable."""
    records = json_dict(json_dict(data).get("nodes"))
    nodes: dict[int, KfdNode] = {}
    raw: dict[int, dict[str, object]] = {}
    for key, record in records.items():
        if not (key.isascii() and key.isdigit() and len(key) < 8) or not isinstance(record, dict):
            continue
        nodes[int(key)] = _node(int(key), record)
        raw[int(key)] = record
    if not nodes:
        return None
    cpu_nodes = {node_id for node_id, node in nodes.items() if not node.is_gpu}
    links = [link for node_id in sorted(raw) for link in _links(node_id, raw[node_id], cpu_nodes)]
    numa: dict[int, int] = {}
    for link in links:
        if link.link_type == "pcie" and link.to_cpu and link.from_node in nodes and link.from_node not in numa:
            numa[link.from_node] = link.to_node
    ordered = []
    for node_id in sorted(nodes):
        node = nodes[node_id]
        if node.is_gpu and node_id in numa:
            node = replace(node, numa_node=numa[node_id])
        elif not node.is_gpu:
            node = replace(node, numa_node=node_id)
        ordered.append(node)
    return KfdTopology(nodes=tuple(ordered), links=tuple(links))


def physical_gpus(topology: KfdTopology | None) -> list[list[KfdNode]]:
    """The GPU nodes grouped by PCI device: one group per physical GPU (a CPX MI300X's 8 partitions share one
    bus and differ in function), in node order; a node without a bus id is a GPU of its own."""
    if topology is None:
        return []
    groups: dict[str, list[KfdNode]] = {}
    for node in topology.gpu_nodes:
        groups.setdefault(physical_bus(node.bus_id) or f"node{node.node_id}", []).append(node)
    return list(groups.values())
