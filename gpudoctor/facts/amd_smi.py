"""``amd-smi`` output as typed GPUs: ``static --json`` (a bare list, or the newer ``{"gpu_data": [...]}``),
``static`` text, and ``amd-smi list`` (text or JSON).

The text layouts are indented ``KEY: value`` trees under ``GPU: N`` records; they are read into the same
nested dicts the JSON has (keys lower-cased), so one mapping serves every layout. Records that are not GPUs
(``AI_NIC: 0`` in newer ``amd-smi list``) are kept apart and never counted. ``N/A`` is unknown.
"""

from __future__ import annotations

import json
import re

from gpudoctor.facts.amd_model import AmdGpu, AmdToolReport
from gpudoctor.facts.json_values import json_dict, json_int, json_list
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

_RECORD = re.compile(r"^([A-Z][A-Z0-9_]*):\s*(\d+)\s*$")
_KEY_VALUE = re.compile(r"^(\s*)([A-Za-z0-9_ ./()-]+?):\s*(.*?)\s*$")
_UNKNOWN = frozenset({"", "n/a", "na", "none", "unknown", "not supported"})
# Lines amd-smi (and the Python around it) prints instead of a report.
_ERROR_LINE = re.compile(
    r"error|unable to|failed|not initiali[sz]ed|permission denied|no such file|not found|command not found",
    re.IGNORECASE,
)
_ROCM_VERSION = re.compile(r"ROCm version:\s*(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_HEX_ID = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,4})$")
_PROC_VERSION = re.compile(r"^Linux\s*version\s*(\d+\.\d+[^\s(]*)", re.IGNORECASE)


def hex_id(value: object) -> str | None:
    """A PCI id as the model keeps it: ``"0x740F"`` / ``29711`` -> ``"740f"``; None when it is no id."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:04x}" if 0 <= value <= 0xFFFF else None
    if not isinstance(value, str):
        return None
    match = _HEX_ID.match(value.strip())
    return match.group(1).lower().zfill(4) if match else None


def known_text(value: object) -> str | None:
    """Text that says something: ``"N/A"``, ``"Not supported"`` and blanks are unknown."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    return None if text.lower() in _UNKNOWN else text


def known_int(value: object) -> int | None:
    number = json_int(value)
    if number is not None:
        return number
    text = known_text(value)
    if text is None:
        return None
    match = re.match(r"^-?\d+", text)
    return int(match.group(0)) if match else None


def kernel_release_of(driver_version: str | None) -> str | None:
    """The kernel release inside ``/proc/version`` text (spaces stripped or not): ``"6.14.0-24-generic"``."""
    if not driver_version:
        return None
    match = _PROC_VERSION.match(driver_version.strip())
    return match.group(1) if match else None


def _mib(value: object) -> int | None:
    """``{"value": 65520, "unit": "MB"}`` or ``"65520 MB"`` in MiB (amd-smi's MB are MiB: 65520 is 64 GiB)."""
    if isinstance(value, dict):
        amount, unit = value.get("value"), str(value.get("unit") or "MB")
    else:
        text = known_text(value)
        if text is None:
            return None
        match = re.match(r"^(\d+(?:\.\d+)?)\s*([A-Za-z]*)", text)
        if not match:
            return None
        amount, unit = match.group(1), match.group(2) or "MB"
    try:
        number = float(str(amount))
    except ValueError:
        return None
    factor = {"B": 1 / 1048576, "KB": 1 / 1024, "MB": 1, "MIB": 1, "GB": 1024, "GIB": 1024}.get(unit.upper())
    return int(number * factor) if factor is not None and number >= 0 else None


def _name(asic: dict[str, object], board: dict[str, object]) -> str | None:
    for value in (asic.get("market_name"), board.get("product_name")):
        text = known_text(value)
        if text and not _HEX_ID.match(text):
            return text
    return None


def _gpu_of(record: dict[str, object], index: int | None) -> AmdGpu:
    asic, bus = json_dict(record.get("asic")), json_dict(record.get("bus"))
    board, vbios, ifwi = json_dict(record.get("board")), json_dict(record.get("vbios")), json_dict(record.get("ifwi"))
    partition = json_dict(record.get("partition"))
    gfx = known_text(asic.get("target_graphics_version"))
    target, _, features = (gfx or "").partition(":")
    gpu_index = known_int(record.get("gpu"))
    return AmdGpu(
        index=gpu_index if gpu_index is not None else index,
        name=_name(asic, board),
        gfx_target=target or None,
        gfx_features=features or None,
        device_id=hex_id(asic.get("device_id")),
        bus_id=normalize_bus_id(known_text(bus.get("bdf")) or known_text(record.get("bdf"))),
        vram_mib=_mib(json_dict(record.get("vram")).get("size")),
        compute_units=known_int(asic.get("num_compute_units")),
        numa_node=known_int(json_dict(record.get("numa")).get("node")),
        unique_id=known_text(record.get("uuid")),
        compute_partition=known_text(partition.get("compute_partition") or record.get("compute_partition")),
        memory_partition=known_text(partition.get("memory_partition") or record.get("memory_partition")),
        vbios=known_text(vbios.get("version")) or known_text(ifwi.get("version")),
        sources=("amd-smi",),
        kfd_node=known_int(record.get("node_id")),
        partition_id=known_int(record.get("partition_id", partition.get("partition_id"))),
    )


def _text_records(text: str) -> tuple[list[tuple[int, dict[str, object]]], list[str]]:
    """The ``GPU: N`` records of a text report as nested dicts (keys lower-cased), and the other records' names."""
    gpus: list[tuple[int, dict[str, object]]] = []
    others: list[str] = []
    stack: list[tuple[int, dict[str, object]]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        record = _RECORD.match(line)
        if record:
            if record.group(1) == "GPU":
                root: dict[str, object] = {}
                gpus.append((int(record.group(2)), root))
                stack = [(-1, root)]
            else:
                others.append(f"{record.group(1)}: {record.group(2)}")
                stack = []
            continue
        match = _KEY_VALUE.match(line)
        if not match or not stack:
            continue
        indent, key, value = len(match.group(1).expandtabs()), match.group(2).strip().lower(), match.group(3)
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        if value:
            parent.setdefault(key, value)
        else:
            child: dict[str, object] = {}
            parent.setdefault(key, child)
            stack.append((indent, child))
    return gpus, others


def _json_payload(text: str) -> object:
    """The JSON document in ``text`` from its first line that opens one (warnings printed before it are
    skipped), else None."""
    match = re.search(r"^[ \t]*[\[{]", text, re.MULTILINE)
    if match is None:
        return None
    try:
        return json.loads(text[match.start() :])
    except (ValueError, RecursionError):
        return None


def _driver(records: list[dict[str, object]]) -> tuple[str | None, str | None]:
    for record in records:
        driver = json_dict(record.get("driver"))
        version = known_text(driver.get("version"))
        kernel = known_text(driver.get("os_kernel_version")) or kernel_release_of(version)
        if version or kernel:
            return version, kernel
    return None, None


def _error(text: str) -> str | None:
    return next((line.strip() for line in text.splitlines() if _ERROR_LINE.search(line)), None)


@never_raises(AmdToolReport)
def parse_amd_smi(text: str | None) -> AmdToolReport:
    """Any amd-smi output (``static`` or ``list``, JSON or text) as its GPUs and the driver it names."""
    if not text or not text.strip():
        return AmdToolReport()
    payload = _json_payload(text)
    if isinstance(payload, (dict, list)):
        items = json_list(json_dict(payload).get("gpu_data")) if isinstance(payload, dict) else json_list(payload)
        records = [json_dict(item) for item in items if isinstance(item, dict)]
        others: list[str] = []
        numbered = list(enumerate(records))
    else:
        numbered, others = _text_records(text)
        records = [record for _, record in numbered]
    gpus = tuple(_gpu_of(record, index) for index, record in numbered)
    version, kernel = _driver(records)
    rocm = _ROCM_VERSION.search(text)
    return AmdToolReport(
        rocm_version=rocm.group(1) if rocm else None,
        gpus=gpus,
        driver_version=version,
        kernel_release=kernel,
        error=None if gpus else _error(text),
        other_devices=tuple(others),
    )
