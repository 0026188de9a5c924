"""SYNTHETIC ``MachineTopology`` cases for the topology renderers, written by hand.

Each is modelled on a real ``nvidia-smi topo -m`` capture in the fixture corpus (``B/``), named in its
comment, and filled in where the capture is silent (GPU names, bus ids, PCIe links, NVLink ports,
fabric manager): those parts are plausible for the machine, not captured.  They are built fresh on each
call of a ``synthetic_*`` builder; the ``SYNTHETIC_*`` constants are one build of each.
"""

from __future__ import annotations

from dataclasses import replace

from gpudoctor.facts.topology_model import (
    GpuPair,
    MachineTopology,
    Nic,
    NvLinkPort,
    NvLinkState,
    PcieLink,
    TopoGpu,
)

NEAR = ("PIX", "PXB")


def _matrix_pairs(rows: list[str], source: str = "nvidia-smi topo -m") -> list[GpuPair]:
    """GPU pairs from the upper triangle of a topo -m GPU block (one row of cells per GPU)."""
    cells = [row.split() for row in rows]
    return [
        GpuPair(a, b, path=cells[a][b], path_source=source) for a in range(len(cells)) for b in range(a + 1, len(cells))
    ]


def _nic_links(rows: list[str], nics: int) -> dict[tuple[int, str], str]:
    return {(gpu, f"NIC{n}"): cell for gpu, row in enumerate(rows) for n, cell in enumerate(row.split()[:nics])}


def _nics(links: dict[tuple[int, str], str], names: list[str]) -> list[Nic]:
    return [
        Nic(f"NIC{n}", name, sorted(g for (g, nic), path in links.items() if nic == f"NIC{n}" and path in NEAR))
        for n, name in enumerate(names)
    ]


def _ports_to_peers(pairs: list[GpuPair], gpu: int, bus_ids: list[str], down: tuple[int, ...] = ()) -> NvLinkState:
    """One port per NVLink of each NV# pair the GPU is in, numbered in peer order, ``down`` ones inactive."""
    ports: list[NvLinkPort] = []
    for pair in pairs:
        if gpu not in (pair.a, pair.b) or not pair.nvlinks:
            continue
        peer = pair.b if pair.a == gpu else pair.a
        for _ in range(pair.nvlinks):
            link = len(ports)
            ports.append(NvLinkPort(link, link not in down, 2, remote_bus_id=bus_ids[peer], remote_type="gpu"))
    return NvLinkState(ports=ports, source="nvml")


def synthetic_h100_nvswitch() -> MachineTopology:
    """SYNTHETIC 8× H100 SXM, NV18 through 4 NVSwitches, 2 NUMA nodes, 10 NICs.

    The GPU and NIC paths follow B/nccl-1453-h100-nv18-9nics-tabs-excerpt.txt (NIC0 on the far socket,
    one PIX NIC per GPU); NIC9 is added (a second storage NIC on socket 1) to make ten columns like
    B/nchc-nano4-8x-h200-nv18-10nics-slurm-cgroup-cpu-affinity-empty.txt.
    """
    gpu_rows = [" ".join("X" if a == b else "NV18" for b in range(8)) for a in range(8)]
    nic_rows = [
        "SYS SYS SYS SYS SYS NODE NODE NODE PIX NODE",
        "SYS SYS SYS SYS SYS NODE NODE PIX NODE NODE",
        "SYS SYS SYS SYS SYS NODE PIX NODE NODE NODE",
        "SYS SYS SYS SYS SYS PIX NODE NODE NODE NODE",
        "SYS NODE NODE NODE PIX SYS SYS SYS SYS SYS",
        "SYS NODE NODE PIX NODE SYS SYS SYS SYS SYS",
        "SYS NODE PIX NODE NODE SYS SYS SYS SYS SYS",
        "SYS PIX NODE NODE NODE SYS SYS SYS SYS SYS",
    ]
    bus = [
        "0000:18:00.0",
        "0000:2a:00.0",
        "0000:3a:00.0",
        "0000:5d:00.0",
        "0000:9a:00.0",
        "0000:ab:00.0",
        "0000:ba:00.0",
        "0000:db:00.0",
    ]
    links = _nic_links(nic_rows, 10)
    gpus = [
        TopoGpu(
            i,
            "NVIDIA H100 80GB HBM3",
            bus[i],
            numa_node=i // 4,
            cpu_affinity="0-79" if i < 4 else "80-159",
            form_factor="sxm",
            pcie=PcieLink(5, 5, 16, 16, source="nvml", replay_count=0),
            nvlink=NvLinkState([NvLinkPort(n, True, 4, None, "switch") for n in range(18)], source="nvml"),
        )
        for i in range(8)
    ]
    pairs = [replace(pair, p2p_read="OK", p2p_source="nvidia-smi topo -p2p r") for pair in _matrix_pairs(gpu_rows)]
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        nics=_nics(links, [f"mlx5_{n}" for n in range(10)]),
        nics_links=links,
        numa_nodes={0: "0-79", 1: "80-159"},
        process_cpus="0-159",
        nvswitches=4,
        fabric_manager="active",
        fabric_states=dict.fromkeys(range(8), "completed"),
        sources=["nvml", "nvidia-smi topo -m", "nvidia-smi topo -p2p r", "sysfs"],
    )


def synthetic_dgx1_v100() -> MachineTopology:
    """SYNTHETIC DGX-1 V100 hybrid cube mesh: NV1/NV2 between some pairs, SYS between the rest.

    From B/nccl-tests-29-dgx1-v100-nv1-nv2-hybrid-cube-mesh-excerpt.txt; the excerpt drops GPU7's row,
    which is completed here from its column (the matrix is symmetric).  Each V100 has 6 NVLinks.
    """
    gpu_rows = [
        "X   NV2 NV2 NV1 NV1 SYS SYS SYS",
        "NV2 X   NV1 NV2 SYS NV1 SYS SYS",
        "NV2 NV1 X   NV1 SYS SYS NV2 SYS",
        "NV1 NV2 NV1 X   SYS SYS SYS NV2",
        "NV1 SYS SYS SYS X   NV2 NV2 NV1",
        "SYS NV1 SYS SYS NV2 X   NV1 NV2",
        "SYS SYS NV2 SYS NV2 NV1 X   NV1",
        "SYS SYS SYS NV2 NV1 NV2 NV1 X",
    ]
    nic_rows = ["NODE NODE", "NODE NODE", "PIX PIX", "PIX PIX", "SYS SYS", "SYS SYS", "SYS SYS", "SYS SYS"]
    bus = [
        "0000:06:00.0",
        "0000:07:00.0",
        "0000:0a:00.0",
        "0000:0b:00.0",
        "0000:85:00.0",
        "0000:86:00.0",
        "0000:89:00.0",
        "0000:8a:00.0",
    ]
    pairs = _matrix_pairs(gpu_rows)
    links = _nic_links(nic_rows, 2)
    gpus = [
        TopoGpu(
            i,
            "Tesla V100-SXM2-16GB",
            bus[i],
            numa_node=i // 4,
            cpu_affinity="0-23,48-71" if i < 4 else "24-47,72-95",
            form_factor="sxm",
            pcie=PcieLink(3, 3, 16, 16, source="nvml"),
            nvlink=_ports_to_peers(pairs, i, bus),
        )
        for i in range(8)
    ]
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        nics=_nics(links, ["mlx5_0", "mlx5_1"]),
        nics_links=links,
        numa_nodes={0: "0-23,48-71", 1: "24-47,72-95"},
        process_cpus="0-95",
        sources=["nvml", "nvidia-smi topo -m"],
    )


def synthetic_pcie_8gpu_2socket() -> MachineTopology:
    """SYNTHETIC 8 PCIe GPUs on 2 sockets: PIX pairs behind shared switches, PHB within a socket, SYS across.

    Paths and CPU lists from B/nccl-1439-8gpu-pcie-pix-phb-sys-2socket.txt (the GPU model is not in the
    capture; an L40S is assumed).  No NVLink, no NICs.
    """
    gpu_rows = [
        "X   PIX PHB PHB SYS SYS SYS SYS",
        "PIX X   PHB PHB SYS SYS SYS SYS",
        "PHB PHB X   PIX SYS SYS SYS SYS",
        "PHB PHB PIX X   SYS SYS SYS SYS",
        "SYS SYS SYS SYS X   PIX PHB PHB",
        "SYS SYS SYS SYS PIX X   PHB PHB",
        "SYS SYS SYS SYS PHB PHB X   PIX",
        "SYS SYS SYS SYS PHB PHB PIX X",
    ]
    gpus = [
        TopoGpu(
            i,
            "NVIDIA L40S",
            f"0000:{0x1B + 0x10 * i:02x}:00.0",
            numa_node=i // 4,
            cpu_affinity="0-13,28-41" if i < 4 else "14-27,42-55",
            form_factor="pcie",
            pcie=PcieLink(4, 4, 16, 16, source="sysfs"),
            nvlink=NvLinkState([], source="nvml"),
        )
        for i in range(8)
    ]
    return MachineTopology(
        gpus=gpus,
        pairs=_matrix_pairs(gpu_rows),
        numa_nodes={0: "0-13,28-41", 1: "14-27,42-55"},
        sources=["nvidia-smi topo -m", "sysfs"],
    )


def synthetic_2x_rtx5090_phb() -> MachineTopology:
    """SYNTHETIC 2× RTX 5090 on one host bridge, peer reads refused by the GPU (GNS).

    From B/club3090-1229-2x-rtx5090-phb-full.txt and B/club3090-1229-2x-rtx5090-topo-p2p-rw-GNS.txt.
    """
    gpus = [
        TopoGpu(
            i,
            "NVIDIA GeForce RTX 5090",
            f"0000:{0x01 + 0x80 * i:02x}:00.0",
            numa_node=0,
            cpu_affinity="0-63",
            form_factor="pcie",
            pcie=PcieLink(1, 5, 16, 16, source="nvml"),
        )
        for i in range(2)
    ]
    pairs = [GpuPair(0, 1, "PHB", "nvidia-smi topo -m", "GNS", "nvidia-smi topo -p2p r")]
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        numa_nodes={0: "0-63"},
        process_cpus="0-63",
        sources=["nvidia-smi topo -m", "nvidia-smi topo -p2p r"],
    )


def synthetic_single_gpu() -> MachineTopology:
    """SYNTHETIC one H100 SXM visible in a VM: no peers (B/gpuexporter-h100-sxm-single-visible-590.48.01.txt)."""
    gpu = TopoGpu(
        0,
        "NVIDIA H100 80GB HBM3",
        "0000:00:05.0",
        numa_node=0,
        cpu_affinity="0-19",
        form_factor="sxm",
        pcie=PcieLink(5, 5, 16, 16, source="nvml"),
        nvlink=NvLinkState([NvLinkPort(n, True, 4) for n in range(18)], source="nvidia-smi nvlink -s"),
    )
    return MachineTopology(gpus=[gpu], numa_nodes={0: "0-19"}, sources=["nvidia-smi topo -m", "nvml"])


def synthetic_degraded() -> MachineTopology:
    """SYNTHETIC 4× A100 SXM4 (HGX A100 4-GPU: NV4 between every pair, 12 links each), damaged:
    the NVLinks GPU1 3 and 7 <-> GPU2 4 and 5 are down (so that pair shows NV2), and GPU3's PCIe link
    trained to x8 of x16 and retried 12 times.  The healthy paths are those of the 4-GPU board; the faults
    are made up.
    """
    bus = ["0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c1:00.0"]
    pairs = [
        GpuPair(a, b, "NV2" if (a, b) == (1, 2) else "NV4", "nvidia-smi topo -m", "OK", "nvml")
        for a in range(4)
        for b in range(a + 1, 4)
    ]
    healthy = [GpuPair(a, b, "NV4") for a in range(4) for b in range(a + 1, 4)]
    gpus = []
    for i in range(4):
        nvlink = _ports_to_peers(healthy, i, bus, down=(4, 5) if i == 2 else ())
        if i == 1:  # GPU1's ports are not cabled in peer order: 3 and 7 (down) go to GPU2
            peers = [0, 0, 0, 2, 0, 3, 3, 2, 2, 2, 3, 3]
            ports = [
                replace(port, remote_bus_id=bus[peer], active=port.link not in (3, 7))
                for port, peer in zip(nvlink.ports, peers)
            ]
            nvlink = replace(nvlink, ports=ports + nvlink.ports[len(ports) :])
        width = 8 if i == 3 else 16
        gpus.append(
            TopoGpu(
                i,
                "NVIDIA A100-SXM4-80GB",
                bus[i],
                numa_node=i // 2,
                cpu_affinity="0-31" if i < 2 else "32-63",
                form_factor="sxm",
                pcie=PcieLink(4, 4, width, 16, source="nvml", replay_count=12 if i == 3 else 0),
                nvlink=nvlink,
            )
        )
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        numa_nodes={0: "0-31", 1: "32-63"},
        process_cpus="0-63",
        fabric_manager="not-installed",
        sources=["nvml", "nvidia-smi topo -m"],
    )


def synthetic_10gpu_pxb() -> MachineTopology:
    """SYNTHETIC 10 PCIe GPUs, five behind one PCIe switch per socket (PXB inside, SYS across), two NICs
    on the switches.  Modelled on the 2-socket PCIe box above, widened to ten cards (a common 4U chassis)."""

    def path(a: int, b: int) -> str:
        return "X" if a == b else ("PXB" if a // 5 == b // 5 else "SYS")

    gpu_rows = [" ".join(path(a, b) for b in range(10)) for a in range(10)]
    nic_rows = [("PXB SYS" if a < 5 else "SYS PXB") for a in range(10)]
    links = _nic_links(nic_rows, 2)
    gpus = [
        TopoGpu(
            i,
            "NVIDIA RTX 6000 Ada Generation",
            f"0000:{0x11 + 0x10 * i:02x}:00.0",
            numa_node=i // 5,
            cpu_affinity="0-23" if i < 5 else "24-47",
            form_factor="pcie",
            pcie=PcieLink(4, 4, 16, 16, source="sysfs"),
        )
        for i in range(10)
    ]
    return MachineTopology(
        gpus=gpus,
        pairs=_matrix_pairs(gpu_rows),
        nics=_nics(links, ["mlx5_0", "mlx5_1"]),
        nics_links=links,
        numa_nodes={0: "0-23", 1: "24-47"},
        sources=["nvidia-smi topo -m"],
    )


def synthetic_empty() -> MachineTopology:
    """SYNTHETIC nothing known: no GPU answered and no topo -m was captured."""
    return MachineTopology()


# The cases themselves (frozen: a test that wants a variant builds one with dataclasses.replace).
SYNTHETIC_H100_NVSWITCH = synthetic_h100_nvswitch()
SYNTHETIC_DGX1_V100 = synthetic_dgx1_v100()
SYNTHETIC_PCIE_8GPU_2SOCKET = synthetic_pcie_8gpu_2socket()
SYNTHETIC_2X_RTX5090_PHB = synthetic_2x_rtx5090_phb()
SYNTHETIC_SINGLE_GPU = synthetic_single_gpu()
SYNTHETIC_DEGRADED = synthetic_degraded()
SYNTHETIC_10GPU_PXB = synthetic_10gpu_pxb()
SYNTHETIC_EMPTY = synthetic_empty()

SYNTHETIC_TOPOLOGIES = {
    "h100-nvswitch": SYNTHETIC_H100_NVSWITCH,
    "dgx1-v100": SYNTHETIC_DGX1_V100,
    "pcie-8gpu-2socket": SYNTHETIC_PCIE_8GPU_2SOCKET,
    "2x-rtx5090-phb": SYNTHETIC_2X_RTX5090_PHB,
    "single-gpu": SYNTHETIC_SINGLE_GPU,
    "degraded": SYNTHETIC_DEGRADED,
    "10gpu-pxb": SYNTHETIC_10GPU_PXB,
    "empty": SYNTHETIC_EMPTY,
}
