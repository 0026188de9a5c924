"""The GPUs the plain ``nvidia-smi`` table shows as broken, as ``GpuHealth``.

The table says almost nothing about health, so only its broken GPUs are read: "Unable to determine
the device handle for GPU ...: GPU is lost" lines and ``ERR!`` cells.  Every parser here never
raises; unknown stays ``None``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.facts.health_model import GpuHealth
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

TABLE_SOURCE = "nvidia-smi"
# A GPU that fell off the bus shows ERR! in most cells of its block; one ERR! (a dead fan) does not make it lost.
_LOST_ERR_CELLS = 3

# "|   0  Tesla V100-SXM2-16GB    On   | 00000000:18:00.0 Off |   ERR! |" - the first line of a GPU's block
_GPU_LINE = re.compile(r"^\|\s*(\d{1,3})\s+.*?\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b")


def _err_cells(text: str) -> dict[str, tuple[int | None, int]]:
    """bus id -> (index, ERR! cells) for every GPU block of the table that shows any."""
    found: dict[str, tuple[int | None, int]] = {}
    current: tuple[int, str] | None = None
    for raw in text.splitlines()[:5000]:
        line = raw.strip()[:1000]
        if not line.startswith("|") or line.startswith("|="):
            current = None  # a rule ends the block
            continue
        if line.startswith(("| Processes", "| MIG devices")):
            break
        match = _GPU_LINE.match(line)
        if match:
            bus = normalize_bus_id(match.group(2))
            current = (int(match.group(1)), bus) if bus else None
        if current is not None and "ERR!" in line:
            index, bus = current
            found[bus] = (index, found.get(bus, (index, 0))[1] + line.count("ERR!"))
    return found


# One line per GPU nvidia-smi could not open: "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"
_LOST_LINE = re.compile(
    r"Unable to determine the device handle for GPU\s*([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:"
    r"[0-9A-Fa-f]{2}\.[0-7])\s*:\s*(.{0,200})",
    re.I,
)


def _from_table(text: str) -> list[tuple[GpuHealth, bool]]:
    """The broken GPUs, each with whether nvidia-smi could not even open it (a lost line, not ERR! cells)."""
    healths: dict[str, tuple[GpuHealth, bool]] = {}
    for line in text.splitlines()[:5000]:
        match = _LOST_LINE.search(line[:1000])
        bus = normalize_bus_id(match.group(1)) if match else None
        if match and bus and bus not in healths:
            reason = match.group(2).strip() or "no reason given"
            healths[bus] = (
                GpuHealth(
                    bus_id=bus,
                    source=TABLE_SOURCE,
                    lost=True,
                    lost_detail=f"nvidia-smi: Unable to determine the device handle: {reason}",
                ),
                True,
            )
    for bus, (index, cells) in _err_cells(text).items():
        if bus in healths:
            lost, no_handle = healths[bus]
            healths[bus] = (replace(lost, index=index), no_handle)
            continue
        health = GpuHealth(
            index=index,
            bus_id=bus,
            source=TABLE_SOURCE,
            lost=cells >= _LOST_ERR_CELLS,
            lost_detail=f"nvidia-smi shows ERR! in {cells} cell{'s' if cells > 1 else ''}",
        )
        healths[bus] = (health, False)
    return list(healths.values())


@never_raises(list[tuple[GpuHealth, bool]])
def _table_entries(text: object) -> list[tuple[GpuHealth, bool]]:
    return _from_table(text) if isinstance(text, str) else []


def health_from_table(text: object) -> list[GpuHealth]:
    """The GPUs the plain ``nvidia-smi`` output shows as broken (lost, or ERR! cells); the rest say nothing."""
    return [health for health, _no_handle in _table_entries(text)]
