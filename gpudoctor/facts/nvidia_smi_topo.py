"""``nvidia-smi topo -m`` and ``nvidia-smi topo -p2p``: the printed topology matrices, read as printed.

``topo -m`` names the path between two devices: ``NV#`` (a bonded set of # NVLinks), ``PIX`` (at most
one PCIe bridge), ``PXB`` (several bridges), ``PHB`` (through a PCIe host bridge, the CPU), ``NODE``
(between host bridges of one NUMA node), ``SYS`` (across the NUMA interconnect; ``SOC`` on old
drivers).  Devices are GPUs and NICs ("NIC0" with a "NIC Legend", or "mlx5_0" on old drivers); after the
device columns come "CPU Affinity", "NUMA Affinity" and "GPU NUMA ID" (which columns depends on the
driver).  ``topo -p2p r|w|n|a|p`` prints one status per GPU pair instead ("OK", "GNS", ...).

Both layouts are read: tab-separated (what nvidia-smi writes) and space-aligned (a terminal's copy,
and most pastes).  Pastes are often damaged (cells merged, rows cut, prompt lines around), so every cell
is optional, ``complete`` says whether anything was missing, and the parsers never raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from gpudoctor.facts.topology_model import P2PMatrix, TopoMatrix

_GPU_LABEL = re.compile(r"GPU(\d{1,3})")
_LINK = re.compile(r"NV\d{1,2}|PIX|PXB|PHB|NODE|SYS|SOC")
_CPU_LIST = re.compile(r"\d{1,5}(?:-\d{1,5})?(?:,\d{1,5}(?:-\d{1,5})?){0,256}")
_NUMBER = re.compile(r"\d{1,5}")
_SPACES = re.compile(r" {2,}")
_LEGEND_ENTRY = re.compile(r"(NIC\d{1,3})\s*:\s*(\S{1,64})")
TAIL_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
P2P_STATUSES = ("OK", "CNS", "GNS", "TNS", "NS", "U", "DI", "DR")
MAX_DEVICES = 512
MAX_LINES = 4096

# What nvidia-smi prints instead of a matrix.  Kept whole so a check can quote nvidia-smi's own words.
_ERROR = re.compile(
    r"^\s*(?:ERROR\b|Error\b|NVIDIA-SMI has failed|Failed to initialize NVML|No devices were found"
    r"|Unable to determine|Driver/library version mismatch|NVML: |Invalid combination)",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------- shared helpers


def _cells(line: str) -> tuple[list[str], bool]:
    """The line's cells and whether it was tab-separated.  Tabs keep empty cells; spaces cannot."""
    line = line.rstrip("\r\n")
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")], True
    return [cell.strip() for cell in _SPACES.split(line.strip())], False


def _error_line(lines: list[str]) -> str | None:
    return next((line.strip() for line in lines if _ERROR.match(line)), None)


def _header(lines: list[str]) -> tuple[int, list[str]] | None:
    """Where the header is and its column names.  It starts with "GPU<n>" not followed by a cell value:
    a row "GPU0  X  NV18" is followed by its own cells, a header "GPU0  GPU1" (or "GPU0  CPU Affinity")
    by another column name."""
    for at, line in enumerate(lines[:MAX_LINES]):
        cells = [cell for cell in _cells(line)[0] if cell]
        if not cells or not _GPU_LABEL.fullmatch(cells[0]):
            continue
        following = cells[1] if len(cells) > 1 else ""
        if following == "X" or _LINK.fullmatch(following) or following in P2P_STATUSES:
            continue
        return at, cells[:MAX_DEVICES]
    return None


Device = TypeVar("Device", str, int)  # a column label ("GPU0", "NIC1") or a GPU index


def _both_orders(cells: dict[tuple[Device, Device], str]) -> dict[tuple[Device, Device], str]:
    """Each cell as printed, and its mirror where the mirror cell itself was not readable."""
    merged = dict(cells)
    for (a, b), value in cells.items():
        merged.setdefault((b, a), value)
    return merged


# --------------------------------------------------------------------------- topo -m


def parse_topo_matrix(text: object) -> TopoMatrix | None:
    """The ``nvidia-smi topo -m`` matrix.

    A ``TopoMatrix`` with ``error`` set (and no GPUs) when nvidia-smi printed an error instead; None when
    the text holds neither a matrix nor an nvidia-smi error.
    """
    if not isinstance(text, str):
        return None
    try:
        return _parse_matrix(text)
    except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
        return None


@dataclass
class _Cells:
    """The cells read so far from the rows of one ``topo -m`` matrix (frozen into a ``TopoMatrix`` at the end)."""

    links: dict[tuple[str, str], str] = field(default_factory=dict)
    cpu_affinity: dict[int, str] = field(default_factory=dict)
    numa_affinity: dict[int, int] = field(default_factory=dict)
    gpu_numa_id: dict[int, int] = field(default_factory=dict)


def _parse_matrix(text: str) -> TopoMatrix | None:
    lines = text.splitlines()
    found = _header(lines)
    if found is None:
        error = _error_line(lines)
        return TopoMatrix(error=error, complete=False) if error else None
    header_at, columns = found
    devices: list[str] = []
    tail: list[str] = []
    for name in columns:
        if name in TAIL_COLUMNS or tail:
            tail.append(name)  # after the first affinity column only affinity columns follow
        elif name not in devices:
            devices.append(name)
    has_legend = any(line.strip().lower() == "legend:" for line in lines[header_at:])
    gpus = [int(match.group(1)) for match in map(_GPU_LABEL.fullmatch, devices) if match]
    nics = [name for name in devices if not _GPU_LABEL.fullmatch(name)]
    # Old drivers label a NIC column with the device itself ("mlx5_0"): that is its name too.
    nic_names = {name: name for name in nics if not re.fullmatch(r"NIC\d{1,3}", name)}

    cells_read = _Cells()
    complete = True
    rows_seen: set[str] = set()
    in_nic_legend = False
    for line in lines[header_at + 1 : header_at + 1 + MAX_LINES]:
        stripped = line.strip()
        lowered = stripped.lower()
        if lowered == "nic legend:":
            in_nic_legend = True
            continue
        if in_nic_legend:
            entry = _LEGEND_ENTRY.fullmatch(stripped)
            if entry and entry.group(1) in nics:
                nic_names[entry.group(1)] = entry.group(2)
            continue
        if lowered == "legend:":
            continue
        cells, tabbed = _cells(line)
        cells = cells[1:] if cells and cells[0] == "" else cells  # the header's empty corner, a tab indent
        if not cells or cells[0] not in devices or cells[0] in rows_seen:
            continue
        label = cells[0]
        rows_seen.add(label)
        if not _read_row(cells_read, label, cells[1:], tabbed, devices, tail):
            complete = False
    if rows_seen != set(devices):
        complete = False  # an excerpt: rows were cut
    return TopoMatrix(
        gpus=gpus,
        nics=nics,
        nic_names=nic_names,
        links=_both_orders(cells_read.links),
        cpu_affinity=cells_read.cpu_affinity,
        numa_affinity=cells_read.numa_affinity,
        gpu_numa_id=cells_read.gpu_numa_id,
        has_legend=has_legend,
        complete=complete,
    )


def _read_row(
    read: _Cells,
    label: str,
    values: list[str],
    tabbed: bool,
    devices: list[str],
    tail: list[str],
) -> bool:
    """Fill one row's cells; False when some cell was missing or unreadable."""
    complete = True
    if tabbed:
        device_cells, tail_cells = values[: len(devices)], values[len(devices) :]
    else:
        # Empty cells vanish between spaces: the affinity cells are the run of affinity-looking cells at the
        # end, the device cells what comes before (merged cells of a damaged paste included).
        split = len(values)
        while split > 0 and _tail_like(values[split - 1]):
            split -= 1
        device_cells, tail_cells = values[:split], values[split:]
    if len(device_cells) != len(devices):
        complete = False
    for column, value in zip(devices, device_cells):
        if value == "X" or (value == "" and column == label):
            continue
        if not _LINK.fullmatch(value):
            complete = False
            if not tabbed:
                break  # in a space-aligned paste the cells after a merged one belong to other columns
            continue
        if column != label:
            read.links[(label, column)] = value
    gpu = _GPU_LABEL.fullmatch(label)
    if gpu is None or not tail:
        return complete
    index = int(gpu.group(1))
    affinity = _read_affinity(tail, tail_cells, tabbed)
    if not affinity:
        return False
    cpu, numa, gpu_numa = (affinity.get(column) for column in TAIL_COLUMNS)
    if cpu == "" or (cpu is None and complete and "CPU Affinity" in tail):
        read.cpu_affinity[index] = ""  # printed empty (a cgroup-limited job, some Windows drivers)
    elif cpu is not None and cpu != "N/A":
        read.cpu_affinity[index] = cpu
    if numa is not None and numa.isdecimal():
        read.numa_affinity[index] = int(numa)
    if gpu_numa is not None and gpu_numa.isdecimal():
        read.gpu_numa_id[index] = int(gpu_numa)
    return complete


def _tail_like(value: str) -> bool:
    return value == "N/A" or bool(_CPU_LIST.fullmatch(value))


def _fits(column: str, value: str) -> bool:
    if value == "N/A":
        return True
    if column == "CPU Affinity":
        return bool(_CPU_LIST.fullmatch(value))
    return bool(_NUMBER.fullmatch(value))


def _read_affinity(tail: list[str], cells: list[str], tabbed: bool) -> dict[str, str]:
    """A GPU row's affinity cells by column name, as printed ("N/A" included; "" where a tab-separated row
    printed a cell empty); ``{}`` when the row has none."""
    if tabbed and "GPU NUMA ID" in tail and len(cells) == len(tail) + 1 and cells[-2] == "":
        cells = cells[:-2] + cells[-1:]  # nvidia-smi writes two tabs before "GPU NUMA ID"
    if tabbed and len(cells) == len(tail) and all(_fits(c, v) for c, v in zip(tail, cells) if v):
        return dict(zip(tail, cells))
    # Match from the right: "GPU NUMA ID" and "NUMA Affinity" are printed even when the CPU list is empty,
    # and a value that does not fit its column means that column was printed empty.
    by_column: dict[str, str] = {}
    values = [value for value in cells if value]
    for column in reversed(tail):
        if values and _fits(column, values[-1]):
            by_column[column] = values.pop()
    return by_column


# --------------------------------------------------------------------------- topo -p2p


_P2P_COMMAND = re.compile(r"(?:-p2p|--p2pstatus)\s+([rwnap])\b")
_P2P_HEADING = {"read": "r", "write": "w", "nvlink": "n", "atomic": "a", "prop": "p"}


def parse_topo_p2p(text: object) -> P2PMatrix | None:
    """The ``nvidia-smi topo -p2p <r|w|n|a|p>`` status matrix; ``error`` set when nvidia-smi printed one
    instead; None when the text holds neither."""
    if not isinstance(text, str):
        return None
    try:
        return _parse_p2p(text)
    except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
        return None


def _parse_p2p(text: str) -> P2PMatrix | None:
    lines = text.splitlines()
    found = _header(lines)
    if found is None:
        error = _error_line(lines)
        return P2PMatrix(error=error) if error else None
    header_at, columns = found
    gpus = [int(m.group(1)) for m in (_GPU_LABEL.fullmatch(name) for name in columns) if m]
    cells: dict[tuple[int, int], str] = {}
    for line in lines[header_at + 1 : header_at + 1 + MAX_LINES]:
        if line.strip().lower().startswith("legend"):
            break
        values = _cells(line)[0]
        values = values[1:] if values and values[0] == "" else values
        label = _GPU_LABEL.fullmatch(values[0]) if values else None
        if label is None or int(label.group(1)) not in gpus:
            continue
        row = int(label.group(1))
        for column, value in zip(gpus, values[1:]):
            if column != row and value in P2P_STATUSES:
                cells[(row, column)] = value
    return P2PMatrix(capability=_capability(lines[: header_at + 1]), gpus=gpus, status=_both_orders(cells))


def _capability(lines: list[str]) -> str | None:
    """The capability asked for, from the command line or a heading printed above the matrix."""
    for line in reversed(lines):
        command = _P2P_COMMAND.search(line)
        if command:
            return command.group(1)
        lowered = line.lower()
        if "p2p" in lowered and "status" in lowered:
            word = next((letter for word, letter in _P2P_HEADING.items() if word in lowered), None)
            if word:
                return word
    return None
