"""Intel GPU facts, merged from every source that names the devices.

``xpu-smi`` (the data-center tool; on Arc it runs with fewer metrics) knows bus ids and detail; ``sycl-ls`` says
which runtime offers each GPU (Level Zero is what PyTorch's XPU backend and SYCL programs need; a GPU listed
only under OpenCL means the Level Zero GPU driver is missing); the PCI bus lists every Intel display function,
with the kernel driver bound to it; a pasted ``collect_env`` names the GPUs torch saw. A GPU named by several
sources is one GPU: matched by bus id, else by its model ("A770", "Max 1550").

An Intel integrated GPU sits in most desktop and laptop CPUs: it is marked ``discrete=False`` where its name says
so, and listed among the machine's accelerators only when a compute runtime (xpu-smi, Level Zero, torch) offers it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import Accelerator, Vendor
from gpudoctor.facts.intel_model import IntelFacts, IntelGpu, SyclDevice
from gpudoctor.facts.pci_accelerators import functions_of
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.sycl_ls import level_zero_gpus, opencl_gpus, parse_sycl_ls
from gpudoctor.kb.accelerator_pci import KERNEL_DRIVERS

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.xpu_smi import XpuSmiDevice

INTEL_DRIVERS = KERNEL_DRIVERS["intel"]
# The product lines PyTorch's XPU support names (accelerators.md §2): discrete Arc A/B, Flex, Data Center GPU Max.
_DISCRETE = re.compile(
    r"\bArc(?:\(TM\))?\s+(?:Pro\s+)?[AB]\d{2,3}[A-Z]?\b|\[Arc (?:Pro )?[AB]\d{2,3}[A-Z]?\]|\bFlex\b|"
    r"Data Center GPU Max|\bGPU Max\b|\bBattlemage\b|\bAlchemist\b|\bPonte Vecchio\b|\bDG2\b",
    re.IGNORECASE,
)
_INTEGRATED = re.compile(r"\bUHD Graphics\b|\bIris\b|\bHD Graphics\b|Integrated GPU", re.IGNORECASE)
_MODEL = re.compile(r"\b([AB]\d{3}[A-Z]?|Max \d{3,4}|Flex \d{2,3}|UHD Graphics \d{3}|0x[0-9a-f]{3,4})\b", re.I)
_COMPUTE_SOURCES = ("xpu-smi", "sycl-ls", "collect_env", "torch")


def discrete_from_words(*words: str | None) -> bool | None:
    """True for an Arc / Flex / Max name, False for a UHD / Iris / "Integrated GPU" one, else None."""
    text = " ".join(w for w in words if w)
    if _INTEGRATED.search(text):
        return False
    if _DISCRETE.search(text):
        return True
    return None


def _model(name: str | None) -> str | None:
    match = _MODEL.search(name or "")
    return match.group(1).lower() if match else None


def _device_id(value: str | None) -> str | None:
    """ "0x20a" -> "020a", "0x56A0" -> "56a0"."""
    if not value:
        return None
    digits = value.strip().lower().removeprefix("0x")
    return digits.zfill(4) if re.fullmatch(r"[0-9a-f]{1,4}", digits) else None


def _from_xpu_smi(device: XpuSmiDevice) -> IntelGpu:
    return IntelGpu(
        index=device.device_id,
        name=device.name,
        device_id=_device_id(device.pci_device_id),
        bus_id=normalize_bus_id(device.bus_id) if device.bus_id else None,
        memory_mib=device.memory_mib,
        # xpu-smi manages data-center GPUs and runs on Arc (accelerators.md §2): what it lists is discrete
        # unless its own words say integrated.
        discrete=discrete_from_words(device.device_type, device.name) is not False,
        driver_version=device.driver_version,
        sources=("xpu-smi",),
        uuid=device.uuid,
        firmware_version=device.firmware_version,
        tiles=device.tiles,
        eus=device.eus,
        pcie_generation=device.pcie_generation,
        pcie_max_width=device.pcie_max_width,
    )


def _same(gpu: IntelGpu, name: str | None) -> bool:
    if gpu.name and name and gpu.name == name:
        return True
    model = _model(name)
    return model is not None and model == _model(gpu.name)


def _merge_sycl(gpus: list[IntelGpu], sycl: tuple[SyclDevice, ...]) -> list[IntelGpu]:
    """Mark which GPUs Level Zero offers; add the GPUs only sycl-ls names."""
    zero = level_zero_gpus(sycl)
    listed = zero + tuple(d for d in opencl_gpus(sycl) if not any(d.name == z.name for z in zero))
    taken: set[int] = set()
    for device in listed:
        on_zero = device.backend == "level_zero"
        match = next((i for i, g in enumerate(gpus) if i not in taken and _same(g, device.name)), None)
        if match is None:
            gpus.append(
                IntelGpu(
                    index=device.index if on_zero else None,
                    name=device.name,
                    discrete=discrete_from_words(device.name),
                    driver_version=device.driver_version,
                    sources=("sycl-ls",),
                    level_zero=on_zero,
                )
            )
            taken.add(len(gpus) - 1)
            continue
        taken.add(match)
        gpu = gpus[match]
        gpus[match] = replace(gpu, level_zero=on_zero, sources=(*gpu.sources, "sycl-ls"))
    return gpus


def _merge_pci(gpus: list[IntelGpu], facts: Facts) -> list[IntelGpu]:
    """Add each Intel display function of the bus, or fill in the GPU a tool named for it."""
    for function in functions_of(facts.pci_accelerators, "intel"):
        bus = function.address.lower()
        match = next((i for i, g in enumerate(gpus) if g.bus_id and g.bus_id.lower() == bus), None)
        if match is None:
            match = next(
                (
                    i
                    for i, g in enumerate(gpus)
                    if g.bus_id is None and _model(function.description) and _same(g, function.description)
                ),
                None,
            )
        if match is None:
            gpus.append(
                IntelGpu(
                    name=function.description,
                    device_id=function.device_id,
                    bus_id=function.address,
                    discrete=discrete_from_words(function.description),
                    sources=("pci",),
                    kernel_driver=function.driver,
                )
            )
            continue
        gpu = gpus[match]
        gpus[match] = replace(
            gpu,
            bus_id=gpu.bus_id or function.address,
            device_id=gpu.device_id or function.device_id,
            discrete=gpu.discrete if gpu.discrete is not None else discrete_from_words(function.description),
            kernel_driver=function.driver,
            sources=(*gpu.sources, "pci"),
        )
    return gpus


def _from_reports(facts: Facts) -> list[IntelGpu]:
    """The GPUs a pasted collect_env report ("Intel GPU models onboard") or the torch probe names."""
    report = facts.collect_env
    names = list(report.xpu_gpu_names) if report is not None else []
    if names:
        return [
            IntelGpu(index=i, name=n, discrete=discrete_from_words(n), sources=("collect_env",))
            for i, n in enumerate(names)
        ]
    return [
        IntelGpu(index=d.index, name=d.name, discrete=discrete_from_words(d.name), sources=("torch",))
        for d in facts.torch.xpu_devices
    ]


def _kernel_driver(facts: Facts, gpus: list[IntelGpu]) -> str | None:
    bound = next((g.kernel_driver for g in gpus if g.kernel_driver in INTEL_DRIVERS), None)
    if bound:
        return bound
    modules = facts.loaded_modules or {}
    return next((name for name in INTEL_DRIVERS if name in modules), None)


def intel_facts(facts: Facts) -> IntelFacts:
    errors: dict[str, str] = {}
    gpus: list[IntelGpu] = []
    smi_text = facts.evidence.output(Ev.XPU_SMI.value)
    if smi_text:
        from gpudoctor.facts.xpu_smi import parse_xpu_smi  # only where xpu-smi said something

        report = parse_xpu_smi(smi_text)
        gpus = [_from_xpu_smi(d) for d in report.devices]
        if report.error and not report.devices:
            errors["xpu-smi"] = report.error
    sycl_text = facts.evidence.text(Ev.SYCL_LS.value)
    sycl = parse_sycl_ls(sycl_text) if sycl_text else None
    if sycl_text is not None and not sycl:
        errors["sycl-ls"] = (facts.evidence.output(Ev.SYCL_LS.value) or "").strip()[:200] or "no device listed"
    if sycl:
        gpus = _merge_sycl(gpus, sycl)
    if not gpus:
        gpus = _from_reports(facts)
    gpus = _merge_pci(gpus, facts)
    return IntelFacts(
        gpus=tuple(gpus),
        sycl_devices=sycl if sycl_text is not None else None,
        kernel_driver=_kernel_driver(facts, gpus),
        level_zero_gpu=bool(level_zero_gpus(sycl)) if sycl is not None else None,
        tool_errors=errors,
        kernel_modules_known=facts.loaded_modules is not None,
        bus_scanned=facts.collected(Ev.PCI_DEVICES) and facts.evidence.json(Ev.PCI_DEVICES.value) is not None,
    )


def runs_compute(gpu: IntelGpu) -> bool:
    """A compute runtime (xpu-smi, sycl-ls, torch) offers this GPU."""
    return any(source in _COMPUTE_SOURCES for source in gpu.sources)


def intel_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    return tuple(
        Accelerator(
            vendor=Vendor.INTEL,
            index=gpu.index,
            name=gpu.name,
            bus_id=gpu.bus_id,
            memory_total_mib=gpu.memory_mib,
            architecture=None,
            driver_sees=runs_compute(gpu),
            source="driver" if runs_compute(gpu) else "pci",
            intel=gpu,
        )
        for gpu in facts.intel.gpus
        if gpu.discrete is not False or runs_compute(gpu)
    )
