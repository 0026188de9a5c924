"""``lspci``: PCI functions with their IDs and bound drivers, and PCIe link state.

Pure parsers.  ``parse_lspci`` reads ``lspci -D -nn -k`` and also the plainer
forms people paste (no domain, no numeric IDs); with ``-vv`` a device block's
``LnkCap``/``LnkSta`` lines fill its link speed and width the way sysfs would
(``link_fields`` reads them from a block pasted without its device line).
``parse_link_status`` reads the same lines as capability-vs-state numbers.
None of them raises: unknown stays ``None``.
"""

from __future__ import annotations

import re
from typing import Any

from gpudoctor.facts.model import PciDevice
from gpudoctor.facts.pci_address import normalize_bus_id

# "0000:01:00.0 VGA compatible controller [0300]: ...", or without -D "01:00.0 ...".
# Domains can be longer than four digits (Intel VMD puts GPUs in domain 10000).
_DEVICE = re.compile(r"^\s*(?P<address>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?P<rest>\S.*)$")
_CLASS_CODE = re.compile(r"\[([0-9a-fA-F]{4})\]\s*$")
# Anchored at the end and starting with a literal, applied to right-stripped text:
# a leading "\s*" would make a long run of blanks cost quadratic time.
_IDS = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]$")
# Trailing "(rev a1)" and "(prog-if 00 [VGA controller])" are not part of the name.
_TRAILER = re.compile(r"\((?:rev\s+[0-9a-fA-F]+|prog-if\s+[^()]*)\)$")
_DRIVER = re.compile(r"^\s*Kernel driver in use:\s*(\S+)")


def _normalise_address(address: str) -> str:
    # The sysfs spelling, which facts from other sources are joined on.  Without
    # -D lspci omits the domain; domain 0 is the only one it leaves out.
    normalised = normalize_bus_id(address)
    if normalised:
        return normalised
    address = address.lower()
    return address if address.count(":") == 2 else "0000:" + address


def _device_from_line(address: str, rest: str) -> PciDevice:
    device = PciDevice(address=_normalise_address(address))
    class_part, sep, description = rest.partition(": ")
    if not sep:
        # No "class: description" separator: keep all of it as the description.
        class_part, description = "", rest
    class_code = _CLASS_CODE.search(class_part)
    if class_code:
        device.class_code = class_code.group(1).lower()
    description = description.rstrip()
    # lspci writes at most "(rev ..)" and "(prog-if ..)"; a bounded loop keeps a
    # garbage line of thousands of them from costing quadratic time.
    for _ in range(3):
        trailer = _TRAILER.search(description)
        if not trailer:
            break
        description = description[: trailer.start()].rstrip()
    ids = _IDS.search(description)
    if ids:
        device.vendor_id, device.device_id = ids.group(1).lower(), ids.group(2).lower()
        description = description[: ids.start()]
    device.description = description.strip() or None
    return device


def parse_lspci(text: Any) -> list[PciDevice]:
    """Parse ``lspci [-D] [-nn] [-k]`` output: every function listed, in order.

    Indented lines belong to the device above; only "Kernel driver in use" is
    kept (``PciDevice.driver``).  A device without that line has no driver bound
    (or lspci ran without ``-k``): ``driver`` stays ``None``.
    """
    devices: list[PciDevice] = []
    if not isinstance(text, str):
        return devices
    current: PciDevice | None = None
    for line in text.splitlines():
        match = _DEVICE.match(line)
        if match:
            current = _device_from_line(match.group("address"), match.group("rest"))
            devices.append(current)
            continue
        if current is not None:
            driver = _DRIVER.match(line)
            if driver:
                current.driver = driver.group(1)
                continue
            _fill_link(current, line)
    return devices


def _fill_link(device: PciDevice, line: str) -> None:
    # Only the first LnkCap/LnkSta of a block: the anchored "LnkCap:" never matches "LnkCap2:", and a
    # device has one PCIe capability, so a second one would be a paste of another device.
    for pattern, speed_field, width_field in (
        (_LNK_CAP, "max_link_speed", "max_link_width"),
        (_LNK_STA, "current_link_speed", "current_link_width"),
    ):
        match = pattern.match(line)
        if match is None:
            continue
        if getattr(device, speed_field) is None and getattr(device, width_field) is None:
            speed, width = _speed_and_width(match.group("body"))
            setattr(device, speed_field, speed)
            setattr(device, width_field, width)
        return


def _speed_and_width(body: str) -> tuple[str | None, int | None]:
    """("16GT/s", 16) from "Port #0, Speed 16GT/s, Width x16, ..." or "Speed 2.5GT/s (downgraded), Width x16 (ok)".

    The speed stays text, as lspci prints it, the way sysfs keeps "16.0 GT/s PCIe";
    ``gpudoctor.kb.pcie_gen_for_speed`` reads both forms.
    """
    speed = _SPEED.search(body)
    width = _WIDTH.search(body)
    return (f"{speed.group('speed')}GT/s" if speed else None, int(width.group("width")) if width else None)


def link_fields(text: Any) -> dict[str, Any]:
    """The first ``LnkCap``/``LnkSta`` pair of one ``lspci -vv`` block as ``PciDevice`` link fields.

    For a block pasted without its device line, which ``parse_lspci`` cannot place:
    ``{"max_link_speed": "16GT/s", "max_link_width": 16, "current_link_speed": "2.5GT/s",
    "current_link_width": 16}``, with only the values that were printed; ``{}`` when none was.
    """
    if not isinstance(text, str):
        return {}
    device = PciDevice(address="")
    for line in text.splitlines():
        _fill_link(device, line)
    fields = ("max_link_speed", "max_link_width", "current_link_speed", "current_link_width")
    return {name: getattr(device, name) for name in fields if getattr(device, name) is not None}


_LNK_CAP = re.compile(r"^\s*LnkCap:\s*(?P<body>.*)$")
_LNK_STA = re.compile(r"^\s*LnkSta:\s*(?P<body>.*)$")
_SPEED = re.compile(r"Speed\s+(?P<speed>\d{1,4}(?:\.\d{1,4})?)\s*GT/s(?P<note>\s*\((?:downgraded|ok)\))?", re.ASCII)
_WIDTH = re.compile(r"Width\s+x(?P<width>\d{1,3})(?P<note>\s*\((?:downgraded|ok)\))?", re.ASCII)

LINK_KEYS = (
    "cap_speed_gts",
    "cap_width",
    "sta_speed_gts",
    "sta_width",
    "speed_downgraded",
    "width_downgraded",
    "downgraded",
)


def _below(current: float | int | None, capable: float | int | None) -> bool | None:
    if current is None or capable is None:
        return None
    return current < capable


def parse_link_status(text: Any) -> dict[str, Any]:
    """The first ``LnkCap``/``LnkSta`` pair in ``lspci -vv`` text (one device's block).

    Returns ``{}`` when neither line is there, else every key of
    :data:`LINK_KEYS` with ``None`` for what is unknown.  ``downgraded`` is True
    when the link runs slower or narrower than capable, whether lspci said so
    ("(downgraded)", newer pciutils) or the numbers show it (older pciutils say
    nothing).  GPUs drop to 2.5 GT/s when idle to save power, so a speed
    downgrade alone is a hint for a check to weigh, not a verdict.
    """
    if not isinstance(text, str):
        return {}
    cap_body = sta_body = None
    for line in text.splitlines():
        if cap_body is None:
            match = _LNK_CAP.match(line)
            if match:
                cap_body = match.group("body")
                continue
        if sta_body is None:
            match = _LNK_STA.match(line)
            if match:
                sta_body = match.group("body")
        if cap_body is not None and sta_body is not None:
            break
    if cap_body is None and sta_body is None:
        return {}
    result: dict[str, Any] = dict.fromkeys(LINK_KEYS)
    said_speed = said_width = False
    for prefix, body in (("cap", cap_body), ("sta", sta_body)):
        if body is None:
            continue
        speed = _SPEED.search(body)
        if speed:
            result[f"{prefix}_speed_gts"] = float(speed.group("speed"))
            said_speed = prefix == "sta" and "downgraded" in (speed.group("note") or "")
        width = _WIDTH.search(body)
        if width:
            result[f"{prefix}_width"] = int(width.group("width"))
            said_width = prefix == "sta" and "downgraded" in (width.group("note") or "")
    computed_speed = _below(result["sta_speed_gts"], result["cap_speed_gts"])
    computed_width = _below(result["sta_width"], result["cap_width"])
    result["speed_downgraded"] = True if said_speed else computed_speed
    result["width_downgraded"] = True if said_width else computed_width
    flags = (result["speed_downgraded"], result["width_downgraded"])
    if any(flag is True for flag in flags):
        result["downgraded"] = True
    elif any(flag is False for flag in flags):
        result["downgraded"] = False
    return result


def parse_link_statuses(text: Any) -> dict[str, dict[str, Any]]:
    """:func:`parse_link_status` for each device block of a whole ``lspci -vv`` listing, by address."""
    statuses: dict[str, dict[str, Any]] = {}
    if not isinstance(text, str):
        return statuses
    address: str | None = None
    block: list[str] = []

    def flush() -> None:
        if address is not None:
            status = parse_link_status("\n".join(block))
            if status:
                statuses.setdefault(address, status)

    for line in text.splitlines():
        match = _DEVICE.match(line)
        if match:
            flush()
            address, block = _normalise_address(match.group("address")), []
        else:
            block.append(line)
    flush()
    return statuses
