"""The AMD part of the machine's topology: physical AMD GPUs and the XGMI links between them, from KFD.

KFD lists one node per compute partition (an MI300X in CPX mode is 8 nodes on one PCI device, functions 0-7),
and XGMI io_links between partitions, also between partitions of the same GPU. The topology view is about
physical GPUs: partitions are folded into their GPU (by PCI bus and device), links inside one GPU dropped,
and the links between two GPUs' partitions made one XGMI link per GPU pair.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.facts.amd_model import KfdTopology
from gpudoctor.facts.kfd_topology import physical_bus, physical_gpus
from gpudoctor.facts.topology_model import AmdTopoGpu, XgmiLink


def _least(values: list[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return min(known) if known else None


def amd_topology(
    kfd: KfdTopology | None, names: Mapping[str, str] | None = None
) -> tuple[tuple[AmdTopoGpu, ...], tuple[XgmiLink, ...]]:
    """The physical AMD GPUs (numbered in KFD node order) and their XGMI links; ``names``: bus id ("0000:63:00")
    without function -> marketing name, from whichever AMD tool named the GPUs."""
    names = names or {}
    gpus: list[AmdTopoGpu] = []
    gpu_of_node: dict[int, int] = {}
    for index, partitions in enumerate(physical_gpus(kfd)):
        first = partitions[0]
        for node in partitions:
            gpu_of_node[node.node_id] = index
        gpus.append(
            AmdTopoGpu(
                index=index,
                bus_id=first.bus_id,
                name=names.get(physical_bus(first.bus_id) or ""),
                gfx_target=first.gfx_target,
                device_id=first.device_id,
                numa_node=first.numa_node,
                hive_id=first.hive_id,
                kfd_nodes=tuple(node.node_id for node in partitions),
                render_minors=tuple(node.render_minor for node in partitions if node.render_minor is not None),
            )
        )
    found: dict[tuple[int, int], list[tuple[int | None, int | None]]] = {}
    for link in kfd.links if kfd is not None else ():
        a, b = gpu_of_node.get(link.from_node), gpu_of_node.get(link.to_node)
        if link.link_type != "xgmi" or a is None or b is None or a == b:
            continue
        found.setdefault((min(a, b), max(a, b)), []).append((link.weight, link.hops))
    links = []
    for (a, b), measures in sorted(found.items()):
        hive = gpus[a].hive_id if gpus[a].hive_id == gpus[b].hive_id else None
        links.append(
            XgmiLink(
                a=a,
                b=b,
                hive_id=hive,
                weight=_least([weight for weight, _ in measures]),
                hops=_least([hops for _, hops in measures]),
            )
        )
    return tuple(gpus), tuple(links)


def xgmi_hives(gpus: tuple[AmdTopoGpu, ...]) -> dict[str, list[int]]:
    """Hive id -> its GPUs' indices, in first-seen order; GPUs without a hive are left out."""
    hives: dict[str, list[int]] = {}
    for gpu in gpus:
        if gpu.hive_id:
            hives.setdefault(gpu.hive_id, []).append(gpu.index)
    return hives
