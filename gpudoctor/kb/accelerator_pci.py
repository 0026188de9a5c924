"""Which PCI functions are accelerators, by vendor: the one home of the vendor and device ids the bus shows.

The bus answers before any driver does, so this is how a machine with an unloaded (or absent) driver is
still seen to have its GPUs and TPUs. Sources: PCI-SIG's vendor registry (10de NVIDIA, 1002 AMD/ATI,
8086 Intel, 1ae0 Google, 106b Apple); the TPU device ids from PyTorch/XLA ``torch_xla/_internal/tpu.py``
at 022ecde6 and https://github.com/pytorch/xla/pull/4845 (compiled in ``shared/reference/accelerators.md``).
"""

from __future__ import annotations

PCI_VENDORS: dict[str, str] = {"10de": "nvidia", "1002": "amd", "8086": "intel", "1ae0": "google", "106b": "apple"}

# Google's TPU chips by PCI device id. Google's vendor id also carries its virtual NIC (gVNIC, 1ae0:0042),
# so a Google function counts as a TPU only by these ids (or a processing-accelerator class, 12xx).
TPU_DEVICE_IDS: dict[str, str] = {
    "0027": "v2/v3",
    "005e": "v4",
    "0063": "v5e",
    "006f": "v6e",
    "0056": "testing only",
    "0062": "testing only",
}

# The kernel drivers that bind each vendor's GPUs (as /proc/modules and a PCI function's driver link name them).
KERNEL_DRIVERS: dict[str, tuple[str, ...]] = {"amd": ("amdgpu",), "intel": ("xe", "i915")}

# Display (03xx) and processing-accelerator (12xx) classes: GPUs and their compute-only siblings.
# An HDMI audio function (0403) of the same card, a USB controller or a NIC is never an accelerator.
ACCELERATOR_CLASS_PREFIXES = ("03", "12")


def vendor_of(vendor_id: str | None) -> str | None:
    """ "amd" for "1002" / "0x1002"; None for a vendor that makes no accelerator we know."""
    if not vendor_id:
        return None
    return PCI_VENDORS.get(vendor_id.lower().removeprefix("0x").zfill(4))


def is_accelerator_function(vendor_id: str | None, device_id: str | None, class_code: str | None) -> bool:
    """Whether a PCI function is a GPU or TPU of a known vendor (class "0302", ids without 0x, any case)."""
    vendor = vendor_of(vendor_id)
    if vendor is None:
        return False
    device = (device_id or "").lower().removeprefix("0x").zfill(4)
    klass = (class_code or "").lower().removeprefix("0x")
    if vendor == "google":
        return device in TPU_DEVICE_IDS or klass.startswith("12")
    if not klass:
        return False
    return klass.startswith(ACCELERATOR_CLASS_PREFIXES)


def tpu_generation(device_id: str | None) -> str | None:
    return TPU_DEVICE_IDS.get((device_id or "").lower().removeprefix("0x").zfill(4))
