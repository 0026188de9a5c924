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
from typing import TypeVar

from gpudoctor import kb
from gpudoctor.facts.framework_model import CollectEnvReport
from gpudoctor.facts.model import DriverFacts, GpuInfo, KernelModule, PciDevice, SmiReport
from gpudoctor.facts.nvml import NvmlFacts

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
    if not sources and collect_env is not None and collect_env.gpu_names:
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
    # NVML initialising, or nvidia-smi listing GPUs, proves the module is loaded; their driver
    # version is the module's own (NVML asks the kernel for it).
    answered = [
        report for report in (facts.smi_xml, facts.smi_text) if report and report.driver_version and report.gpus
    ]
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
    if userspace_version is None and report is not None and report.driver_version:
        # collect_env read the version from a working nvidia-smi; with GPUs listed, the module was loaded.
        userspace_version, userspace_source = report.driver_version, "collect_env report"
        if report.gpu_names or report.cuda_available:
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
