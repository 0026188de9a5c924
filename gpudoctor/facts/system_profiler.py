"""``system_profiler SPDisplaysDataType`` (its text and its ``-json`` form) as the Mac's GPUs.

The text is an indented tree: "Graphics/Displays:", one block per GPU ("Apple M3:") with its properties
("Chipset Model: Apple M3", "Total Number of Cores: 10", "Vendor: Apple (0x106b)", "Metal Support: Metal 3";
older macOS: "Metal: Supported, feature set macOS GPUFamily2 v1"; discrete GPUs: "VRAM (Total): 16 GB",
"Device ID: 0x6860"), then "Displays:" with one block per display. A pasted copy may start with the shell
prompt line; everything before the first GPU block is ignored.

The ``-json`` form (what the live collection runs) is ``{"SPDisplaysDataType": [ {...}, ... ]}`` with
Apple's internal key names. No whole real capture of it was available; the keys read here are the few that
public parsers of it agree on (``_name``, ``sppci_model``, ``sppci_cores``, ``spdisplays_mtlgpufamilysupport``
"spdisplays_metal3", ``spdisplays_vendor`` "sppci_vendor_Apple", ``sppci_bus`` "spdisplays_builtin",
``spdisplays_vram``, ``spdisplays_ndrvs``), and the parser stays minimal: a key it does not know is skipped.

Tolerant like every parser here: any text or JSON in, a tuple of :class:`AppleGpu` out, never an exception.
"""

from __future__ import annotations

import json
import re

from gpudoctor.facts.apple_model import AppleGpu

_MAX_TEXT = 1_000_000
_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<key>[^:\n]{1,200}?):[ \t]*(?P<value>.*?)[ \t]*$")
_VENDOR = re.compile(r"^(?P<name>.*?)\s*\((?P<id>0x[0-9a-fA-F]{1,4})\)\s*$")
_SIZE = re.compile(r"(\d{1,7}(?:\.\d{1,3})?)\s*(GB|MB|TB)\b", re.IGNORECASE)
_METAL_JSON = re.compile(r"^spdisplays_metal(\d{1,2})$")
# PCI vendor ids macOS prints beside the vendor's name (PCI-SIG's registry; 106b is Apple's).
_VENDOR_IDS = {"0x106b": "apple", "0x1002": "amd", "0x8086": "intel", "0x10de": "nvidia"}
_VENDOR_WORDS = (("apple", "apple"), ("amd", "amd"), ("ati", "amd"), ("intel", "intel"), ("nvidia", "nvidia"))


def parse_system_profiler(text: str | None) -> tuple[AppleGpu, ...]:
    """The GPUs of a ``system_profiler SPDisplaysDataType`` output, text or ``-json``; () when none is read."""
    if not text:
        return ()
    text = text[:_MAX_TEXT]
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return parse_system_profiler_json(stripped)
    try:
        return _parse_text(text)
    except (ValueError, IndexError):  # belt and braces: the parser is meant never to raise
        return ()


# --------------------------------------------------------------------------- text


def _parse_text(text: str) -> tuple[AppleGpu, ...]:
    rows: list[tuple[int, str, str]] = []
    for line in text.splitlines():
        match = _LINE.match(line.expandtabs(4))
        if match:
            rows.append((len(match.group("indent")), match.group("key").strip(), match.group("value")))
    gpus: list[AppleGpu] = []
    for position, (indent, key, _value) in enumerate(rows):
        if key != "Chipset Model":
            continue
        header = _header_before(rows, position, indent)
        if header is None:
            continue
        gpus.append(_gpu_from_block(rows, header, indent))
    return tuple(gpus)


def _header_before(rows: list[tuple[int, str, str]], position: int, indent: int) -> int | None:
    """The row of the GPU's own heading ("Apple M3:"), the nearest value-less row less indented."""
    for index in range(position - 1, -1, -1):
        row_indent, _key, value = rows[index]
        if row_indent < indent:
            return index if not value else None
    return None


def _gpu_from_block(rows: list[tuple[int, str, str]], header: int, indent: int) -> AppleGpu:
    header_indent, header_name, _ = rows[header]
    props: dict[str, str] = {}
    displays = 0
    display_indent: int | None = None
    in_displays = False
    for row_indent, key, value in rows[header + 1 :]:
        if row_indent <= header_indent:
            break
        if row_indent == indent:
            in_displays = key == "Displays" and not value
            display_indent = None
            if not in_displays:
                props.setdefault(key, value)
            continue
        if in_displays and row_indent > indent:
            display_indent = row_indent if display_indent is None else display_indent
            if row_indent == display_indent and not value:
                displays += 1
    vendor_name, vendor_id = _vendor(props.get("Vendor"))
    metal = props.get("Metal Support") or props.get("Metal Family") or props.get("Metal")
    return AppleGpu(
        name=props.get("Chipset Model") or header_name or None,
        vendor=_vendor_key(vendor_name, vendor_id, props.get("Chipset Model")),
        cores=_int(props.get("Total Number of Cores")),
        metal=metal or None,
        vram_mib=_mib(props.get("VRAM (Total)") or props.get("VRAM (Dynamic, Max)")),
        bus=props.get("Bus") or None,
        vendor_id=vendor_id,
        device_id=(props.get("Device ID") or "").lower() or None,
        displays=displays,
    )


def _vendor(text: str | None) -> tuple[str | None, str | None]:
    """ "Apple (0x106b)" -> ("Apple", "0x106b"); "sppci_vendor_Apple" -> ("Apple", None)."""
    if not text:
        return None, None
    text = text.removeprefix("sppci_vendor_").strip()
    match = _VENDOR.match(text)
    if match:
        return match.group("name") or None, match.group("id").lower()
    return text or None, None


def _vendor_key(name: str | None, vendor_id: str | None, model: str | None) -> str | None:
    if vendor_id in _VENDOR_IDS:
        return _VENDOR_IDS[vendor_id]
    for text in (name, model):
        lowered = (text or "").lower()
        for word, key in _VENDOR_WORDS:
            if re.search(rf"\b{word}\b", lowered):
                return key
    if (model or "").lower().startswith(("radeon", "firepro")):
        return "amd"
    return None


def _int(text: str | None) -> int | None:
    match = re.match(r"\s*(\d{1,5})\b", text or "")
    return int(match.group(1)) if match else None


def _mib(text: str | None) -> int | None:
    match = _SIZE.search(text or "")
    if not match:
        return None
    value = float(match.group(1))
    unit = match.group(2).upper()
    return int(value * {"MB": 1, "GB": 1024, "TB": 1024 * 1024}[unit])


# --------------------------------------------------------------------------- json


def parse_system_profiler_json(text: str) -> tuple[AppleGpu, ...]:
    """The ``-json`` form; () for anything that is not ``{"SPDisplaysDataType": [...]}``."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return ()
    entries = document.get("SPDisplaysDataType") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return ()
    return tuple(_gpu_from_json(entry) for entry in entries if isinstance(entry, dict))


def _gpu_from_json(entry: dict[str, object]) -> AppleGpu:
    def text(key: str) -> str | None:
        value = entry.get(key)
        return value.strip() or None if isinstance(value, str) else None

    model = text("sppci_model") or text("_name")
    vendor_name, vendor_id = _vendor(text("spdisplays_vendor"))
    metal = text("spdisplays_mtlgpufamilysupport") or text("spdisplays_metal")
    metal_match = _METAL_JSON.match(metal or "")
    bus = text("sppci_bus")
    displays = entry.get("spdisplays_ndrvs")
    return AppleGpu(
        name=model,
        vendor=_vendor_key(vendor_name, vendor_id, model),
        cores=_int(text("sppci_cores")),
        metal=f"Metal {metal_match.group(1)}" if metal_match else metal,
        vram_mib=_mib(text("spdisplays_vram") or text("spdisplays_vram_shared")),
        bus="Built-In" if bus == "spdisplays_builtin" else bus,
        vendor_id=vendor_id,
        displays=len(displays) if isinstance(displays, list) else None,
    )
