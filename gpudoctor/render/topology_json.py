"""The machine's topology as plain JSON data (``gpudoctor topo --json``).

A straight, stable translation of ``MachineTopology``: the same names as the model, ``None`` kept as
``null`` ("unknown"), and everything JSON cannot hold turned into something it can — tuple keys become
lists of records, integer keys become strings.  Lists are sorted so the same machine always gives the
same document, whatever order the sources were merged in.
"""

from __future__ import annotations

from typing import Any

from gpudoctor.facts.topology_model import AmdTopoGpu, MachineTopology, NvLinkState, PcieLink, TopoGpu


def topology_json(topo: MachineTopology) -> dict[str, Any]:
    """The whole model as a JSON-serialisable dict with fixed top-level keys, and ``amd_gpus`` / ``xgmi_links``
    after them where AMD GPUs are known (so an NVIDIA machine's document is what it always was)."""
    data = _nvidia_json(topo)
    if topo.amd_gpus:
        data["amd_gpus"] = [_amd_gpu(gpu) for gpu in sorted(topo.amd_gpus, key=lambda g: _sort_key(g.index))]
        data["xgmi_links"] = [
            {"a": link.a, "b": link.b, "hive_id": link.hive_id, "weight": link.weight, "hops": link.hops}
            for link in sorted(topo.xgmi_links, key=lambda k: (_sort_key(k.a), _sort_key(k.b)))
        ]
    return data


def _amd_gpu(gpu: AmdTopoGpu) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "name": gpu.name,
        "bus_id": gpu.bus_id,
        "gfx_target": gpu.gfx_target,
        "device_id": gpu.device_id,
        "numa_node": gpu.numa_node,
        "hive_id": gpu.hive_id,
        "partitions": gpu.partitions,
        "kfd_nodes": list(gpu.kfd_nodes),
        "render_minors": list(gpu.render_minors),
    }


def _nvidia_json(topo: MachineTopology) -> dict[str, Any]:
    return {
        "gpus": [_gpu(gpu) for gpu in sorted(topo.gpus, key=lambda g: _sort_key(g.index))],
        "pairs": [
            {
                "a": pair.a,
                "b": pair.b,
                "path": pair.path,
                "nvlinks": pair.nvlinks,
                "path_source": pair.path_source,
                "p2p_read": pair.p2p_read,
                "p2p_source": pair.p2p_source,
            }
            for pair in sorted(topo.pairs, key=lambda p: (_sort_key(p.a), _sort_key(p.b)))
        ],
        "nics": [
            {"label": nic.label, "name": nic.name, "nearest_gpus": sorted(nic.nearest_gpus, key=_sort_key)}
            for nic in topo.nics
        ],
        # (GPU, "NIC0") -> "PIX" has a tuple key; as records it also reads better.
        "gpu_nic_links": [
            {"gpu": gpu, "nic": nic, "path": path}
            for (gpu, nic), path in sorted(topo.nics_links.items(), key=lambda kv: _sort_key(kv[0]))
        ],
        "numa_nodes": {
            str(node): cpus for node, cpus in sorted(topo.numa_nodes.items(), key=lambda kv: _sort_key(kv[0]))
        },
        "process_cpus": topo.process_cpus,
        "nvswitches": topo.nvswitches,
        "fabric_manager": topo.fabric_manager,
        "fabric_states": {
            str(gpu): state for gpu, state in sorted(topo.fabric_states.items(), key=lambda kv: _sort_key(kv[0]))
        },
        "sources": list(topo.sources),
    }


def _gpu(gpu: TopoGpu) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "name": gpu.name,
        "bus_id": gpu.bus_id,
        "numa_node": gpu.numa_node,
        "cpu_affinity": gpu.cpu_affinity,
        "form_factor": gpu.form_factor,
        "pcie": _pcie(gpu.pcie),
        "nvlink": _nvlink(gpu.nvlink),
    }


def _pcie(link: PcieLink | None) -> dict[str, Any]:
    link = link if link is not None else PcieLink()
    return {
        "gen_current": link.gen_current,
        "gen_max": link.gen_max,
        "width_current": link.width_current,
        "width_max": link.width_max,
        "source": link.source,
        "replay_count": link.replay_count,
    }


def _nvlink(state: NvLinkState | None) -> dict[str, Any] | None:
    if state is None:  # nobody reported NVLinks: unknown, not "none"
        return None
    return {
        "active": state.active,
        "total": state.total,
        "down": state.down,
        "source": state.source,
        "ports": [
            {
                "link": port.link,
                "active": port.active,
                "version": port.version,
                "remote_bus_id": port.remote_bus_id,
                "remote_type": port.remote_type,
            }
            for port in state.ports
        ],
    }


def _sort_key(value: Any) -> Any:
    # Mixed or odd key types (a damaged merge) must still sort, and sort the same way every time.
    if isinstance(value, tuple):
        return tuple(_sort_key(item) for item in value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return (1, 0, str(value))
    return (0, value, "")
