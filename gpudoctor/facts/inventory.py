"""Merge what NVML, ``nvidia-smi -q -x`` and the plain table say into one view.

Precedence: NVML (typed values straight from the driver), then the XML query,
then the table (which truncates names on old drivers).  A value one source
lacks is taken from the next; the knowledge base fills what none reported
(compute capability from the GPU name, the highest CUDA from the driver
version) and the ``*_source`` fields say so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from gpudoctor import kb
from gpudoctor.facts.framework_model import CollectEnvReport
from gpudoctor.facts.model import DriverFacts, GpuInfo, KernelModule, PciDevice, SmiReport
from gpudoctor.facts.nvml import NvmlFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class DriverSources:
    """What each source says about the driver: the inputs of :func:`merge_driver`."""

    nvml: NvmlFacts
    smi_xml: SmiReport | None
    smi_text: SmiReport | None
    kernel_module: KernelModule | None
    sys_module_version: str | None
    loaded_modules: Mapping[str, object]
    pci_devices: list[PciDevice]
    driver_libraries: Mapping[str, list[str]]
    collect_env: CollectEnvReport | None


def _names_nvidia_gpus(report: CollectEnvReport) -> bool:
    """A collect_env report's GPU lines are NVIDIA's, unless the torch it describes is a ROCm or XPU build (its
    "GPU models" are then AMD's, "AMD Instinct MI250X/MI250 (gfx90a:...)", read by the AMD facts instead)."""
    return not (report.rocm_build or report.xpu_build or report.gpu_gfx)


def _key(gpu: GpuInfo) -> str | None:
    return gpu.bus_id or (f"index:{gpu.index}" if gpu.index is not None else None)


def _first(value: _T | None, fallback: _T | None) -> _T | None:
    return value if value is not None else fallback


def _fill(target: GpuInfo, other: GpuInfo) -> GpuInfo:
    """``target`` with every value it lacks taken from ``other`` (each field of GpuInfo, in its order)."""
    return dataclasses.replace(
        target,
        index=_first(target.index, other.index),
        name=_first(target.name, other.name),
        bus_id=_first(target.bus_id, other.bus_id),
        uuid=_first(target.uuid, other.uuid),
        serial=_first(target.serial, other.serial),
        brand=_first(target.brand, other.brand),
        architecture=_first(target.architecture, other.architecture),
        memory_total_mib=_first(target.memory_total_mib, other.memory_total_mib),
        memory_used_mib=_first(target.memory_used_mib, other.memory_used_mib),
        compute_capability=_first(target.compute_capability, other.compute_capability),
        compute_capability_source=_first(target.compute_capability_source, other.compute_capability_source),
        compute_mode=_first(target.compute_mode, other.compute_mode),
        persistence_mode=_first(target.persistence_mode, other.persistence_mode),
        mig_mode_current=_first(target.mig_mode_current, other.mig_mode_current),
        mig_mode_pending=_first(target.mig_mode_pending, other.mig_mode_pending),
        mig_devices=target.mig_devices or list(other.mig_devices),
        driver_model=_first(target.driver_model, other.driver_model),
        pcie_gen_current=_first(target.pcie_gen_current, other.pcie_gen_current),
        pcie_gen_max=_first(target.pcie_gen_max, other.pcie_gen_max),
        pcie_width_current=_first(target.pcie_width_current, other.pcie_width_current),
        pcie_width_max=_first(target.pcie_width_max, other.pcie_width_max),
        minor_number=_first(target.minor_number, other.minor_number),
    )


def merge_inventory(
    nvml: NvmlFacts,
    smi_xml: SmiReport | None,
    smi_text: SmiReport | None,
    smi_list: list[GpuInfo],
    collect_env: CollectEnvReport | None,
) -> list[GpuInfo]:
    sources: list[list[GpuInfo]] = []
    if nvml.init_ok and nvml.gpus:
        sources.append(nvml.gpus)
    if smi_xml and smi_xml.gpus:
        sources.append(smi_xml.gpus)
    if smi_text and smi_text.gpus:
        sources.append(smi_text.gpus)
    if smi_list:
        sources.append(smi_list)
    if not sources and collect_env is not None and collect_env.gpu_names and _names_nvidia_gpus(collect_env):
        # A pasted collect_env report names the GPUs (nvidia-smi -L's words) and nothing more.
        sources.append([GpuInfo(index=i, name=name) for i, name in enumerate(collect_env.gpu_names)])
    if not sources:
        return []
    # Each merged GPU is a copy with its own MIG list: no source's facts are shared with the merge.
    merged = [
        dataclasses.replace(gpu, index=position if gpu.index is None else gpu.index, mig_devices=list(gpu.mig_devices))
        for position, gpu in enumerate(sources[0])
    ]
    for other_list in sources[1:]:
        by_key = {_key(g): g for g in other_list if _key(g)}
        by_index = {g.index: g for g in other_list if g.index is not None}
        for position, gpu in enumerate(merged):
            other = by_key.get(_key(gpu)) or (by_index.get(gpu.index) if gpu.index is not None else None)
            if other is not None:
                merged[position] = _fill(gpu, other)
    for position, gpu in enumerate(merged):
        if gpu.compute_capability is None and gpu.name:
            known = kb.compute_capability_for_name(gpu.name)
            if known:
                merged[position] = dataclasses.replace(
                    gpu,
                    compute_capability=known.compute_capability,
                    compute_capability_source="knowledge base",
                    architecture=gpu.architecture or known.architecture,
                )
    return merged


def merge_driver(facts: DriverSources) -> DriverFacts:
    modules = facts.loaded_modules
    module = facts.kernel_module
    kernel_version = (module.version if module else None) or facts.sys_module_version
    kernel_flavor = module.flavor if module else None
    kernel_module_loaded = bool(kernel_version) or "nvidia" in modules
    nouveau_loaded = "nouveau" in modules or any(d.driver == "nouveau" for d in facts.pci_devices)
    library_versions = list(facts.driver_libraries.get("libnvidia-ml", []))

    smi_error = facts.smi_text.error if facts.smi_text else None
    # NVML initialising, or nvidia-smi printing its "Driver Version" (which it does only once NVML reached the
    # loaded module: without it, it prints an error instead), proves the module is loaded; their driver version
    # is the module's own (NVML asks the kernel for it).
    answered = [report for report in (facts.smi_xml, facts.smi_text) if report and report.driver_version]
    if facts.nvml.init_ok and facts.nvml.driver_version:
        kernel_module_loaded = True
        kernel_version = kernel_version or facts.nvml.driver_version
    elif answered:
        kernel_module_loaded = True
        kernel_version = kernel_version or answered[0].driver_version
    candidates = [
        (facts.nvml.driver_version, "NVML"),
        (facts.smi_xml.driver_version if facts.smi_xml else None, "nvidia-smi -q -x"),
        (facts.smi_text.driver_version if facts.smi_text else None, "nvidia-smi"),
        (
            smi_error.detail if smi_error and smi_error.kind == "version_mismatch" else None,
            "nvidia-smi (NVML library version)",
        ),
        (library_versions[0] if library_versions else None, "libnvidia-ml file name"),
    ]
    userspace_version: str | None = None
    userspace_source: str | None = None
    for version, source in candidates:
        if version:
            userspace_version, userspace_source = version, source
            break
    report = facts.collect_env
    if report is not None and report.driver_version:
        # collect_env read the version from the table of a working nvidia-smi ("Driver Version: ..."), which
        # nvidia-smi prints only once NVML reached the loaded module.
        if userspace_version is None:
            userspace_version, userspace_source = report.driver_version, "collect_env report"
        kernel_module_loaded = True
        kernel_version = kernel_version or report.driver_version

    cuda_candidates = [
        (facts.nvml.cuda_driver_version, "NVML"),
        (facts.smi_xml.cuda_version if facts.smi_xml else None, "nvidia-smi -q -x"),
        (facts.smi_text.cuda_version if facts.smi_text else None, "nvidia-smi"),
    ]
    cuda_max: str | None = None
    cuda_max_source: str | None = None
    for version, source in cuda_candidates:
        if version:
            cuda_max, cuda_max_source = version, source
            break
    else:
        version = kernel_version or userspace_version
        if version and kernel_flavor != "l4t":
            cuda_max = kb.max_cuda_for_driver(version)
            cuda_max_source = "knowledge base" if cuda_max else None
    return DriverFacts(
        kernel_module_loaded=kernel_module_loaded,
        kernel_version=kernel_version,
        kernel_flavor=kernel_flavor,
        userspace_version=userspace_version,
        userspace_source=userspace_source,
        library_versions=library_versions,
        cuda_max=cuda_max,
        cuda_max_source=cuda_max_source,
        nouveau_loaded=nouveau_loaded,
    )


# --------------------------------------------------------------------------- how many GPUs, and is that known


@dataclasses.dataclass(frozen=True)
class GpuCensus:
    """How many NVIDIA GPUs the evidence shows, who shows them, and whether "none" would be an established fact.

    Unknown is not absent: a paste of ``nvidia-smi topo -m`` or of ``/proc/driver/nvidia/version`` lists no GPU
    through the driver's inventory, yet says nothing about there being none.  Only a scan of the whole PCI bus
    (sysfs, or an lspci listing) establishes "no NVIDIA GPU here".
    """

    count: int  # the most GPUs any one source shows (0 when none shows one)
    shown_by: tuple[str, ...]  # the sources that show at least one, in words ("nvidia-smi topo -m", ...)
    bus_scanned: bool  # a scan of the whole PCI bus answered
    driver_listed: bool  # the driver's own list answered (NVML, nvidia-smi), even when it holds no GPU
    # One GpuInfo per GPU for a summary when no driver inventory lists them (bus ids / names where known).
    sketch: tuple[GpuInfo, ...] = ()
    # What shows that there is at least one GPU although nothing lists it: the NVIDIA kernel module loads only
    # where it finds a GPU, and nvidia-smi prints a driver version only once NVML reached one.
    implied_by: str | None = None

    @property
    def known(self) -> bool:
        """The number is established: a source shows GPUs, or a PCI scan shows there are none."""
        return self.count > 0 or self.bus_scanned

    @property
    def present(self) -> bool:
        """The evidence shows (or implies) at least one NVIDIA GPU."""
        return self.count > 0 or self.implied_by is not None

    @property
    def none_on_bus(self) -> bool:
        """A scan of the PCI bus established that there is no NVIDIA GPU (and no other source shows one)."""
        return self.count == 0 and self.bus_scanned and self.implied_by is None

    def unknown_words(self) -> str:
        """Why the number is not known, for a report: what was missing and what would settle it."""
        if self.driver_listed:
            return (
                "the driver lists no GPU, and the PCI bus was not read (`lspci -nn | grep -i nvidia` shows whether "
                "a GPU is there)"
            )
        return (
            "no source that lists GPUs is in the evidence (run `nvidia-smi` and `lspci -nn | grep -i nvidia`, or "
            "`gpudoctor collect`)"
        )


def _framework_gpus(facts: Facts) -> list[tuple[str, list[GpuInfo]]]:
    """GPUs the frameworks of the target Python (or a pasted report's warnings) name."""
    shown: list[tuple[str, list[GpuInfo]]] = []
    torch = facts.torch
    if torch.source == "probe" and torch.run.status == "ok" and (torch.device_count or torch.devices):
        count = max(torch.device_count or 0, len(torch.devices))
        names = {d.index: d.name for d in torch.devices if d.index is not None}
        shown.append(("PyTorch", [GpuInfo(index=i, name=names.get(i)) for i in range(count)]))
    if torch.unsupported_gpu:
        shown.append(("torch's warning", [GpuInfo(index=0, name=torch.unsupported_gpu)]))
    tf = facts.tensorflow
    if tf.gpus:
        shown.append(("TensorFlow", [GpuInfo(index=g.index, name=g.name) for g in tf.gpus]))
    return shown


def _kernel_log_gpus(facts: Facts) -> list[GpuInfo]:
    """GPUs the kernel log speaks of: the PCI addresses of its Xid lines, or one GPU its NVRM notices name."""
    log = facts.kernel_log
    addresses = sorted({event.pci for event in log.xid_events if event.pci})
    if addresses:
        return [GpuInfo(bus_id=address) for address in addresses]
    about_a_gpu = (
        log.rm_init_failed,
        log.fallen_off_bus,
        log.gsp_unsupported,
        log.nouveau_took_gpu,
        bool(log.legacy_branch_required),
        bool(log.xid_events),
    )
    return [GpuInfo()] if any(about_a_gpu) else []


def gpu_census(facts: Facts) -> GpuCensus:
    """Count the NVIDIA GPUs every source shows (see :class:`GpuCensus`)."""
    from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK

    shown: list[tuple[str, list[GpuInfo]]] = []
    nvml, xml, text = facts.nvml, facts.smi_xml, facts.smi_text
    if facts.gpus:
        driver_words = "the driver (NVML / nvidia-smi)"
        if not (nvml.init_ok or xml or text or facts.smi_list) and facts.collect_env is not None:
            driver_words = "the collect_env report"
        shown.append((driver_words, list(facts.gpus)))
    if nvml.init_ok and nvml.device_count:
        shown.append(("NVML", [GpuInfo(index=i) for i in range(nvml.device_count)]))
    placed = [d for d in facts.pci_gpus if d.address != UNPLACED_LSPCI_BLOCK]
    if placed:
        shown.append(("the PCI bus", [GpuInfo(name=d.description, bus_id=d.address) for d in placed]))
    matrix = facts.topology
    if matrix is not None and matrix.gpus:
        shown.append(("nvidia-smi topo -m", [GpuInfo(index=i) for i in matrix.gpus]))
    if facts.nvlink_status:
        shown.append(("nvidia-smi nvlink -s", [GpuInfo(index=i) for i in sorted(facts.nvlink_status)]))
    shown += _framework_gpus(facts)
    from_log = _kernel_log_gpus(facts)
    if from_log:
        shown.append(("the kernel log", from_log))
    lost = text.error if text is not None and text.error is not None and text.error.kind == "gpu_lost" else None
    if lost is not None:
        shown.append(("nvidia-smi's error", [GpuInfo(bus_id=lost.detail)]))
    driver_listed = bool(
        nvml.init_ok
        or (xml is not None and xml.error is None and xml.attached_gpus is not None)
        or (text is not None and (text.gpus or (text.error is not None and text.error.kind == "no_devices")))
        or facts.smi_list
    )
    best = max((gpus for _, gpus in shown), key=len, default=[])
    return GpuCensus(
        count=len(best),
        shown_by=tuple(dict.fromkeys(words for words, gpus in shown if gpus)),
        bus_scanned=facts.pci_scan_available,
        driver_listed=driver_listed,
        sketch=tuple(best),
        implied_by=_gpu_implied_by(facts),
    )


def _gpu_implied_by(facts: Facts) -> str | None:
    """Evidence that a GPU exists without a list of GPUs (see :attr:`GpuCensus.implied_by`)."""
    if facts.container.wsl:
        return None  # WSL has no Linux kernel module; the Windows driver answers with or without a GPU
    module = facts.kernel_module
    if module is not None and module.version:
        return f"the NVIDIA kernel module {module.version} is loaded (it loads only where it finds a GPU)"
    loaded = facts.loaded_modules
    if loaded is not None and "nvidia" in loaded:
        return "the nvidia kernel module is loaded (it loads only where it finds a GPU)"
    for report in (facts.smi_text, facts.smi_xml):
        if report is not None and report.driver_version and report.error is None:
            return f"nvidia-smi answered with driver {report.driver_version}"
    if facts.collect_env is not None and facts.collect_env.driver_version:
        return f"the report's nvidia-smi answered with driver {facts.collect_env.driver_version}"
    return None
