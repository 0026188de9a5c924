"""``rocm-smi`` output as typed GPUs: ``--json`` (ROCm 4-6 key spellings), ``-a`` / ``--showallinfo`` text
and the concise table (ROCm 6's two-line rows with the name, and the older one-header layout).

Key spellings change between releases (``GPU ID`` in ROCm 5, ``Device ID`` in 6.0; ``Card series`` and
``Card Series`` in 6.1, which adds ``GFX Version``), so every spelling is read. The name comes from the tool's
own ``Card series`` / ``Device Name`` (never from a file name); old rocm-smi printed ``0x1002`` there, which is
a vendor id, not a name. ``Driver version`` is the loaded amdgpu module's version, whichever rocm-smi reads it.
"""

from __future__ import annotations

import json
import re

from gpudoctor.facts.amd_model import AmdGpu, AmdToolReport
from gpudoctor.facts.amd_smi import hex_id, known_int, known_text
from gpudoctor.facts.json_values import json_dict
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

_CARD = re.compile(r"^card(\d+)$", re.IGNORECASE)
_ALL_INFO_LINE = re.compile(r"^GPU\[(\d+)\]\s*:\s*(.*)$")
_DRIVER_LINE = re.compile(r"^\s*Driver version:\s*(\S+)", re.MULTILINE | re.IGNORECASE)
# ROCm 6 concise row: "0       [0x74a1 : 0x00]       35.0°C ..." followed by an indented name line.
_CONCISE_ROW = re.compile(r"^(\d+)\s+\[(0x[0-9a-fA-F]+)\s*:\s*0x[0-9a-fA-F]+\]\s*(.*)$")
# ROCm 6.0/6.1 concise row: "0       1     0x73bf,   56276  42.0°C ..." (device, KFD node, device id, GUID).
_CONCISE_NODE_ROW = re.compile(r"^(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+),\s*\d+\s+(.*)$")
# The older one-header layout: "0    37.0c           38.0W   300Mhz ..." (index only).
_LEGACY_ROW = re.compile(r"^(\d+)\s+(?:\d+(?:\.\d+)?\s*(?:c|°C|C)\b|N/A)")
_PARTITIONS = re.compile(r"\b(NPS\d+|N/A),\s*(SPX|DPX|TPX|QPX|CPX|N/A)\b")
_ERROR_LINE = re.compile(
    r"error|not initiali[sz]ed|unable to|permission denied|no amd gpus|not found|failed", re.IGNORECASE
)
_HEX_ONLY = re.compile(r"^0x[0-9a-fA-F]+$")


def _first(fields: dict[str, str], *keys: str) -> str | None:
    """The first of ``keys`` that holds a known value (every spelling the releases used)."""
    lowered = {key.strip().lower(): value for key, value in fields.items()}
    for key in keys:
        value = known_text(lowered.get(key.lower()))
        if value is not None:
            return value
    return None


def _series_name(fields: dict[str, str]) -> str | None:
    name = _first(fields, "Card Series", "Device Name", "Marketing Name")
    return None if name is None or _HEX_ONLY.match(name) else name


def _vram_mib(fields: dict[str, str]) -> int | None:
    total = known_int(_first(fields, "VRAM Total Memory (B)"))
    return total // 1048576 if total is not None and total >= 0 else None


def gpu_from_fields(fields: dict[str, str], index: int | None) -> AmdGpu:
    """One GPU from its ``key: value`` fields (a ``cardN`` JSON object, or the ``GPU[n]`` lines of ``-a``)."""
    gfx = _first(fields, "GFX Version")
    unique = _first(fields, "Unique ID")
    return AmdGpu(
        index=index,
        name=_series_name(fields),
        gfx_target=gfx.partition(":")[0] if gfx and gfx.startswith("gfx") else None,
        device_id=hex_id(_first(fields, "Device ID", "GPU ID")),
        bus_id=normalize_bus_id(_first(fields, "PCI Bus")),
        vram_mib=_vram_mib(fields),
        numa_node=known_int(_first(fields, "(Topology) Numa Node", "NUMA Node")),
        unique_id=unique.lower() if unique else None,
        compute_partition=_first(fields, "Compute Partition"),
        memory_partition=_first(fields, "Memory Partition"),
        vbios=_first(fields, "VBIOS version"),
        sources=("rocm-smi",),
        kfd_node=known_int(_first(fields, "Node ID")),
    )


def _from_json(payload: dict[str, object]) -> AmdToolReport:
    gpus = []
    for key, value in payload.items():
        match = _CARD.match(key.strip())
        if match and isinstance(value, dict):
            fields = {str(k): v for k, v in value.items() if isinstance(v, str)}
            gpus.append(gpu_from_fields(fields, int(match.group(1))))
    system = json_dict(payload.get("system"))
    driver = known_text(system.get("Driver version"))
    return AmdToolReport(gpus=tuple(sorted(gpus, key=lambda g: g.index or 0)), driver_version=driver)


def _from_all_info(text: str) -> tuple[AmdGpu, ...]:
    per_gpu: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        match = _ALL_INFO_LINE.match(line.strip())
        if not match:
            continue
        key, sep, value = match.group(2).partition(":")
        if sep:
            per_gpu.setdefault(int(match.group(1)), {}).setdefault(key.strip(), value.strip())
    return tuple(gpu_from_fields(fields, index) for index, fields in sorted(per_gpu.items()))


def _partitions(rest: str) -> tuple[str | None, str | None]:
    match = _PARTITIONS.search(rest)
    if not match:
        return None, None
    return known_text(match.group(2)), known_text(match.group(1))


def _from_concise(text: str) -> tuple[AmdGpu, ...]:
    gpus: list[AmdGpu] = []
    lines = [line.rstrip() for line in text.splitlines()]
    legacy = any(re.match(r"^\s*GPU\s+Temp", line) for line in lines)
    for number, line in enumerate(lines):
        row = _CONCISE_ROW.match(line) or _CONCISE_NODE_ROW.match(line)
        if row is None:
            if legacy and _LEGACY_ROW.match(line):
                gpus.append(AmdGpu(index=int(line.split()[0]), sources=("rocm-smi",)))
            continue
        node = int(row.group(2)) if row.re is _CONCISE_NODE_ROW else None
        device = row.group(3) if row.re is _CONCISE_NODE_ROW else row.group(2)
        compute, memory = _partitions(row.group(row.lastindex or 0))
        following = lines[number + 1] if number + 1 < len(lines) else ""
        # The name line under a ROCm 6 row: indented, no leading number, not a rule.
        name = following.strip() if following[:1].isspace() and following.strip()[:1] not in ("", "=", "-") else None
        gpus.append(
            AmdGpu(
                index=int(row.group(1)),
                name=None if name is None or _HEX_ONLY.match(name) else name,
                device_id=hex_id(device),
                compute_partition=compute,
                memory_partition=memory,
                sources=("rocm-smi",),
                kfd_node=node,
            )
        )
    return tuple(gpus)


def _error(text: str) -> str | None:
    return next((line.strip() for line in text.splitlines() if _ERROR_LINE.search(line)), None)


@never_raises(AmdToolReport)
def parse_rocm_smi(text: str | None) -> AmdToolReport:
    """Any rocm-smi output (``--json``, ``-a`` text or the concise table) as its GPUs and the driver version."""
    if not text or not text.strip():
        return AmdToolReport()
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            payload = json.loads(stripped)
        except (ValueError, RecursionError):
            payload = None
        if isinstance(payload, dict):
            return _from_json(payload)
    driver_match = _DRIVER_LINE.search(text)
    driver = driver_match.group(1) if driver_match else None
    gpus = _from_all_info(text) or _from_concise(text)
    return AmdToolReport(gpus=gpus, driver_version=driver, error=None if gpus else _error(text))
