"""The accelerators of the machine, vendor-neutral at the top with each vendor's detail beneath.

Each vendor contributes its own list (NVIDIA from NVML / nvidia-smi, AMD from amd-smi / rocm-smi / rocminfo /
KFD, Intel from xpu-smi / sycl-ls, Apple from system_profiler, TPUs from the bus and JAX), and the PCI bus
adds the GPUs no driver answers for, so that what every vendor shares (how many, which, how much memory,
whether a driver sees them) is read the same way, and a machine with GPUs of two vendors lists both.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.facts.model import GpuInfo, PciDevice
from gpudoctor.kb.accelerator_pci import vendor_of

if TYPE_CHECKING:
    # The vendors' detail types, for annotations only: a machine without them never imports their models.
    from gpudoctor.facts.amd_model import AmdGpu
    from gpudoctor.facts.apple_model import AppleGpu
    from gpudoctor.facts.intel_model import IntelGpu
    from gpudoctor.facts.tpu_model import TpuChip


class Vendor(str, enum.Enum):
    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    APPLE = "apple"
    GOOGLE = "google"


# PCI vendor ids of the GPU vendors (PCI-SIG's registry): what the bus says before any driver does.

VENDOR_WORDS = {
    Vendor.NVIDIA: "NVIDIA",
    Vendor.AMD: "AMD",
    Vendor.INTEL: "Intel",
    Vendor.APPLE: "Apple",
    Vendor.GOOGLE: "Google TPU",
}


@dataclass(frozen=True)
class Accelerator:
    """One device that runs the work, whoever made it."""

    vendor: Vendor
    index: int | None  # the vendor's own numbering (nvidia-smi's index); None when only the bus knows it
    name: str | None
    bus_id: str | None  # "0000:01:00.0"
    memory_total_mib: int | None
    architecture: str | None  # "Ampere"; an AMD gfx target ("gfx90a"); a TPU generation ("v4")
    driver_sees: bool  # the vendor's driver reports it; False: it is on the PCI bus only
    source: str  # where it was read: "driver" (NVML / nvidia-smi / amd-smi / a report ...) or "pci"
    nvidia: GpuInfo | None = None  # NVIDIA's detail: compute capability, MIG, PCIe link, ...
    amd: AmdGpu | None = None  # AMD's detail: gfx target, compute units, partition, XGMI hive, ...
    intel: IntelGpu | None = None
    apple: AppleGpu | None = None
    tpu: TpuChip | None = None


def nvidia_accelerators(gpus: list[GpuInfo], pci_gpus: list[PciDevice]) -> tuple[Accelerator, ...]:
    """The GPUs the NVIDIA driver reports, then the NVIDIA GPUs on the bus it does not (none loaded, or lost)."""
    seen = tuple(
        Accelerator(
            vendor=Vendor.NVIDIA,
            index=gpu.index,
            name=gpu.name,
            bus_id=gpu.bus_id,
            memory_total_mib=gpu.memory_total_mib,
            architecture=gpu.architecture,
            driver_sees=True,
            source="driver",
            nvidia=gpu,
        )
        for gpu in gpus
    )
    known_buses = {a.bus_id.lower() for a in seen if a.bus_id}
    on_bus_only = tuple(
        Accelerator(
            vendor=Vendor.NVIDIA,
            index=None,
            name=device.description,
            bus_id=device.address,
            memory_total_mib=None,
            architecture=None,
            driver_sees=False,
            source="pci",
        )
        for device in pci_gpus
        if device.address.lower() not in known_buses and vendor_of(device.vendor_id or "10de") == Vendor.NVIDIA.value
    )
    # A report with GPUs but no bus ids (a pasted table without them) cannot be matched to the bus: trust it.
    if seen and not known_buses:
        return seen
    return seen + on_bus_only


def other_vendors(accelerators: tuple[Accelerator, ...]) -> tuple[Accelerator, ...]:
    """The accelerators that are not NVIDIA's (their own vendor's checks judge them)."""
    return tuple(a for a in accelerators if a.vendor is not Vendor.NVIDIA)


def vendor_words(accelerators: tuple[Accelerator, ...]) -> str:
    """ "AMD", "AMD and Intel": the vendors of ``accelerators``, in the enum's order."""
    vendors = [VENDOR_WORDS[v] for v in Vendor if any(a.vendor is v for a in accelerators)]
    return " and ".join(vendors)


def describe_accelerators(accelerators: tuple[Accelerator, ...]) -> str | None:
    """The machine's accelerators in a few words: "2 × AMD Instinct MI210 (gfx90a)", "1 × NVIDIA H100 ...".

    Identical devices are counted together, in the order first seen; None when there are none.
    """
    if not accelerators:
        return None
    labels = Counter(_label(a) for a in accelerators)
    return ", ".join(f"{count} × {label}" for label, count in labels.items())


def display_name(accelerator: Accelerator) -> str:
    """The accelerator's name, else its vendor's words and generation ("Google TPU v4", "AMD device")."""
    if accelerator.name:
        return accelerator.name
    if accelerator.vendor is Vendor.GOOGLE and accelerator.architecture:
        return f"{VENDOR_WORDS[accelerator.vendor]} {accelerator.architecture}"
    return f"{VENDOR_WORDS[accelerator.vendor]} device"


def _label(accelerator: Accelerator) -> str:
    name = display_name(accelerator)
    if accelerator.vendor is Vendor.AMD and accelerator.architecture and accelerator.architecture not in name:
        return f"{name} ({accelerator.architecture})"
    return name
