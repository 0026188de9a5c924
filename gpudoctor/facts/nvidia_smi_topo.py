"""``nvidia-smi topo -m``: how each pair of GPUs is connected, and each GPU's NUMA node.

The matrix names the path between two GPUs: ``NV#`` (a bonded set of # NVLinks), ``PIX`` (at
most one PCIe bridge), ``PXB`` (several bridges), ``PHB`` (through a PCIe host bridge, the CPU),
``NODE`` (between host bridges of one NUMA node) or ``SYS`` (across the NUMA interconnect).
Both layouts are read: tab-separated (newer drivers) and space-aligned (older ones, and pastes);
NIC columns and the legend are ignored.  Pasted matrices are often damaged (merged cells, rows
missing), so every cell is optional and the parser never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_GPU_LABEL = re.compile(r"^GPU(\d{1,3})$")
_LINK = re.compile(r"^(X|NV\d{1,2}|PIX|PXB|PHB|NODE|SYS|SOC)$")
_SPLIT_SPACES = re.compile(r" {2,}|\t")
MAX_GPUS = 256


@dataclass
class GpuTopology:
    """The GPU part of a topology matrix.  Indices are nvidia-smi's GPU numbers (not CUDA's)."""

    gpus: list[int] = field(default_factory=list)
    links: dict[tuple[int, int], str] = field(default_factory=dict)  # (0, 1) -> "NV18"; both orders present
    numa: dict[int, int] = field(default_factory=dict)  # GPU -> its NUMA node ("NUMA Affinity")
    cpu_affinity: dict[int, str] = field(default_factory=dict)  # GPU -> "0-13,28-41"

    def link(self, a: int, b: int) -> str | None:
        return self.links.get((a, b)) or self.links.get((b, a))

    @staticmethod
    def nvlinks(link: str | None) -> int | None:
        """The number of NVLinks a cell names ("NV12" -> 12); None for a PCIe path."""
        match = re.fullmatch(r"NV(\d{1,2})", link or "")
        return int(match.group(1)) if match else None


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in _SPLIT_SPACES.split(line.rstrip())]


def parse_topo_matrix(text: Any) -> GpuTopology | None:
    """The matrix from ``nvidia-smi topo -m`` output; None when there is no matrix to read."""
    if not isinstance(text, str):
        return None
    try:
        return _parse(text)
    except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
        return None


def _parse(text: str) -> GpuTopology | None:
    lines = text.splitlines()
    # The header starts with "GPU0" followed by another column name; a row "GPU0" is followed by its "X".
    header_at = next((i for i, line in enumerate(lines) if line.split()[:1] == ["GPU0"]
                      and line.split()[1:2] != ["X"]), None)
    if header_at is None:
        return None
    header = [cell for cell in _cells(lines[header_at]) if cell]
    gpu_columns = []
    for cell in header:
        match = _GPU_LABEL.match(cell)
        if not match:
            break
        gpu_columns.append(int(match.group(1)))
    if not gpu_columns or len(gpu_columns) > MAX_GPUS:
        return None
    topology = GpuTopology(gpus=list(gpu_columns))
    for line in lines[header_at + 1:]:
        cells = _cells(line)
        cells = cells[1:] if cells and cells[0] == "" else cells  # a tab-indented paste
        if not cells:
            continue
        label = _GPU_LABEL.match(cells[0])
        if not label:
            if line.strip().lower().startswith("legend"):
                break
            continue
        row = int(label.group(1))
        values = cells[1:]
        for column, value in zip(gpu_columns, values):
            if column != row and _LINK.match(value) and value != "X":
                topology.links[(row, column)] = value
        # After the device columns: the CPU list, then the NUMA node (cells of garbled pastes may shift,
        # so the CPU list is found by its form and the NUMA node must follow it).
        rest = values[len(gpu_columns):]
        for position, value in enumerate(rest):
            if re.fullmatch(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*", value) and (
                    "-" in value or "," in value or position + 1 < len(rest)):
                topology.cpu_affinity[row] = value
                following = rest[position + 1] if position + 1 < len(rest) else ""
                if following.isdigit():
                    topology.numa[row] = int(following)
                break
    return topology
