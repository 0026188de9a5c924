"""Merge what NVML, ``nvidia-smi -q -x`` and the plain table say into one view.

Precedence: NVML (typed values straight from the driver), then the XML query,
then the table (which truncates names on old drivers).  A value one source
lacks is taken from the next; the knowledge base fills what none reported
(compute capability from the GPU name, the highest CUDA from the driver
version) and the ``*_source`` fields say so.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping

from gpudoctor import kb
from gpudoctor.facts.framework_model import CollectEnvReport
from gpudoctor.facts.model import DriverFacts, GpuInfo, KernelModule, PciDevice, SmiReport
from gpudoctor.facts.nvml import NvmlFacts


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


def _fill(target: GpuInfo, other: GpuInfo) -> None:
    for item in dataclasses.fields(GpuInfo):
        if item.name == "mig_devices":
            if not target.mig_devices and other.mig_devices:
                target.mig_devices = list(other.mig_devices)
            continue
        if getattr(target, item.name) is None and getattr(other, item.name) is not None:
            setattr(target, item.name, getattr(other, item.name))


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
    merged = [copy.deepcopy(g) for g in sources[0]]
    for position, gpu in enumerate(merged):
        if gpu.index is None:
            gpu.index = position
    for other_list in sources[1:]:
        by_key = {_key(g): g for g in other_list if _key(g)}
        by_index = {g.index: g for g in other_list if g.index is not None}
        for gpu in merged:
            other = by_key.get(_key(gpu)) or (by_index.get(gpu.index) if gpu.index is not None else None)
            if other is not None:
                _fill(gpu, other)
    for gpu in merged:
        if gpu.compute_capability is None and gpu.name:
            known = kb.compute_capability_for_name(gpu.name)
            if known:
                gpu.compute_capability = known.compute_capability
                gpu.compute_capability_source = "knowledge base"
                gpu.architecture = gpu.architecture or known.architecture
    return merged


def merge_driver(facts: DriverSources) -> DriverFacts:
    driver = DriverFacts()
    modules = facts.loaded_modules
    module = facts.kernel_module
    driver.kernel_version = (module.version if module else None) or facts.sys_module_version
    driver.kernel_flavor = module.flavor if module else None
    driver.kernel_module_loaded = bool(driver.kernel_version) or "nvidia" in modules
    driver.nouveau_loaded = "nouveau" in modules or any(d.driver == "nouveau" for d in facts.pci_devices)
    driver.library_versions = list(facts.driver_libraries.get("libnvidia-ml", []))

    smi_error = facts.smi_text.error if facts.smi_text else None
    # NVML initialising, or nvidia-smi listing GPUs, proves the module is loaded; their driver
    # version is the module's own (NVML asks the kernel for it).
    answered = [
        report for report in (facts.smi_xml, facts.smi_text) if report and report.driver_version and report.gpus
    ]
    if facts.nvml.init_ok and facts.nvml.driver_version:
        driver.kernel_module_loaded = True
        driver.kernel_version = driver.kernel_version or facts.nvml.driver_version
    elif answered:
        driver.kernel_module_loaded = True
        driver.kernel_version = driver.kernel_version or answered[0].driver_version
    candidates = [
        (facts.nvml.driver_version, "NVML"),
        (facts.smi_xml.driver_version if facts.smi_xml else None, "nvidia-smi -q -x"),
        (facts.smi_text.driver_version if facts.smi_text else None, "nvidia-smi"),
        (
            smi_error.detail if smi_error and smi_error.kind == "version_mismatch" else None,
            "nvidia-smi (NVML library version)",
        ),
        (driver.library_versions[0] if driver.library_versions else None, "libnvidia-ml file name"),
    ]
    for version, source in candidates:
        if version:
            driver.userspace_version, driver.userspace_source = version, source
            break
    report = facts.collect_env
    if driver.userspace_version is None and report is not None and report.driver_version:
        # collect_env read the version from a working nvidia-smi; with GPUs listed, the module was loaded.
        driver.userspace_version, driver.userspace_source = report.driver_version, "collect_env report"
        if report.gpu_names or report.cuda_available:
            driver.kernel_module_loaded = True
            driver.kernel_version = driver.kernel_version or report.driver_version

    cuda_candidates = [
        (facts.nvml.cuda_driver_version, "NVML"),
        (facts.smi_xml.cuda_version if facts.smi_xml else None, "nvidia-smi -q -x"),
        (facts.smi_text.cuda_version if facts.smi_text else None, "nvidia-smi"),
    ]
    for version, source in cuda_candidates:
        if version:
            driver.cuda_max, driver.cuda_max_source = version, source
            break
    else:
        version = driver.kernel_version or driver.userspace_version
        if version and driver.kernel_flavor != "l4t":
            driver.cuda_max = kb.max_cuda_for_driver(version)
            driver.cuda_max_source = "knowledge base" if driver.cuda_max else None
    return driver
