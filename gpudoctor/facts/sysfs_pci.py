"""NVIDIA PCI functions from sysfs (the ``pci-devices.json`` evidence of ``scan_pci``).

sysfs answers even when no driver is loaded, so this is the ground truth for
"is there an NVIDIA GPU at all".  The parser takes the already-decoded JSON and
accepts any value: a snapshot may be hand-written, old or damaged.
"""

from __future__ import annotations

import re

from gpudoctor.facts.model import PciDevice
from gpudoctor.facts.pci_address import normalize_bus_id

_HEX = re.compile(r"^(?:0[xX])?([0-9a-fA-F]+)$")


def _hex_digits(value: object) -> str | None:
    """The lower-case hex digits of sysfs's "0x10de"-style values, or None."""
    if not isinstance(value, str):
        return None
    match = _HEX.match(value.strip())
    return match.group(1).lower() if match else None


def _hex(value: object, digits: int) -> str | None:
    """sysfs's "0x10de" as lspci's "10de" (the first ``digits`` digits)."""
    number = _hex_digits(value)
    if number is None or len(number) < digits:
        return None
    return number[:digits]


def _class_code(value: object) -> str | None:
    """Class "0x030000" as lspci's "0300".

    The class register is class/subclass/prog-if; lspci's class code, which the
    rest of gpudoctor uses, is the first two bytes.
    """
    number = _hex_digits(value)
    # A full class register has six digits; pad a shortened "0x30000" back.
    if number is None or len(number) > 6:
        return None
    return number.zfill(6)[:4]


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            return None
    return None


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value.strip() or None


def _device(record: object) -> PciDevice | None:
    if not isinstance(record, dict):
        return None
    address = _text(record.get("address"))
    if address is None:
        return None
    width_current = _int(record.get("current_link_width"))
    width_max = _int(record.get("max_link_width"))
    numa = _int(record.get("numa_node"))
    return PciDevice(
        # sysfs names are already "0000:01:00.0"; normalising guards hand-written snapshots.
        address=normalize_bus_id(address) or address.lower(),
        vendor_id=_hex(record.get("vendor"), 4),
        device_id=_hex(record.get("device"), 4),
        class_code=_class_code(record.get("class")),
        driver=_text(record.get("driver")),
        # Speeds stay text ("16.0 GT/s PCIe", "Unknown"): sysfs's words, which a
        # check reads with its own rules.
        current_link_speed=_text(record.get("current_link_speed")),
        max_link_speed=_text(record.get("max_link_speed")),
        # Negative widths are garbage; 0 is kept: it is how sysfs shows a link that is down.
        current_link_width=width_current if width_current is not None and width_current >= 0 else None,
        max_link_width=width_max if width_max is not None and width_max >= 0 else None,
        # sysfs writes -1 when the platform has no NUMA information.
        numa_node=numa if numa is not None and numa >= 0 else None,
        local_cpulist=_text(record.get("local_cpulist")),
    )


def parse_pci_devices_json(data: object) -> list[PciDevice]:
    """The devices of a ``scan_pci`` record (``{"devices": [...]}``, or the bare list).

    Records without an address are dropped; any other field that is missing or
    of the wrong type becomes ``None``.
    """
    if isinstance(data, dict):
        records = data.get("devices")
    else:
        records = data
    if not isinstance(records, list):
        return []
    devices = []
    for record in records:
        device = _device(record)
        if device is not None:
            devices.append(device)
    return devices
