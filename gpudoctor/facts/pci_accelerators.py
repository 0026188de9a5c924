"""Every vendor's GPUs and TPUs on the PCI bus: sysfs first (works with no driver), lspci to fill in.

``Facts.pci_devices`` keeps to NVIDIA's functions (its NVSwitches and bridges included) for the NVIDIA
checks; this is the vendor-neutral view the accelerator inventory reads. A pasted ``lspci`` without ``-nn``
(``lspci | grep MI``) has neither ids nor class codes: the vendor and the class are then read from lspci's
own words, which are stable (pci.ids names).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.facts import lspci, sysfs_pci
from gpudoctor.facts.model import PciDevice
from gpudoctor.kb.accelerator_pci import is_accelerator_function, vendor_of

# pci.ids vendor names as lspci prints them, for a listing without numeric ids.
_VENDOR_WORDS = (
    (re.compile(r"\bNVIDIA Corporation\b", re.IGNORECASE), "10de"),
    (re.compile(r"Advanced Micro Devices|\[AMD/ATI\]|\bATI Technologies\b", re.IGNORECASE), "1002"),
    (re.compile(r"\bIntel Corporation\b", re.IGNORECASE), "8086"),
    (re.compile(r"\bGoogle, Inc\.", re.IGNORECASE), "1ae0"),
)
# lspci's class names: what a listing without "[0300]" still says.
_CLASS_WORDS = (
    ("vga compatible controller", "0300"),
    ("3d controller", "0302"),
    ("display controller", "0380"),
    ("processing accelerators", "1200"),
    ("audio device", "0403"),
)


def _with_words(device: PciDevice, line_class: str | None) -> PciDevice:
    """Fill vendor and class from lspci's words where the numeric ids are missing."""
    description = device.description or ""
    vendor = device.vendor_id
    if vendor is None:
        vendor = next((vid for pattern, vid in _VENDOR_WORDS if pattern.search(description)), None)
    klass = device.class_code
    if klass is None and line_class:
        lowered = line_class.lower()
        klass = next((code for words, code in _CLASS_WORDS if words in lowered), None)
    return replace(device, vendor_id=vendor, class_code=klass)


def _lspci_classes(text: str) -> dict[str, str]:
    """Each listed address's class words ("Display controller"), from the lines themselves."""
    classes: dict[str, str] = {}
    for device, line in zip(lspci.parse_lspci(text), (ln for ln in text.splitlines() if lspci.is_device_line(ln))):
        rest = line.split(None, 1)[1] if len(line.split(None, 1)) == 2 else ""
        classes[device.address] = rest.partition(": ")[0]
    return classes


def accelerator_functions(pci_json: object, lspci_text: str | None) -> list[PciDevice]:
    """The accelerator functions of every known vendor, sorted by address; sysfs wins, lspci fills in."""
    by_address: dict[str, PciDevice] = {}
    for device in sysfs_pci.parse_pci_devices_json(pci_json):
        if is_accelerator_function(device.vendor_id, device.device_id, device.class_code):
            by_address[device.address] = device
    if lspci_text:
        classes = _lspci_classes(lspci_text)
        for device in lspci.parse_lspci(lspci_text):
            device = _with_words(device, classes.get(device.address))
            if not is_accelerator_function(device.vendor_id, device.device_id, device.class_code):
                continue
            known = by_address.get(device.address)
            by_address[device.address] = lspci.fill_from_lspci(known, device) if known else device
    return sorted(by_address.values(), key=lambda d: d.address)


def functions_of(devices: list[PciDevice], vendor: str) -> list[PciDevice]:
    """The functions of one vendor ("amd", "intel", "google", "nvidia")."""
    return [d for d in devices if vendor_of(d.vendor_id) == vendor]
