"""Build the one ``MachineTopology`` from every source that says something about the machine's wiring.

Precedence, per value: what the driver says directly (NVML) beats what nvidia-smi printed, which beats
sysfs and lspci (which know nothing of NVLink).  ``nvidia-smi topo -m`` names GPU pairs in its own words
(NV#, PIX, ..., SYS) and those are kept as printed; NVML's common ancestor fills the pairs it did not
print.  A pasted ``topo -m`` alone (``check --from topo.txt``) still gives a useful view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.facts.json_values import json_dict
from gpudoctor.facts.model import GpuInfo, PciDevice
from gpudoctor.facts.nvml_topology import NvmlTopology, cpu_list, nvml_topology
from gpudoctor.facts.topology_model import (
    GpuPair,
    MachineTopology,
    Nic,
    NvLinkState,
    P2PMatrix,
    PcieLink,
    TopoGpu,
    TopoMatrix,
    nvlink_count,
)

if TYPE_CHECKING:
    from gpudoctor.facts.amd_model import KfdTopology
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.topology_model import AmdTopoGpu, XgmiLink

PCI_NEAR = ("PIX", "PXB")


def fabric_manager_state(text: object) -> str | None:
    """``systemctl show nvidia-fabricmanager --property=LoadState,ActiveState,SubState`` in one word."""
    if not isinstance(text, str):
        return None
    values = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    if values.get("LoadState") == "not-found":
        return "not-installed"
    state = values.get("ActiveState", "").strip()
    return state or None


def form_factor(name: str | None) -> str | None:
    """ "sxm" for NVLink-socketed parts (SXM boards), "pcie" for cards, None when the name says too little."""
    from gpudoctor.kb.gpu_specs import gpu_spec_for_name

    if not name:
        return None
    upper = name.upper()
    if "SXM" in upper:
        return "sxm"
    spec = gpu_spec_for_name(name)
    if spec is not None:
        return "sxm" if spec.nvlink_gbs_bidirectional else "pcie"
    return "pcie" if "PCIE" in upper or upper.endswith(" NVL") else None


def _pcie_from_gpuinfo(gpu: GpuInfo | None, source: str) -> PcieLink | None:
    if gpu is None or all(
        getattr(gpu, f) is None for f in ("pcie_gen_current", "pcie_gen_max", "pcie_width_current", "pcie_width_max")
    ):
        return None
    return PcieLink(
        gen_current=gpu.pcie_gen_current,
        gen_max=gpu.pcie_gen_max,
        width_current=gpu.pcie_width_current,
        width_max=gpu.pcie_width_max,
        source=source,
    )


def _pcie_from_pci(device: PciDevice | None) -> PcieLink | None:
    from gpudoctor.kb.gpu_specs import pcie_gen_for_speed

    if device is None:
        return None
    width = device.current_link_width
    link = PcieLink(
        gen_current=pcie_gen_for_speed(device.current_link_speed),
        gen_max=pcie_gen_for_speed(device.max_link_speed),
        width_current=0 if width == 0 else width or None,  # 0 is sysfs's way of saying the link is down
        width_max=device.max_link_width or None,
        source="sysfs",
    )
    if all(value is None for value in (link.gen_current, link.gen_max, link.width_current, link.width_max)):
        return None
    return link


def _fill_link(link: PcieLink, other: PcieLink | None) -> PcieLink:
    """``link`` with what it left unknown taken from ``other``."""
    if other is None:
        return link
    return PcieLink(
        gen_current=link.gen_current if link.gen_current is not None else other.gen_current,
        gen_max=link.gen_max if link.gen_max is not None else other.gen_max,
        width_current=link.width_current if link.width_current is not None else other.width_current,
        width_max=link.width_max if link.width_max is not None else other.width_max,
        source=link.source or other.source,
        replay_count=link.replay_count if link.replay_count is not None else other.replay_count,
    )


# The sources the merged view reads, in the order ``MachineTopology.sources`` names them.
TOPOLOGY_SOURCES = (
    EvidenceKey.NVML,
    EvidenceKey.NVIDIA_SMI_TOPO,
    EvidenceKey.NVIDIA_SMI_P2P,
    EvidenceKey.NVIDIA_SMI_NVLINK,
    EvidenceKey.NVIDIA_SMI_XML,
    EvidenceKey.PCI_DEVICES,
    EvidenceKey.LSPCI,
    EvidenceKey.CPU_TOPOLOGY,
    EvidenceKey.FABRIC_MANAGER,
)


@dataclass(frozen=True)
class TopologySources:
    """Everything the merged view is built from, already parsed."""

    gpus: list[GpuInfo] = field(default_factory=list)  # the merged GPU inventory
    nvml_gpus: list[GpuInfo] = field(default_factory=list)  # NVML's GPUs, when NVML initialised
    pci_devices: list[PciDevice] = field(default_factory=list)
    pci_gpus: list[PciDevice] = field(default_factory=list)
    matrix: TopoMatrix | None = None  # nvidia-smi topo -m
    p2p: P2PMatrix | None = None  # nvidia-smi topo -p2p r
    nvlinks: dict[int, NvLinkState] = field(default_factory=dict)  # nvidia-smi nvlink -s
    nvml: NvmlTopology = field(default_factory=NvmlTopology)
    cpu_topology: dict[str, object] = field(default_factory=dict)  # cpu-topology.json
    fabric_manager: str | None = None  # fabricmanager.txt
    sources: list[str] = field(default_factory=list)  # the sources that said anything
    kfd: KfdTopology | None = None  # kfd-topology.json: AMD GPUs and their XGMI links
    amd_names: dict[str, str] = field(default_factory=dict)  # AMD GPU bus id without function -> marketing name


def _amd_sources(facts: Facts) -> tuple[KfdTopology | None, dict[str, str]]:
    """The KFD topology and the AMD tools' GPU names; nothing asked of the AMD facts on a machine without KFD."""
    data = facts.evidence.json(EvidenceKey.KFD_TOPOLOGY.value)
    if not (isinstance(data, dict) and data.get("nodes")):
        return None, {}  # no KFD topology: the AMD parsers are not even loaded
    from gpudoctor.facts.kfd_topology import parse_kfd_topology, physical_bus

    kfd = parse_kfd_topology(data)
    if kfd is None or not kfd.gpu_nodes:
        return None, {}
    names = {physical_bus(gpu.bus_id) or "": gpu.name for gpu in facts.amd.gpus if gpu.bus_id and gpu.name}
    return kfd, names


def _amd_topology(given: TopologySources) -> tuple[tuple[AmdTopoGpu, ...], tuple[XgmiLink, ...]]:
    if given.kfd is None:
        return (), ()
    from gpudoctor.facts.topology_xgmi import amd_topology  # only a machine with a KFD topology needs it

    return amd_topology(given.kfd, given.amd_names)


def topology_sources(facts: Facts) -> TopologySources:
    """What the merged view needs, read from one run's facts and evidence."""
    evidence = facts.evidence
    kfd, amd_names = _amd_sources(facts)
    return TopologySources(
        gpus=list(facts.gpus),
        nvml_gpus=list(facts.nvml.gpus) if facts.nvml.init_ok else [],
        pci_devices=list(facts.pci_devices),
        pci_gpus=list(facts.pci_gpus),
        matrix=facts.topology,
        p2p=facts.topology_p2p,
        nvlinks=facts.nvlink_status,
        nvml=nvml_topology(evidence.json(EvidenceKey.NVML.value)),
        cpu_topology=json_dict(evidence.json(EvidenceKey.CPU_TOPOLOGY.value)),
        fabric_manager=evidence.text(EvidenceKey.FABRIC_MANAGER.value),
        sources=[
            key.value
            for key in TOPOLOGY_SOURCES
            if evidence.get(key.value) is not None and (evidence.text(key.value) or "").strip()
        ]
        + ([EvidenceKey.KFD_TOPOLOGY.value] if kfd is not None else []),
        kfd=kfd,
        amd_names=amd_names,
    )


def build_topology(facts: Facts) -> MachineTopology:
    """The merged view; never raises on missing evidence (an empty topology is a valid answer)."""
    return merge_topology(topology_sources(facts))


def merge_topology(given: TopologySources) -> MachineTopology:
    """The one ``MachineTopology`` from its parsed sources (see the module's precedence rules)."""
    matrix = given.matrix
    p2p = given.p2p
    nvlinks = given.nvlinks
    nvml = given.nvml
    pci = {device.address: device for device in given.pci_devices}
    nvml_gpus = {gpu.bus_id: gpu for gpu in given.nvml_gpus if gpu.bus_id}

    inventory = list(given.gpus)
    if not inventory and not (matrix is not None and matrix.gpus):
        # No driver answered: sysfs (or a pasted lspci block) still knows each GPU's PCIe link.
        inventory = [
            GpuInfo(index=position, name=device.description, bus_id=device.address)
            for position, device in enumerate(given.pci_gpus)
        ]
    indices = [gpu.index for gpu in inventory if gpu.index is not None]
    if not indices and matrix is not None:
        indices = list(matrix.gpus)
    by_index = {gpu.index: gpu for gpu in inventory}
    # An empty "CPU Affinity" cell means no CPU of the caller's (cgroup-limited) set is near that GPU, but only
    # when some other GPU's cell is filled: Windows drivers leave every cell empty, which says nothing.
    printed_affinity = dict(matrix.cpu_affinity) if matrix is not None else {}
    if printed_affinity and not any(printed_affinity.values()):
        printed_affinity = {}
    gpus: list[TopoGpu] = []
    fabric_states: dict[int, str] = {}
    for index in sorted(set(indices)):
        info = by_index.get(index)
        bus = info.bus_id if info else None
        device = pci.get(bus) if bus else None
        from_nvml = nvml.gpus.get(index) if nvml else None
        link = (_pcie_from_gpuinfo(nvml_gpus.get(bus), "nvml") if bus else None) or PcieLink()
        if from_nvml is not None and from_nvml.pcie is not None:
            link = _fill_link(link, from_nvml.pcie)
        link = _fill_link(link, _pcie_from_gpuinfo(info, "nvidia-smi -q -x"))
        numa_candidates = [
            device.numa_node if device else None,
            from_nvml.numa_node if from_nvml else None,
            matrix.numa_affinity.get(index) if matrix else None,
        ]
        cpu_candidates = [
            device.local_cpulist if device else None,
            from_nvml.cpu_affinity if from_nvml else None,
            printed_affinity.get(index),
        ]
        gpus.append(
            TopoGpu(
                index=index,
                name=info.name if info else None,
                bus_id=bus,
                numa_node=next((value for value in numa_candidates if value is not None), None),
                cpu_affinity=next((value for value in cpu_candidates if value is not None), None),
                form_factor=form_factor(info.name if info else None),
                pcie=_fill_link(link, _pcie_from_pci(device)),
                nvlink=(
                    from_nvml.nvlink
                    if from_nvml and from_nvml.nvlink is not None
                    else nvlinks.get(index)
                    if nvlinks
                    else None
                ),
            )
        )
        if from_nvml is not None and from_nvml.fabric_state:
            fabric_states[index] = from_nvml.fabric_state

    pairs: list[GpuPair] = []
    for position, a in enumerate(gpu.index for gpu in gpus):
        for b in [g.index for g in gpus][position + 1 :]:
            pair = _pair(a, b, matrix, p2p, nvml)
            if pair.path or pair.p2p_read:
                pairs.append(pair)

    nics: list[Nic] = []
    nics_links: dict[tuple[int, str], str] = {}
    if matrix is not None:
        for label in matrix.nics:
            nearest: list[int] = []
            for gpu in gpus:
                path = matrix.link(f"GPU{gpu.index}", label)
                if path:
                    nics_links[(gpu.index, label)] = path
                    if path in PCI_NEAR:
                        nearest.append(gpu.index)
            nics.append(Nic(label=label, name=matrix.nic_names.get(label), nearest_gpus=nearest))

    numa_nodes: dict[int, str] = {}
    process_cpus: str | None = None
    cpu = given.cpu_topology
    if cpu:
        nodes = cpu.get("numa_nodes")
        if isinstance(nodes, dict):
            numa_nodes = {
                int(k): v for k, v in nodes.items() if isinstance(k, str) and k.isdecimal() and isinstance(v, str)
            }
        allowed = cpu.get("process_cpus")
        if (
            isinstance(allowed, list)
            and allowed
            and all(isinstance(c, int) and not isinstance(c, bool) for c in allowed)
        ):
            process_cpus = cpu_list(allowed)
    amd_gpus, xgmi_links = _amd_topology(given)
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        nics=nics,
        nics_links=nics_links,
        numa_nodes=numa_nodes,
        process_cpus=process_cpus,
        nvswitches=sum(1 for device in given.pci_devices if device.is_nvswitch),
        fabric_manager=fabric_manager_state(given.fabric_manager),
        fabric_states=fabric_states,
        sources=list(given.sources),
        amd_gpus=amd_gpus,
        xgmi_links=xgmi_links,
    )


def _pair(a: int, b: int, matrix: TopoMatrix | None, p2p: P2PMatrix | None, nvml: NvmlTopology) -> GpuPair:
    """What is known of one GPU pair: ``topo -m`` / ``topo -p2p r`` as printed, else NVML's word."""
    path: str | None = None
    path_source: str | None = None
    p2p_read: str | None = None
    p2p_source: str | None = None
    printed = matrix.gpu_link(a, b) if matrix else None
    derived = nvml.pairs.get((a, b)) if nvml else None
    if printed:
        path, path_source = printed, "nvidia-smi topo -m"
    elif derived is not None and derived.path:
        path, path_source = derived.path, "nvml"
    status = p2p.get(a, b) if p2p else None
    if status:
        p2p_read, p2p_source = status, "nvidia-smi topo -p2p r"
    elif derived is not None and derived.p2p_read:
        p2p_read, p2p_source = derived.p2p_read, "nvml"
    return GpuPair(a=a, b=b, path=path, path_source=path_source, p2p_read=p2p_read, p2p_source=p2p_source)


def nvswitch_fabric(topo: MachineTopology, gpus: set[int] | None = None) -> str | None:
    """Whether the GPUs meet in an NVSwitch fabric: "present" when NVSwitches are on the PCI bus, "inferred" when
    some GPU's NVLinks add up to more than any GPU has (direct cabling cannot do that), or when every pair shows
    the NV# a switch gives that GPU model (``kb.nvswitch_pair_links``: NV12 on A100, NV18 on H100), else None.

    Either way every known pair among ``gpus`` (all GPUs by default) must be NV#: a switch that leaves some pair on
    PCIe is not the picture of one fabric.
    """
    from gpudoctor.kb.gpu_specs import max_nvlinks_per_gpu

    wanted = gpus if gpus is not None else {gpu.index for gpu in topo.gpus}
    paths = {
        (pair.a, pair.b): pair.path
        for pair in topo.pairs
        if pair.a in wanted and pair.b in wanted and pair.a != pair.b and pair.path
    }
    if len(wanted) < 2 or not paths or not all(nvlink_count(path) for path in paths.values()):
        return None
    if isinstance(topo.nvswitches, int) and topo.nvswitches > 0:
        return "present"
    per_gpu: dict[int, int] = {}
    for (a, b), path in paths.items():
        for gpu in (a, b):
            per_gpu[gpu] = per_gpu.get(gpu, 0) + (nvlink_count(path) or 0)
    most = max_nvlinks_per_gpu()
    if most is not None and max(per_gpu.values()) > most:
        return "inferred"
    switch_links = {index: _switch_pair_links(topo, index) for index in per_gpu}
    through_switch = all(
        switch_links[a] is not None and nvlink_count(path) == switch_links[a] == switch_links[b]
        for (a, b), path in paths.items()
    )
    return "inferred" if through_switch else None


def _switch_pair_links(topo: MachineTopology, index: int) -> int | None:
    from gpudoctor.kb.gpu_specs import nvswitch_pair_links

    gpu = topo.gpu(index)
    return nvswitch_pair_links(gpu.name) if gpu is not None and gpu.form_factor == "sxm" and gpu.name else None


def gpus_with_nvlink_peers(topo: MachineTopology) -> set[int]:
    return {index for pair in topo.pairs if nvlink_count(pair.path) for index in (pair.a, pair.b)}
