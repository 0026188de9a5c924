"""Typed facts parsed from evidence.

``None`` always means "unknown / not reported"; parsers never raise and never
invent values.  Where the knowledge base fills a gap, the ``*_source`` field
says so.  Every class is frozen: a fact, once parsed, is never changed by a
check or another parser (a merge builds a new value with ``dataclasses.replace``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MigDevice:
    gpu_index: int | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    mig_device_index: int | None = None
    profile: str | None = None  # "3g.40gb"
    uuid: str | None = None
    memory_total_mib: int | None = None


@dataclass(frozen=True)
class GpuInfo:
    """One physical GPU as one source describes it."""

    index: int | None = None
    name: str | None = None
    bus_id: str | None = None  # normalised to the sysfs form, "0000:01:00.0"
    uuid: str | None = None
    serial: str | None = None
    brand: str | None = None  # "GeForce", "Tesla", "NVIDIA"...
    architecture: str | None = None  # "Ampere"
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    compute_capability: str | None = None  # "8.6"
    compute_capability_source: str | None = None  # "nvml", "nvidia-smi", "knowledge base"
    compute_mode: str | None = None  # "Default", "Exclusive_Process", "Prohibited", "Exclusive_Thread"
    persistence_mode: bool | None = None
    mig_mode_current: str | None = None  # "Enabled" / "Disabled"; None when not supported (N/A)
    mig_mode_pending: str | None = None
    mig_devices: list[MigDevice] = field(default_factory=list)
    driver_model: str | None = None  # "WDDM" / "TCC" on Windows
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    minor_number: int | None = None


@dataclass(frozen=True)
class SmiError:
    """nvidia-smi (or NVML) failed; ``kind`` is a stable key, ``message`` its own words."""

    kind: str  # see gpudoctor.facts.nvidia_smi_text.ERROR_KINDS
    message: str
    detail: str | None = None  # e.g. the NVML library version in a mismatch message


@dataclass(frozen=True)
class SmiReport:
    """What one nvidia-smi output (XML or table) says."""

    driver_version: str | None = None
    cuda_version: str | None = None  # the highest CUDA the driver supports, "12.2"
    attached_gpus: int | None = None
    gpus: list[GpuInfo] = field(default_factory=list)
    error: SmiError | None = None
    schema: str | None = None  # XML DTD version, "v12"; table layout for text


@dataclass(frozen=True)
class KernelModule:
    """The loaded NVIDIA kernel module, from /proc/driver/nvidia/version."""

    version: str | None = None  # "535.54.03"; L4T "35.3.1" on Jetson
    flavor: str | None = None  # "proprietary", "open", "l4t"
    architecture: str | None = None  # "x86_64", "aarch64"
    gcc_version: str | None = None
    raw_first_line: str | None = None


@dataclass(frozen=True)
class NvccInfo:
    release: str | None = None  # "12.8"
    version: str | None = None  # "12.8.93"
    build: str | None = None  # "cuda_12.8.r12.8/compiler.35583870_0"


@dataclass(frozen=True)
class LoaderCacheEntry:
    soname: str  # "libcudnn.so.8"
    arch: str | None  # "libc6,x86-64"
    path: str


@dataclass(frozen=True)
class PciDevice:
    address: str  # "0000:01:00.0"
    vendor_id: str | None = None  # "10de"
    device_id: str | None = None  # "2204"
    class_code: str | None = None  # "0300" (VGA), "0302" (3D), "0680" (NVSwitch bridge)
    description: str | None = None  # lspci's words
    driver: str | None = None  # bound kernel driver: "nvidia", "nouveau", "vfio-pci", None
    current_link_speed: str | None = None
    max_link_speed: str | None = None
    current_link_width: int | None = None
    max_link_width: int | None = None
    numa_node: int | None = None
    local_cpulist: str | None = None  # the CPUs nearest this device (sysfs), "0-31,64-95"

    @property
    def is_nvswitch(self) -> bool:
        """An NVSwitch: an NVIDIA "bridge, other" function (class 0680)."""
        return self.class_code == "0680" and (self.vendor_id in (None, "10de"))

    @property
    def is_gpu(self) -> bool:
        """A display or 3D controller (not an audio function, USB controller or NVSwitch)."""
        return self.class_code is not None and self.class_code[:2] == "03"


@dataclass(frozen=True)
class OsRelease:
    id: str | None = None
    version_id: str | None = None
    pretty_name: str | None = None
    id_like: tuple[str, ...] = ()


@dataclass(frozen=True)
class DriverFacts:
    """The NVIDIA driver as every source sees it."""

    kernel_module_loaded: bool = False
    kernel_version: str | None = None  # the loaded module
    kernel_flavor: str | None = None  # "proprietary" / "open" / "l4t"
    userspace_version: str | None = None  # NVML / nvidia-smi / libnvidia-ml file name
    userspace_source: str | None = None
    library_versions: list[str] = field(default_factory=list)  # libnvidia-ml.so.<version> files found
    cuda_max: str | None = None  # the highest CUDA the driver supports
    cuda_max_source: str | None = None
    nouveau_loaded: bool = False
