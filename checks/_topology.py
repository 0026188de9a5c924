"""What the TOPO checks share: words for links and pairs, whether a GPU is idle, expected NVLinks, fixes."""

from __future__ import annotations

from typing import Any

from gpudoctor import kb
from gpudoctor.api import Finding, Fix, Severity, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.predicates import gen_below_best, lanes_below_best
from gpudoctor.facts.topology_model import GpuPair, MachineTopology, PcieLink, TopoGpu, nvlink_count
from gpudoctor.results import Outcome
from gpudoctor.words import counted

IDLE_STATES = {"P8", "P10", "P12"}
# P2P statuses as nvidia-smi prints them, in words.
P2P_WORDS = {
    "CNS": "the chipset does not support it",
    "GNS": "the GPU does not support it",
    "TNS": "the PCIe topology does not allow it",
    "NS": "not supported",
    "DI": "disabled by the driver",
    "U": "unknown",
}


def link_known(link: PcieLink) -> bool:
    return link.width_current is not None or link.gen_current is not None


def link_words(gen: int | None, width: int | None) -> str:
    return f"Gen{gen or '?'} x{width if width is not None else '?'}"


def _rate(gen: int | None, width: int | None) -> str:
    rate = kb.pcie_rate_gbps(gen, width)
    return f"{rate:g} GB/s" if rate is not None else "? GB/s"


def idle(facts: Facts, gpu: TopoGpu) -> bool | None:
    """Whether the GPU was idle when read (its link then runs slow on purpose); None when nobody said."""
    state = next((s for s in facts.gpu_states if s.bus_id and s.bus_id == gpu.bus_id), None)
    if state is None:
        state = next((s for s in facts.gpu_states if s.index == gpu.index and s.bus_id is None), None)
    if state is None:
        return None
    if "gpu_idle" in state.clock_reasons_active or state.performance_state in IDLE_STATES:
        return True
    if state.utilization_pct is not None:
        return state.utilization_pct == 0
    return None


def _bus(gpu: TopoGpu) -> str:
    from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK

    return gpu.bus_id if gpu.bus_id and gpu.bus_id != UNPLACED_LSPCI_BLOCK else "<bus id>"


def link_findings(gpu: TopoGpu, idle_now: bool | None) -> list[Finding]:
    link = gpu.pcie
    name = f"GPU {gpu.index}"
    found: list[Finding] = []
    reseat = Fix(
        "Reseat the card in a full-width slot (not a riser or chipset slot), check the BIOS lane / "
        "bifurcation settings, then read the link again.",
        (f"sudo lspci -vv -s {_bus(gpu)} | grep -E 'LnkCap|LnkSta'",),
        needs_root=True,
    )
    if link.width_current == 0:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: its PCIe link is down (width 0)",
                reseat,
                (Ev.PCI_DEVICES,),
                cause="pcie-link-degraded",
                other_causes=("gpu-not-on-bus",),
            )
        )
        return found
    if lanes_below_best(link.width_current, link.width_max):
        found.append(
            Finding(
                Severity.WARNING,
                f"{name}: PCIe link x{link.width_current} of x{link.width_max} — "
                f"{_rate(link.gen_max, link.width_current)} instead of {_rate(link.gen_max, link.width_max)} "
                "per direction at full speed (a slot wired narrower by design, as in some laptops and cloud "
                "instances, looks the same)",
                reseat,
                (link.source or Ev.PCI_DEVICES,),
                cause="pcie-link-degraded",
            )
        )
    if gen_below_best(link.gen_current, link.gen_max):
        now, best = link_words(link.gen_current, link.width_current), link_words(link.gen_max, link.width_current)
        cost = (
            f"{_rate(link.gen_current, link.width_current)} instead of "
            f"{_rate(link.gen_max, link.width_current)} per direction"
        )
        if idle_now:
            found.append(
                Finding(
                    Severity.INFO,
                    f"{name}: PCIe {now} at idle (max {best}); GPUs lower the link speed at idle to save power — "
                    "`gpudoctor smoke` measures it under load",
                )
            )
        elif idle_now is False:
            found.append(
                Finding(
                    Severity.WARNING,
                    f"{name}: PCIe {now} under load, the link can do {best} — trained down: {cost}",
                    reseat,
                    (link.source or Ev.PCI_DEVICES,),
                    cause="pcie-link-degraded",
                )
            )
        else:
            found.append(
                Finding(
                    Severity.WARNING,
                    f"{name}: PCIe {now}, the link can do {best} — {cost}. If the "
                    "GPU was idle when read this is power saving, not a fault: `gpudoctor smoke` "
                    "measures the link under load",
                    reseat,
                    (link.source or Ev.PCI_DEVICES,),
                    cause="pcie-link-degraded",
                )
            )
    spec = kb.gpu_spec_for_name(gpu.name) if gpu.name else None
    if (
        spec is not None
        and spec.pcie_gen
        and link.gen_max
        and link.gen_max < spec.pcie_gen
        and link.source in ("nvml", "nvidia-smi -q -x")
    ):
        found.append(
            Finding(
                Severity.INFO,
                f"{name}: the platform caps the link at Gen{link.gen_max}; the {spec.name} does Gen{spec.pcie_gen} "
                f"({_rate(link.gen_max, 16)} instead of {_rate(spec.pcie_gen, 16)} per direction at x16)",
            )
        )
    return found


def pair_list(pairs: list[GpuPair], limit: int = 8) -> str:
    words = [f"GPU{p.a}↔GPU{p.b}" for p in pairs[:limit]]
    return ", ".join(words) + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")


def same_socket_commands(topo: MachineTopology) -> tuple[str, ...]:
    by_node: dict[int, list[int]] = {}
    for gpu in topo.gpus:
        if gpu.numa_node is not None:
            by_node.setdefault(gpu.numa_node, []).append(gpu.index)
    commands = tuple(
        f"CUDA_VISIBLE_DEVICES={','.join(map(str, gpus))} python train.py  # NUMA node {node}"
        for node, gpus in sorted(by_node.items())
        if len(gpus) > 1
    )
    return commands or ("nvidia-smi topo -m",)


def _is_geforce(topo: MachineTopology, index: int) -> bool:
    gpu = topo.gpu(index)
    return bool(gpu and gpu.name and any(word in gpu.name for word in ("GeForce", "RTX 50", "RTX 40", "TITAN")))


def _p2p_words(status: str | None) -> str:
    """What a ``topo -p2p r`` status means, in words (the status itself when it is not a known one)."""
    return P2P_WORDS.get(status or "", str(status))


def p2p_findings(facts: Facts, topo: MachineTopology) -> list[Finding]:
    refused = [pair for pair in topo.pairs if pair.p2p_read and pair.p2p_read != "OK"]
    if not refused:
        return []
    consumer = [p for p in refused if p.p2p_read == "GNS" or (_is_geforce(topo, p.a) and _is_geforce(topo, p.b))]
    platform = [p for p in refused if p not in consumer]
    found = []
    if consumer:
        found.append(
            Finding(
                Severity.INFO,
                f"no peer-to-peer access between {pair_list(consumer)}: "
                f"{_p2p_words(consumer[0].p2p_read)} (GeForce cards have no "
                "P2P; NCCL copies through host memory, as expected)",
            )
        )
    if platform:
        statuses = sorted({p.p2p_read for p in platform if p.p2p_read})
        reason = "; ".join(f"{s}: {_p2p_words(s)}" for s in statuses)
        fix = Fix(
            "Peer access refused by the platform is usually PCIe ACS or the IOMMU: disable ACS in the BIOS "
            "(or boot with iommu=pt), then check again. In a VM, the hypervisor must allow it.",
            ("nvidia-smi topo -p2p r", "sudo lspci -vvv | grep -i acsctl", "cat /proc/cmdline"),
            needs_root=True,
        )
        found.append(
            Finding(
                Severity.WARNING,
                f"no peer-to-peer read between {pair_list(platform)} ({reason}): "
                "NCCL and cudaMemcpyPeer go through host memory, and ACS-blocked P2P can hang NCCL",
                fix,
                (Ev.NVIDIA_SMI_P2P, Ev.NVML),
                cause="p2p-blocked",
            )
        )
    return found


def expected_links(gpu: TopoGpu) -> int | None:
    """The NVLinks an SXM part has by its spec sheet; None for PCIe cards (a bridge is optional)."""
    if gpu.form_factor != "sxm" or not gpu.name:
        return None
    from gpudoctor.kb.gpu_specs import expected_nvlinks

    return expected_nvlinks(gpu.name)


def _reset_fix(indices: list[int]) -> Fix:
    return Fix(
        "Reset the GPUs (no process may be using them) or reboot; links still down after that are a "
        "baseboard or cable fault: send `nvidia-bug-report.sh` output to the vendor.",
        tuple(f"sudo nvidia-smi -r -i {i}" for i in indices) + ("nvidia-smi nvlink -s",),
        needs_root=True,
    )


def nvlink_findings(gpu: TopoGpu, expected: int | None) -> list[Finding]:
    state = gpu.nvlink
    if state is None or not state.total:
        return []
    found = []
    down = state.down
    if down:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"GPU {gpu.index}: NVLink(s) {', '.join(map(str, down))} down — {state.active} of {state.total} active",
                _reset_fix([gpu.index]),
                (Ev.NVML, Ev.NVIDIA_SMI_NVLINK),
            )
        )
    elif expected and state.total < expected:
        found.append(
            Finding(
                Severity.WARNING,
                f"GPU {gpu.index}: {state.total} NVLinks reported, the {gpu.name} has {expected}",
                _reset_fix([gpu.index]),
                (Ev.NVML,),
            )
        )
    return found


def missing_nvlink_findings(topo: MachineTopology, built_with: list[TopoGpu], reported: list[TopoGpu]) -> list[Finding]:
    """SXM GPUs that see each other but not over NVLink (and no link state says why)."""
    indices = {gpu.index for gpu in built_with} - {
        gpu.index for gpu in reported if gpu.nvlink is not None and gpu.nvlink.active
    }
    pairs = [pair for pair in topo.pairs if pair.a in indices and pair.b in indices and pair.path]
    pcie_only = [pair for pair in pairs if nvlink_count(pair.path) is None]
    if not pairs or len(pcie_only) < len(pairs):
        return []
    names = sorted({gpu.name for gpu in built_with if gpu.index in indices and gpu.name})
    return [
        Finding(
            Severity.PROBLEM,
            f"{', '.join(names)} GPUs are built with NVLink but reach each other over "
            f"PCIe only ({pair_list(pcie_only)}: {pcie_only[0].path}) — NVLinks down or not trained",
            _reset_fix(sorted(indices)),
            (Ev.NVIDIA_SMI_TOPO, Ev.NVML, Ev.FABRIC_MANAGER),
        )
    ]


def fabric_manager_fix(facts: Facts) -> Fix:
    version = facts.driver.kernel_version or facts.driver.userspace_version
    branch = str(kb.major(version) or "<branch>")
    package = f"nvidia-fabricmanager-{branch}" + (f"={version}-1" if version else "")
    return Fix(
        "Install the fabric manager of exactly the driver's version, start it and enable it at boot.",
        (
            f"sudo apt-get install -y {package}  # RHEL: sudo dnf install nvidia-fabric-manager",
            "sudo systemctl enable --now nvidia-fabricmanager",
            "journalctl -u nvidia-fabricmanager --no-pager | tail -n 30",
        ),
        needs_root=True,
        url="https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/",
    )


def affinity_findings(facts: Facts, topo: MachineTopology) -> list[Finding]:
    from gpudoctor.facts.nvml_topology import parse_cpu_list

    found: list[Finding] = []
    matrix = facts.topology
    empty = sorted(i for i, cpus in (matrix.cpu_affinity.items() if matrix else []) if cpus == "")
    if matrix is not None and empty and len(empty) < len(matrix.gpus):
        found.append(
            Finding(
                Severity.WARNING,
                f"nvidia-smi shows no CPU of this job near GPU(s) "
                f"{', '.join(map(str, empty))} (empty CPU Affinity): the job's CPUs are on another "
                "socket than those GPUs",
                _bind_fix(topo, empty),
                (Ev.NVIDIA_SMI_TOPO,),
            )
        )
    allowed = parse_cpu_list(topo.process_cpus) if topo.process_cpus else set()
    if not allowed:
        return found
    far = []
    for gpu in topo.gpus:
        near = parse_cpu_list(gpu.cpu_affinity) if gpu.cpu_affinity else set()
        if near and not (near & allowed):
            far.append(gpu)
    if far and not empty:
        indices = [gpu.index for gpu in far]
        found.append(
            Finding(
                Severity.WARNING,
                f"this process may only run on CPUs {topo.process_cpus}, none of "
                f"them near GPU(s) {', '.join(map(str, indices))} "
                f"(NUMA node {', '.join(sorted({str(g.numa_node) for g in far}))})",
                _bind_fix(topo, indices),
                (Ev.CPU_TOPOLOGY, Ev.PCI_DEVICES),
            )
        )
    return found


def _bind_fix(topo: MachineTopology, indices: list[int]) -> Fix:
    gpu = topo.gpu(indices[0]) if indices else None
    node = gpu.numa_node if gpu is not None and gpu.numa_node is not None else "N"
    return Fix(
        "Run each rank on its GPU's NUMA node.",
        (
            f"numactl --cpunodebind={node} --membind={node} python train.py",
            "# Slurm: srun --gres-flags=enforce-binding --cpu-bind=cores ...",
        ),
    )


def switches_implied(topo: MachineTopology, bus_read: bool) -> str | None:
    """How the GPU links show NVSwitches that the PCI bus does not list, in words; None when they do not."""
    from gpudoctor.facts.topology import nvswitch_fabric

    if topo.nvswitches or nvswitch_fabric(topo) != "inferred":
        return None
    paths = sorted({pair.path for pair in topo.pairs if pair.path})
    source = sorted({pair.path_source for pair in topo.pairs if pair.path_source})
    where = f"`{source[0]}`" if len(source) == 1 else "the GPU links"
    return (
        f"{'/'.join(paths)} between every GPU pair in {where}: only NVSwitches link every pair with all of a GPU's "
        + ("links (the PCI bus lists none: a VM or a container?)" if bus_read else "links (the PCI bus was not read)")
    )


def no_switch_words(topo: MachineTopology) -> str:
    """Why TOPO004 has nothing to judge, saying what it cannot know."""
    if len(topo.gpus) == 1:
        return (
            "one GPU visible and no NVSwitch on the PCI bus this machine shows; a VM given one GPU of an NVSwitch "
            "system would not show the host's switches, and its fabric manager runs on the host"
        )
    if topo.pairs:
        return "no NVSwitch: none on the PCI bus, and no GPU pair is linked as through one"
    return "no NVSwitch on the PCI bus"


def nvlink_state_unknown(built_with: list[TopoGpu], linked_pairs: list[GpuPair], data: dict[str, Any]) -> Outcome:
    """TOPO003 where SXM GPUs report no link state: the matrix may still show NVLink paths; else nobody knows."""
    names = ", ".join(sorted({f"{gpu.name} ({expected_links(gpu)} NVLinks)" for gpu in built_with if gpu.name}))
    if linked_pairs:
        paths = ", ".join(sorted({pair.path for pair in linked_pairs if pair.path}))
        return ok(
            f"NVLink between {counted(len(linked_pairs), 'GPU pair')} ({paths}); the state of each link was not reported",
            data,
        )
    alone = " and no other GPU is visible" if len(built_with) == 1 else ""
    return not_applicable(
        f"{counted(len(built_with), 'GPU')} built with NVLink ({names}); neither NVML nor `nvidia-smi nvlink -s` reported "
        f"their link state{alone}: whether the NVLinks are up is not known (a VM often hides them)",
        data,
    )
