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
from dataclasses import replace
from typing import TypedDict

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


# The address given to a pasted lspci block that names no device (a LnkCap/LnkSta excerpt).
UNPLACED_LSPCI_BLOCK = "unknown"


def _normalise_address(address: str) -> str:
    # The sysfs spelling, which facts from other sources are joined on.  Without
    # -D lspci omits the domain; domain 0 is the only one it leaves out.
    normalised = normalize_bus_id(address)
    if normalised:
        return normalised
    address = address.lower()
    return address if address.count(":") == 2 else "0000:" + address


def _device_from_line(address: str, rest: str) -> PciDevice:
    class_part, sep, description = rest.partition(": ")
    if not sep:
        # No "class: description" separator: keep all of it as the description.
        class_part, description = "", rest
    class_code = _CLASS_CODE.search(class_part)
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
        description = description[: ids.start()]
    return PciDevice(
        address=_normalise_address(address),
        vendor_id=ids.group(1).lower() if ids else None,
        device_id=ids.group(2).lower() if ids else None,
        class_code=class_code.group(1).lower() if class_code else None,
        description=description.strip() or None,
    )


def parse_lspci(text: object) -> list[PciDevice]:
    """Parse ``lspci [-D] [-nn] [-k]`` output: every function listed, in order.

    Indented lines belong to the device above; only "Kernel driver in use" is
    kept (``PciDevice.driver``).  A device without that line has no driver bound
    (or lspci ran without ``-k``): ``driver`` stays ``None``.
    """
    devices: list[PciDevice] = []
    if not isinstance(text, str):
        return devices
    # devices[-1] is the device whose indented lines are being read, once there is one.
    for line in text.splitlines():
        match = _DEVICE.match(line)
        if match:
            devices.append(_device_from_line(match.group("address"), match.group("rest")))
            continue
        if devices:
            driver = _DRIVER.match(line)
            if driver:
                devices[-1] = replace(devices[-1], driver=driver.group(1))
                continue
            devices[-1] = _fill_link(devices[-1], line)
    return devices


def is_device_line(line: str) -> bool:
    """The line heads a device ("01:00.0 VGA compatible controller: ..."), not one of its indented details."""
    return _DEVICE.match(line) is not None


def lists_devices(text: object) -> bool:
    """The lspci output lists devices (a scan of the bus), not only a pasted block of one device's lines."""
    return isinstance(text, str) and any(_DEVICE.match(line) for line in text.splitlines())


def shows_drivers(text: object) -> bool:
    """The lspci output says which driver owns its devices (it ran with ``-k``).  Without ``-k`` (or in a pasted
    ``lspci | grep NVIDIA``) no device has a "Kernel driver in use" line, so a GPU without one is of unknown
    binding, not known to have no driver."""
    return (
        lists_devices(text) and isinstance(text, str) and ("Kernel driver in use" in text or "Kernel modules" in text)
    )


def fill_from_lspci(device: PciDevice, listed: PciDevice) -> PciDevice:
    """``device`` (from sysfs) with the description, driver and link values it lacks taken from lspci's ``listed``."""
    return replace(
        device,
        description=device.description if device.description is not None else listed.description,
        driver=device.driver if device.driver is not None else listed.driver,
        current_link_speed=(
            device.current_link_speed if device.current_link_speed is not None else listed.current_link_speed
        ),
        max_link_speed=device.max_link_speed if device.max_link_speed is not None else listed.max_link_speed,
        current_link_width=(
            device.current_link_width if device.current_link_width is not None else listed.current_link_width
        ),
        max_link_width=device.max_link_width if device.max_link_width is not None else listed.max_link_width,
    )


def _fill_link(device: PciDevice, line: str) -> PciDevice:
    """``device`` with the link values of one ``LnkCap``/``LnkSta`` line it does not have yet."""
    # Only the first LnkCap/LnkSta of a block: the anchored "LnkCap:" never matches "LnkCap2:", and a
    # device has one PCIe capability, so a second one would be a paste of another device.
    capable = _LNK_CAP.match(line)
    if capable is not None:
        if device.max_link_speed is None and device.max_link_width is None:
            speed, width = _speed_and_width(capable.group("body"))
            return replace(device, max_link_speed=speed, max_link_width=width)
        return device
    state = _LNK_STA.match(line)
    if state is not None and device.current_link_speed is None and device.current_link_width is None:
        speed, width = _speed_and_width(state.group("body"))
        return replace(device, current_link_speed=speed, current_link_width=width)
    return device


def _speed_and_width(body: str) -> tuple[str | None, int | None]:
    """("16GT/s", 16) from "Port #0, Speed 16GT/s, Width x16, ..." or "Speed 2.5GT/s (downgraded), Width x16 (ok)".

    The speed stays text, as lspci prints it, the way sysfs keeps "16.0 GT/s PCIe";
    ``gpudoctor.kb.pcie_gen_for_speed`` reads both forms.
    """
    speed = _SPEED.search(body)
    width = _WIDTH.search(body)
    return (f"{speed.group('speed')}GT/s" if speed else None, int(width.group("width")) if width else None)


class LinkFields(TypedDict, total=False):
    """``PciDevice``'s link fields, only those a block printed (so they can be passed on as keywords)."""

    max_link_speed: str
    max_link_width: int
    current_link_speed: str
    current_link_width: int


def link_fields(text: object) -> LinkFields:
    """The first ``LnkCap``/``LnkSta`` pair of one ``lspci -vv`` block as ``PciDevice`` link fields.

    For a block pasted without its device line, which ``parse_lspci`` cannot place:
    ``{"max_link_speed": "16GT/s", "max_link_width": 16, "current_link_speed": "2.5GT/s",
    "current_link_width": 16}``, with only the values that were printed; ``{}`` when none was.
    """
    fields = LinkFields()
    if not isinstance(text, str):
        return fields
    device = PciDevice(address="")
    for line in text.splitlines():
        device = _fill_link(device, line)
    if device.max_link_speed is not None:
        fields["max_link_speed"] = device.max_link_speed
    if device.max_link_width is not None:
        fields["max_link_width"] = device.max_link_width
    if device.current_link_speed is not None:
        fields["current_link_speed"] = device.current_link_speed
    if device.current_link_width is not None:
        fields["current_link_width"] = device.current_link_width
    return fields


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


class LinkStatus(TypedDict, total=False):
    """One device's link, capability against state: every key of :data:`LINK_KEYS`, or none at all."""

    cap_speed_gts: float | None
    cap_width: int | None
    sta_speed_gts: float | None
    sta_width: int | None
    speed_downgraded: bool | None
    width_downgraded: bool | None
    downgraded: bool | None


def _below(current: float | int | None, capable: float | int | None) -> bool | None:
    if current is None or capable is None:
        return None
    return current < capable


def parse_link_status(text: object) -> LinkStatus:
    """The first ``LnkCap``/``LnkSta`` pair in ``lspci -vv`` text (one device's block).

    Returns ``{}`` when neither line is there, else every key of
    :data:`LINK_KEYS` with ``None`` for what is unknown.  ``downgraded`` is True
    when the link runs slower or narrower than capable, whether lspci said so
    ("(downgraded)", newer pciutils) or the numbers show it (older pciutils say
    nothing).  GPUs drop to 2.5 GT/s when idle to save power, so a speed
    downgrade alone is a hint for a check to weigh, not a verdict.
    """
    if not isinstance(text, str):
        return LinkStatus()
    cap_body: str | None = None
    sta_body: str | None = None
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
        return LinkStatus()
    cap_speed, cap_width, _, _ = _numbers(cap_body)
    sta_speed, sta_width, said_speed, said_width = _numbers(sta_body)
    speed_downgraded = True if said_speed else _below(sta_speed, cap_speed)
    width_downgraded = True if said_width else _below(sta_width, cap_width)
    flags = (speed_downgraded, width_downgraded)
    downgraded = True if True in flags else False if False in flags else None
    return LinkStatus(
        cap_speed_gts=cap_speed,
        cap_width=cap_width,
        sta_speed_gts=sta_speed,
        sta_width=sta_width,
        speed_downgraded=speed_downgraded,
        width_downgraded=width_downgraded,
        downgraded=downgraded,
    )


def _numbers(body: str | None) -> tuple[float | None, int | None, bool, bool]:
    """(speed GT/s, width, whether lspci marked the speed "(downgraded)", the same for the width)."""
    if body is None:
        return None, None, False, False
    speed = _SPEED.search(body)
    width = _WIDTH.search(body)
    return (
        float(speed.group("speed")) if speed else None,
        int(width.group("width")) if width else None,
        bool(speed and "downgraded" in (speed.group("note") or "")),
        bool(width and "downgraded" in (width.group("note") or "")),
    )


def parse_link_statuses(text: object) -> dict[str, LinkStatus]:
    """:func:`parse_link_status` for each device block of a whole ``lspci -vv`` listing, by address."""
    statuses: dict[str, LinkStatus] = {}
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
