"""Intel's ``xpu-smi discovery`` output, in each form it comes in: JSON (``-j``), the boxed table, and the
borderless table recent builds print (every line padded to the same width), with or without ``-d`` detail.

The table is a two-column "Device ID | Device Information" box whose right column holds ``Key: Value`` lines;
a device id in the left column starts a new device. The borderless layout is the same without the box, so
both are read by one reader once the box characters are gone. Keys are compared in snake case, which is also
how ``-j`` spells them ("PCI BDF Address" / ``pci_bdf_address``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_BOX_RULE = re.compile(r"^\s*\+[-=+]+\+?\s*$")
_DEVICE_START = re.compile(r"^\s*(\d{1,4})\s{2,}(\S.*)$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /().-]{0,60}?):\s*(.*?)\s*$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_MAX_DEVICES = 64


@dataclass(frozen=True)
class XpuSmiDevice:
    """One device as ``xpu-smi discovery`` lists it; None where the output did not say."""

    device_id: int | None = None  # xpu-smi's own number (the "Device ID" column, ``device_id``)
    device_type: str | None = None  # "GPU", "Discrete GPU"
    name: str | None = None  # "Intel(R) Arc(TM) A770 Graphics"
    vendor: str | None = None
    uuid: str | None = None  # "UUID" (older) or "SOC UUID" (newer builds)
    bus_id: str | None = None  # "0000:4d:00.0"
    pci_device_id: str | None = None  # "0x56a0" as printed
    function_type: str | None = None  # "physical", "virtual"
    state: str | None = None  # "normal"
    driver_version: str | None = None
    kernel_version: str | None = None
    firmware_version: str | None = None  # the GFX firmware: "ATS0_1.1", "DG02_1.3253"
    memory_mib: int | None = None  # "Memory Physical Size: 32768.00 MiB"
    tiles: int | None = None
    eus: int | None = None
    pcie_generation: int | None = None
    pcie_max_width: int | None = None
    xe_link_ports: int | None = None


@dataclass(frozen=True)
class XpuSmiReport:
    devices: tuple[XpuSmiDevice, ...] = ()
    error: str | None = None  # the tool's words when it listed no device ("No device discovered", ...)


# snake-case key -> field; the string fields keep the text as printed.
_TEXT_FIELDS = {
    "device_type": "device_type",
    "device_name": "name",
    "vendor_name": "vendor",
    "uuid": "uuid",
    "soc_uuid": "uuid",
    "pci_bdf_address": "bus_id",
    "pci_device_id": "pci_device_id",
    "function_type": "function_type",
    "device_state": "state",
    "driver_version": "driver_version",
    "kernel_version": "kernel_version",
    "firmware_version": "firmware_version",
    "gfx_firmware_version": "firmware_version",
}
_INT_FIELDS = {
    "device_id": "device_id",
    "number_of_tiles": "tiles",
    "number_of_eus": "eus",
    "pcie_generation": "pcie_generation",
    "pcie_max_link_width": "pcie_max_width",
    "number_of_xe_link_ports": "xe_link_ports",
}


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER.search(value)
        if match:
            try:
                return float(match.group())
            except ValueError:
                return None
    return None


def _device(values: dict[str, object]) -> XpuSmiDevice:
    fields: dict[str, object] = {}
    for key, value in values.items():
        if key in _TEXT_FIELDS and _TEXT_FIELDS[key] not in fields:
            text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
            if text:
                fields[_TEXT_FIELDS[key]] = text[:200]
        elif key in _INT_FIELDS:
            number = _number(value)
            if number is not None and 0 <= number < 1_000_000:
                fields[_INT_FIELDS[key]] = int(number)
        elif key == "memory_physical_size":
            number = _number(value)
            # The table prints MiB ("32768.00 MiB"); a plain number is taken as the same unit.
            if number is not None and 0 < number < 1e9 and "gib" not in str(value).lower():
                fields["memory_mib"] = round(number)
    return XpuSmiDevice(**fields)  # type: ignore[arg-type]  # keys are XpuSmiDevice's own field names


def _from_json(text: str) -> XpuSmiReport | None:
    start = text.find("{")
    if start < 0:
        return None
    try:
        document, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    records = document.get("device_list")
    if not isinstance(records, list):
        # ``-d <id> -j`` prints one device's object on its own.
        records = [document] if "device_id" in document or "device_name" in document else []
    devices = tuple(
        _device({_snake(str(k)): v for k, v in record.items()})
        for record in records[:_MAX_DEVICES]
        if isinstance(record, dict)
    )
    error = None if devices else _first_words(document)
    return XpuSmiReport(devices, error)


def _first_words(document: dict[str, object]) -> str | None:
    for key in ("error", "errors", "message"):
        value = document.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return None


def _unboxed(line: str) -> str:
    """A table row without its box: ``| 0 | Device Name: X |`` -> ``0  Device Name: X``."""
    stripped = line.strip()
    if not stripped.startswith("|"):
        return line.rstrip()
    cells = [cell.strip() for cell in stripped.strip("|").split("|")]
    if len(cells) < 2:
        return "   " + " | ".join(cells)
    left, right = cells[0], " | ".join(cells[1:])
    return f"{left}  {right}" if left else f"    {right}"


def _from_table(text: str) -> XpuSmiReport:
    devices: list[dict[str, object]] = []
    for raw in text.splitlines():
        if _BOX_RULE.match(raw):
            continue
        line = _unboxed(raw)
        if not line.strip():
            continue
        start = _DEVICE_START.match(line)
        if start and ":" in start.group(2):
            if len(devices) >= _MAX_DEVICES:
                break
            devices.append({"device_id": start.group(1)})
            line = "  " + start.group(2)
        if not devices:
            continue
        pair = _KEY_VALUE.match(line)
        if pair:
            devices[-1].setdefault(_snake(pair.group(1)), pair.group(2))
    if devices:
        return XpuSmiReport(tuple(_device(values) for values in devices))
    return XpuSmiReport(error=_error_line(text))


def _error_line(text: str) -> str | None:
    """The tool's own message when no device was listed (the command line a person pasted is skipped)."""
    for line in text.splitlines():
        words = line.strip()
        if words and not words.startswith(("xpu-smi", "sudo xpu-smi", "$")) and not _BOX_RULE.match(words):
            return words[:200]
    return None


def parse_xpu_smi(text: str | None) -> XpuSmiReport:
    """``xpu-smi discovery`` output (``-j`` JSON, boxed or borderless table, ``-d`` detail); never raises."""
    if not text or not text.strip():
        return XpuSmiReport()
    brace = text.find("{")
    if brace >= 0 and "Device Information" not in text[:brace] and "|" not in text[:brace]:
        parsed = _from_json(text)
        if parsed is not None:
            return parsed
    return _from_table(text)
