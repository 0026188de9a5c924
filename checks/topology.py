"""Topology checks: PCIe links at full width, GPU pairs close and peer-capable, NVLinks up, the fabric
manager on NVSwitch systems, and CPUs near the GPUs.  They read the merged ``facts.machine_topology``."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from gpudoctor import kb
from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks import _topology as t

PCIE_EVIDENCE = (Ev.NVML, Ev.NVIDIA_SMI_XML, Ev.PCI_DEVICES, Ev.LSPCI)
PAIR_EVIDENCE = (Ev.NVIDIA_SMI_TOPO, Ev.NVIDIA_SMI_P2P, Ev.NVML)
NVLINK_EVIDENCE = (Ev.NVML, Ev.NVIDIA_SMI_NVLINK, Ev.NVIDIA_SMI_TOPO)


@check("TOPO001", area="topology", title="PCIe links run at full width and speed")
def pcie_links(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: each GPU's PCIe link now against the most it can do (generation and width), from NVML,
    `nvidia-smi -q -x`, sysfs (`current_link_speed` / `max_link_speed`) or `lspci -vv` (LnkSta / LnkCap).

    Why it matters: a link trained down to x8 or x4 (a riser, a dirty or half-seated card, a slot wired x8, BIOS
    bifurcation) halves or quarters host↔device bandwidth with no error anywhere. The generation is different:
    GPUs drop to Gen1 at idle to save power, so a low generation at idle is normal and only a low generation
    under load is a fault; `gpudoctor smoke` measures the link under load.

    How to fix: reseat the card in a full x16 slot (not through a riser or a chipset slot), check the BIOS
    lane/bifurcation settings, then compare `sudo lspci -vv -s <bus id> | grep -E 'LnkCap|LnkSta'` again.
    """
    topo = facts.machine_topology
    gpus = [gpu for gpu in topo.gpus if t.link_known(gpu.pcie)]
    if not gpus:
        if topo.gpus and not facts.gpu_health and not facts.pci_scan_available:
            return not_applicable(
                "the GPUs' PCIe links are not known: neither NVML, `nvidia-smi -q` nor the PCI bus was read "
                "(`sudo lspci -vv -d 10de: | grep -E 'LnkCap|LnkSta'` shows them)"
            )
        return not_applicable("no PCIe link width or speed reported for any GPU")
    findings: list[Finding] = []
    data: dict[str, Any] = {}
    for gpu in gpus:
        link = gpu.pcie
        idle = t.idle(facts, gpu)
        data[str(gpu.index)] = {
            "gen_current": link.gen_current,
            "gen_max": link.gen_max,
            "width_current": link.width_current,
            "width_max": link.width_max,
            "source": link.source,
            "idle": idle,
            "replay_count": link.replay_count,
            "gbps_now": kb.pcie_rate_gbps(link.gen_current, link.width_current),
            "gbps_max": kb.pcie_rate_gbps(link.gen_max, link.width_max),
        }
        findings += t.link_findings(gpu, idle)
    worst = [f for f in findings if f.severity in (Severity.PROBLEM, Severity.WARNING)]
    if worst:
        return Outcome(
            f"{counted(len({f.message.split(':')[0] for f in worst}), 'GPU link')} below full width or speed",
            findings,
            data,
        )
    words = sorted(
        {
            t.link_words(gpu.pcie.gen_max or gpu.pcie.gen_current, gpu.pcie.width_max or gpu.pcie.width_current)
            for gpu in gpus
        }
    )
    return ok(f"{counted(len(gpus), 'GPU link')} at full width ({', '.join(words)} max)", data, findings)


@check("TOPO002", area="topology", title="GPU pairs are close and can reach each other peer-to-peer")
def gpu_pairs(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: how each pair of GPUs is connected (`nvidia-smi topo -m`, else NVML's common ancestor)
    and whether they can read each other's memory directly (`nvidia-smi topo -p2p r`, NVML P2P status).

    Why it matters: GPUs that train together exchange gradients every step. Over NVLink or one PCIe switch that
    is fast; across CPU sockets (SYS) traffic crosses the socket interconnect, and without peer-to-peer access
    NCCL copies through host memory: all-reduce gets several times slower with no error. Peer access blocked by
    PCIe ACS or an IOMMU is also a classic cause of NCCL hangs.

    How to fix: keep a job's GPUs on one socket (`CUDA_VISIBLE_DEVICES` listing GPUs that share a switch or NUMA
    node); where peer access is refused by the platform, disable PCIe ACS in the BIOS (or use `iommu=pt`) and
    confirm with `nvidia-smi topo -p2p r`. GeForce cards do not support peer access at all: expected.
    """
    topo = facts.machine_topology
    if len(topo.gpus) < 2:
        return not_applicable("fewer than two GPUs" if topo.gpus else "no GPU topology known")
    if not topo.pairs:
        return not_applicable("no GPU pair connection reported (nvidia-smi topo -m / NVML not collected)")
    findings: list[Finding] = []
    by_path: dict[str, list[str]] = defaultdict(list)
    for pair in topo.pairs:
        by_path[pair.path or "?"].append(f"{pair.a}-{pair.b}")
    far = [pair for pair in topo.pairs if pair.path in ("SYS", "SOC")]
    if far:
        findings.append(
            Finding(
                Severity.WARNING,
                f"{counted(len(far), 'GPU pair')} cross the CPU sockets (SYS): {t.pair_list(far)} — their traffic goes over the "
                "socket interconnect, several times slower than within one socket",
                Fix(
                    "Give a job GPUs that share a socket; list them with `nvidia-smi topo -m` (same NUMA Affinity).",
                    t.same_socket_commands(topo),
                ),
                PAIR_EVIDENCE,
            )
        )
    findings += t.p2p_findings(facts, topo)
    summary = "GPU pairs: " + ", ".join(f"{len(pairs)}× {path}" for path, pairs in sorted(by_path.items()))
    data = {
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "path": p.path,
                "path_source": p.path_source,
                "p2p_read": p.p2p_read,
                "p2p_source": p.p2p_source,
            }
            for p in topo.pairs
        ]
    }
    return Outcome(summary, findings, data)


@check("TOPO003", area="topology", title="NVLinks are all up")
def nvlinks(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on GPUs built with NVLink (SXM boards), the links each GPU reports active against the
    number the part has (H100/H200/B200 18, A100 12, V100 6), links reported down, and SXM GPUs that show no
    NVLink path to each other at all. Where no link state is reported (NVML and `nvidia-smi nvlink -s` silent,
    as in a VM given one GPU), it says that it cannot tell rather than calling the links fine.

    Why it matters: an SXM system trains over NVLink. A link that is down costs its share of the bandwidth
    (each is one-eighteenth of an H100's); no NVLink at all sends everything over PCIe, 7-14x slower. Both are
    silent: everything still works.

    How to fix: reset the GPUs (`sudo nvidia-smi -r`, no process may use them) or reboot; on NVSwitch systems
    make sure the fabric manager runs (TOPO004); links that stay down after a reboot are a baseboard or cable
    fault for the vendor (collect `nvidia-bug-report.sh`).
    """
    topo = facts.machine_topology
    reported = [gpu for gpu in topo.gpus if gpu.nvlink is not None and gpu.nvlink.total]
    built_with = [gpu for gpu in topo.gpus if t.expected_links(gpu)]
    linked_pairs = [pair for pair in topo.pairs if pair.nvlinks]
    if not reported and not built_with:
        if linked_pairs:
            return ok(
                f"NVLink between {counted(len(linked_pairs), 'GPU pair')} "
                f"({', '.join(sorted({p.path for p in linked_pairs if p.path}))}); the state of each link was not "
                "collected",
                {"pairs_with_nvlink": len(linked_pairs)},
            )
        if not topo.gpus:
            return not_applicable("no GPU topology known")
        if topo.pairs:
            return not_applicable("no NVLink between these GPUs")
        return not_applicable(
            "whether these GPUs have NVLinks is not known: neither `nvidia-smi topo -m` nor `nvidia-smi nvlink -s` "
            "was collected"
        )
    findings: list[Finding] = []
    data: dict[str, Any] = {}
    for gpu in topo.gpus:
        expected = t.expected_links(gpu)
        state = gpu.nvlink
        data[str(gpu.index)] = {
            "expected": expected,
            "active": state.active if state else None,
            "reported": state.total if state else None,
            "down": state.down if state else None,
            "source": state.source if state else None,
        }
        findings += t.nvlink_findings(gpu, expected)
    findings += t.missing_nvlink_findings(topo, built_with, reported)
    if not reported and not findings:
        return t.nvlink_state_unknown(built_with, linked_pairs, data)
    active = sum(gpu.nvlink.active for gpu in reported if gpu.nvlink is not None)
    total = sum(gpu.nvlink.total for gpu in reported if gpu.nvlink is not None)
    summary = (
        f"{active} of {total} NVLinks active on {counted(len(reported), 'GPU')}"
        if reported
        else f"{counted(len(built_with), 'GPU')} built with NVLink; link state not reported"
    )
    return Outcome(summary, findings, data)


@check("TOPO004", area="topology", title="Fabric manager on NVSwitch systems")
def fabric_manager(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on machines with NVSwitches (HGX/DGX A100, H100, H200, B200), that the
    `nvidia-fabricmanager` service runs and every GPU finished its fabric registration (NVML fabric state).
    NVSwitches count as present when lspci lists them, and as implied when `nvidia-smi topo -m` links every GPU
    pair with the NV# only a switch gives (NV12 on A100, NV18 on H100/H200: the knowledge base's nvlink table)
    though lspci lists none, as in a VM or container. Where the service's state was not read (a container, no
    systemd), it says so instead of judging.

    Why it matters: without the fabric manager the NVSwitches route nothing, and CUDA refuses to start: torch
    says "Unexpected error from cudaGetDeviceCount() ... Error 802: system not yet initialized". Its version
    must match the driver's exactly.

    How to fix: install the fabric manager of the driver's branch and version
    (`sudo apt-get install nvidia-fabricmanager-<branch>=<driver version>-1`), then
    `sudo systemctl enable --now nvidia-fabricmanager`; read `journalctl -u nvidia-fabricmanager` if it fails.
    """
    topo = facts.machine_topology
    states = {index: state for index, state in topo.fabric_states.items() if state != "not_supported"}
    implied = t.switches_implied(topo, facts.pci_scan_available)
    if not topo.nvswitches and not states and implied is None:
        if not facts.pci_scan_available and len(topo.gpus) > 1:
            return not_applicable(
                "whether this machine has NVSwitches is not known: the PCI bus was not read (`lspci -d 10de: | grep "
                "-i bridge` lists them)"
            )
        return not_applicable(t.no_switch_words(topo))
    switches = f"{topo.nvswitches} NVSwitch(es) on the bus" if topo.nvswitches else f"NVSwitches implied by {implied}"
    data = {
        "nvswitches": topo.nvswitches,
        "nvswitches_implied_by": implied,
        "service": topo.fabric_manager,
        "fabric_states": topo.fabric_states,
    }
    fix = t.fabric_manager_fix(facts)
    findings: list[Finding] = []
    unfinished = {index: state for index, state in states.items() if state != "completed"}
    if unfinished:
        findings.append(
            Finding(
                Severity.PROBLEM,
                "GPU fabric registration not complete on GPU(s) "
                + ", ".join(f"{i} ({s.replace('_', ' ')})" for i, s in sorted(unfinished.items()))
                + ": CUDA fails with 'Error 802: system not yet initialized' until it is",
                fix,
                (Ev.NVML, Ev.FABRIC_MANAGER),
                cause="fabric-manager",
            )
        )
    if (topo.nvswitches or implied) and topo.fabric_manager in ("inactive", "failed", "not-installed", "deactivating"):
        words = "is not installed" if topo.fabric_manager == "not-installed" else f"is {topo.fabric_manager}"
        findings.append(
            Finding(
                Severity.PROBLEM,
                f"{switches} but nvidia-fabricmanager {words}",
                fix,
                (Ev.FABRIC_MANAGER, Ev.PCI_DEVICES if topo.nvswitches else Ev.NVIDIA_SMI_TOPO),
                cause="fabric-manager",
            )
        )
    if findings:
        return Outcome(findings[0].message, findings, data)
    if topo.fabric_manager is None and not states:
        return not_applicable(
            f"{switches}; whether the fabric manager runs, as it must for them to route, is not known: systemd was "
            "not asked (a container or a pasted report?) and NVML gave no fabric state — "
            "`systemctl status nvidia-fabricmanager` on the host tells",
            data,
        )
    return ok(
        f"{switches}; fabric manager {topo.fabric_manager or 'state unknown'}; fabric registration complete on "
        f"{counted(len(states), 'GPU')}"
        if states
        else f"{switches}; fabric manager {topo.fabric_manager}",
        data,
    )


@check("TOPO005", area="topology", title="This process's CPUs are near the GPUs")
def cpu_affinity(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the CPUs this process may run on (its affinity: taskset, numactl, a Slurm or container
    cgroup) against each GPU's NUMA node and nearest CPUs (sysfs `local_cpulist`, NVML, the "CPU Affinity"
    column of `nvidia-smi topo -m`, which is empty for GPUs none of the job's CPUs are near).

    Why it matters: data loading and host→device copies from the far socket's CPUs and memory cross the socket
    interconnect: lower copy bandwidth and higher latency for every batch.

    How to fix: run each rank on its GPU's node: `numactl --cpunodebind=N --membind=N python train.py`, or
    `taskset -c <GPU's CPU list>`; under Slurm request binding (`--gres-flags=enforce-binding`, `--cpu-bind`).
    """
    topo = facts.machine_topology
    if not topo.gpus:
        return not_applicable("no GPU topology known")
    findings = t.affinity_findings(facts, topo)
    nodes = sorted({gpu.numa_node for gpu in topo.gpus if gpu.numa_node is not None})
    data = {
        "process_cpus": topo.process_cpus,
        "numa_nodes": topo.numa_nodes,
        "gpus": {str(gpu.index): {"numa_node": gpu.numa_node, "cpus": gpu.cpu_affinity} for gpu in topo.gpus},
    }
    if findings:
        return Outcome(findings[0].message, findings, data)
    if topo.process_cpus is None and not any(gpu.cpu_affinity for gpu in topo.gpus):
        return not_applicable("neither the process's CPU affinity nor the GPUs' nearest CPUs are known", data)
    if len(nodes) <= 1 and len(topo.numa_nodes) <= 1:
        return ok("one NUMA node: every CPU is equally near the GPUs", data)
    # Without this process's CPU set, the topology table's CPU Affinity column speaks for the process that ran
    # nvidia-smi: it prints the CPUs of that process's set near each GPU, empty where there are none.
    matrix = facts.topology
    table_says = matrix is not None and bool(matrix.cpu_affinity) and all(matrix.cpu_affinity.values())
    if not topo.process_cpus and not table_says:
        return not_applicable(
            f"GPUs on NUMA node(s) {', '.join(map(str, nodes)) or '?'}; which CPUs this process may use is not known",
            data,
        )
    allowed = (
        f"this process may use CPUs {topo.process_cpus}"
        if topo.process_cpus
        else "nvidia-smi topo -m found CPUs of its own process near every GPU"
    )
    return ok(
        f"GPUs on NUMA node(s) {', '.join(map(str, nodes)) or '?'}; {allowed}",
        data,
        [
            Finding(
                Severity.INFO,
                "for the best host throughput bind each rank to its GPU's node (`numactl --cpunodebind=N --membind=N`)",
            )
        ],
    )
