"""Typed facts about AMD GPUs and the ROCm stack, whichever tool or file they were read from.

Read from ``amd-smi`` (JSON preferred, text), ``rocm-smi`` (text and ``--json``, ROCm 5 and 6 key
spellings), ``rocminfo``, the KFD sysfs topology (``/sys/class/kfd/kfd/topology/nodes/*``, read directly so
it works without any tool), ``/opt/rocm*/.info/version`` and a pasted ``collect_env``. As everywhere in
``facts``: ``None`` is unknown, parsers never raise, nothing is invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.facts.sources_state import Missing


@dataclass(frozen=True)
class AmdGpu:
    """One AMD GPU (or one compute partition of one, in CPX/DPX/QPX modes)."""

    index: int | None = None  # the tool's GPU number (amd-smi "gpu", rocm-smi "GPU[n]"/"cardN"); None from KFD/PCI
    name: str | None = None  # marketing name, "AMD Instinct MI210"; None when only a device id is known
    gfx_target: str | None = None  # LLVM target without features: "gfx90a", "gfx942", "gfx1100"
    gfx_features: str | None = None  # "sramecc+:xnack-" where the source prints them
    device_id: str | None = None  # PCI device id, lowercase hex without 0x: "740f"
    bus_id: str | None = None  # "0000:83:00.0" (domain added, lowercase)
    vram_mib: int | None = None
    compute_units: int | None = None
    numa_node: int | None = None
    render_minor: int | None = None  # /dev/dri/renderD<minor>
    unique_id: str | None = None
    compute_partition: str | None = None  # "SPX", "CPX", ...
    memory_partition: str | None = None  # "NPS1", ...
    vbios: str | None = None
    hive_id: str | None = None  # XGMI hive: GPUs sharing one are linked by XGMI
    sources: tuple[str, ...] = ()  # which tools said so: "amd-smi", "rocm-smi", "rocminfo", "kfd", "collect_env"
    # An integrated GPU (APU graphics: Radeon 780M, Raphael's 2-CU GPU) sharing system memory; None: not known.
    integrated: bool | None = None
    kfd_node: int | None = None  # KFD topology node id (rocminfo "Node", amd-smi list NODE_ID, rocm-smi "Node ID")
    partition_id: int | None = None  # amd-smi list PARTITION_ID: which partition of its physical GPU
    kernel_driver: str | None = None  # the driver bound to its PCI function (sysfs / lspci -k): "amdgpu", "vfio-pci"
    pci_description: str | None = None  # lspci's words for it, where only the bus names it

    @property
    def gfx(self) -> str | None:
        """ "gfx90a:sramecc+:xnack-" where features are known, else the bare target."""
        if self.gfx_target and self.gfx_features:
            return f"{self.gfx_target}:{self.gfx_features}"
        return self.gfx_target


@dataclass(frozen=True)
class AmdToolReport:
    """What one AMD tool (amd-smi, rocm-smi, rocminfo) said: its GPUs and the driver it names."""

    gpus: tuple[AmdGpu, ...] = ()
    driver_version: str | None = None  # as printed: "6.7.0", "7.0.14-17-pve", or /proc/version without spaces
    kernel_release: str | None = None  # the kernel the tool names ("5.15.0-164-generic"), or derived from /proc/version
    module_loaded: bool | None = None  # rocminfo's "ROCk module is loaded" line
    rocm_version: str | None = None  # where the tool prints it ("ROCm version: 6.2.1" in amd-smi's header)
    error: str | None = None  # the failure the tool printed instead of a report, verbatim
    other_devices: tuple[str, ...] = ()  # records that are not GPUs ("AI_NIC: 0" in amd-smi list)


@dataclass(frozen=True)
class GpuLink:
    """A link between two GPUs (or a GPU and a CPU node) in the KFD topology, or as rocm-smi --showtopo says."""

    from_node: int  # KFD node id (rocm-smi: its GPU index)
    to_node: int
    link_type: str  # "xgmi", "pcie", or the raw number as text when unknown
    hops: int | None = None
    weight: int | None = None
    to_cpu: bool = False


@dataclass(frozen=True)
class KfdNode:
    """One node of the KFD topology: a CPU socket or a GPU (partition)."""

    node_id: int
    is_gpu: bool
    gfx_target: str | None = None  # decoded from gfx_target_version: 90010 -> "gfx90a"
    device_id: str | None = None  # "740f"
    compute_units: int | None = None  # simd_count / simd_per_cu
    vram_bytes: int | None = None  # sum of mem_banks (heap type public/private); None when not in the capture
    numa_node: int | None = None
    render_minor: int | None = None
    bus_id: str | None = None  # from domain + location_id
    hive_id: str | None = None
    num_xcc: int | None = None
    cpu_cores: int | None = None  # cpu_cores_count for a CPU node
    name: str | None = None


@dataclass(frozen=True)
class KfdTopology:
    nodes: tuple[KfdNode, ...] = ()
    links: tuple[GpuLink, ...] = ()

    @property
    def gpu_nodes(self) -> tuple[KfdNode, ...]:
        return tuple(n for n in self.nodes if n.is_gpu)


@dataclass(frozen=True)
class AmdDriver:
    """The amdgpu kernel driver."""

    loaded: bool | None = None  # amdgpu in /proc/modules (None: not known)
    version: str | None = None  # amdgpu-dkms version ("6.3.6"), or the kernel release for an inbox driver
    inbox: bool | None = None  # True: the distro kernel's own amdgpu (the version is a kernel release)
    kfd_present: bool | None = None  # /sys/class/kfd or /dev/kfd exists


@dataclass(frozen=True)
class RocmInstall:
    """The ROCm user space found on the machine (or stated by a report)."""

    version: str | None = None  # "6.2.2"
    path: str | None = None  # "/opt/rocm-6.2.2"
    all_versions: tuple[str, ...] = ()  # several /opt/rocm-* side by side
    source: str | None = None  # ".info/version", "rocm-smi", "amd-smi", "collect_env"
    missing: Missing | None = None  # why version is None


@dataclass(frozen=True)
class AmdFacts:
    """Everything AMD the evidence says."""

    gpus: tuple[AmdGpu, ...] = ()
    driver: AmdDriver = field(default_factory=AmdDriver)
    rocm: RocmInstall = field(default_factory=RocmInstall)
    kfd: KfdTopology | None = None
    tools: tuple[str, ...] = ()  # the AMD tools that answered: "amd-smi", "rocm-smi", "rocminfo"
    tool_errors: dict[str, str] = field(default_factory=dict)  # tool -> its error text, verbatim
    tools_absent: tuple[str, ...] = ()  # the AMD tools looked for and not installed ("not found")

    @property
    def present(self) -> bool:
        return bool(self.gpus)
