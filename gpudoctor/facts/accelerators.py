"""The accelerators of the machine, vendor-neutral at the top with each vendor's detail beneath.

Today only NVIDIA GPUs are read (NVML / nvidia-smi through the inventory, and the PCI bus for GPUs no driver
answers for); AMD and Intel GPUs and TPUs join as further vendors with their own detail type, so that what
every vendor shares (how many, which, how much memory, whether a driver sees them) is read the same way.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpudoctor.facts.model import GpuInfo, PciDevice


class Vendor(str, enum.Enum):
    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    APPLE = "apple"
    GOOGLE = "google"


# PCI vendor ids of the GPU vendors (PCI-SIG's registry): what the bus says before any driver does.
PCI_VENDOR_IDS = {"10de": Vendor.NVIDIA, "1002": Vendor.AMD, "8086": Vendor.INTEL}


@dataclass(frozen=True)
class Accelerator:
    """One device that runs the work, whoever made it."""

    vendor: Vendor
    index: int | None  # the vendor's own numbering (nvidia-smi's index); None when only the bus knows it
    name: str | None
    bus_id: str | None  # "0000:01:00.0"
    memory_total_mib: int | None
    architecture: str | None  # "Ampere"; an AMD gfx target next
    driver_sees: bool  # the vendor's driver reports it; False: it is on the PCI bus only
    source: str  # where it was read: "driver" (NVML / nvidia-smi / a report) or "pci"
    nvidia: GpuInfo | None = None  # NVIDIA's detail: compute capability, MIG, PCIe link, ...


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
        if device.address.lower() not in known_buses
        and PCI_VENDOR_IDS.get((device.vendor_id or "10de").lower()) is Vendor.NVIDIA
    )
    # A report with GPUs but no bus ids (a pasted table without them) cannot be matched to the bus: trust it.
    if seen and not known_buses:
        return seen
    return seen + on_bus_only
