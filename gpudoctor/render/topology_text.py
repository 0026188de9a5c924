"""The machine's topology for a person at a terminal (``gpudoctor topo``).

First a GPU×GPU matrix in the words of ``nvidia-smi topo -m`` (with NIC columns, CPU affinity and NUMA
node), then what the matrix cannot show: one entry per GPU (PCIe link now and at best, NVLinks up and
down), the NICs, NVSwitches and fabric manager, and the GPU pairs that cannot read each other's memory.

Like the report renderer (``terminal.py``) the text is first laid out as lines of (text, style) spans:
the plain mode joins the text, the colour mode hands the same spans to rich, so both always show the
same thing.  The small helpers (which GPUs and NICs there are, what kind a path is, how a link reads)
live in ``topology_text_shared``, shared with the SVG renderer so the two never disagree; they are
re-exported here, where the SVG modules have always imported them from.  AMD GPUs and their XGMI links come
last, from ``topology_text_xgmi`` (alone on a machine with AMD GPUs only).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpudoctor.facts.predicates import narrow_lanes, pcie_slow
from gpudoctor.facts.topology_model import PATH_MEANING, MachineTopology
from gpudoctor.render.topology_text_shared import (
    NO_TOPOLOGY,
    clean,
    form_factor_label,
    gpu_indices,
    natural_key,
    nic_labels,
    nvlink_text,
    or_unknown,
    path_kind,
    pcie_text,
)
from gpudoctor.render.topology_text_xgmi import xgmi_lines

__all__ = [
    "NO_TOPOLOGY",
    "clean",
    "form_factor_label",
    "gpu_indices",
    "layout",
    "nic_labels",
    "nvlink_text",
    "path_kind",
    "pcie_text",
    "render_topology_text",
]

Span = tuple[str, str]  # (text, rich style; "" for none)
Line = list[Span]

# Nearest first, as nvidia-smi's legend; "NV#" stands for every NV<count>.
KIND_ORDER = ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC")
KIND_STYLES = {
    "NV#": "green",
    "PIX": "cyan",
    "PXB": "cyan",
    "PHB": "yellow",
    "NODE": "yellow",
    "SYS": "red",
    "SOC": "red",
    "X": "dim",
    "?": "dim",
}
# What ``nvidia-smi topo -p2p`` statuses mean (the P2PMatrix docstring).
P2P_MEANING = {
    "OK": "supported",
    "CNS": "chipset not supported",
    "GNS": "GPU not supported",
    "TNS": "topology not supported",
    "NS": "not supported",
    "U": "unknown",
    "DI": "disabled by driver",
}
WARN = "bold yellow"
BAD = "bold red"
SEP = "  "
MIN_WIDTH = 40


# ---------------------------------------------------------------- rendering


def _affinity_cell(cpus: str | None) -> str:
    # nvidia-smi prints the cell empty when none of the caller's CPUs (a Slurm or container cgroup) is near
    # the GPU; "?" is for not knowing at all.
    if cpus == "":
        return "none"
    return clean(cpus) or "?"


def render_topology_text(topo: MachineTopology, color: bool = False, width: int = 100) -> str:
    """The topology as terminal text at most ``width`` columns wide; ANSI colour through rich when ``color``."""
    width = max(int(width), MIN_WIDTH)
    lines: list[Line] = []
    for line in layout(topo, width):
        lines += _wrap(line, width)
    if not color:
        return "".join("".join(text for text, _ in line).rstrip() + "\n" for line in lines)
    from gpudoctor.render.terminal import render_spans_with_rich  # rich only on the colour path

    return render_spans_with_rich(lines, width)


def layout(topo: MachineTopology, width: int) -> list[Line]:
    """Every line as styled spans (shared by the plain and colour modes); lines may still need wrapping."""
    gpus = gpu_indices(topo)
    amd = xgmi_lines(topo, width)  # AMD GPUs and their XGMI links (empty on a machine without them)
    if not gpus:
        return amd + _sources(topo) if amd else [[(NO_TOPOLOGY, "")]]
    nics = nic_labels(topo)
    head = f"GPU topology: {_plural(len(gpus), 'GPU')}" + (f", {_plural(len(nics), 'NIC')}" if nics else "")
    lines: list[Line] = [[(head, "bold")], []]
    lines += _matrix(topo, gpus, nics, width)
    lines += _legend(topo, gpus, nics)
    lines += _gpu_lines(topo, gpus)
    lines += _nic_lines(topo, nics)
    lines += _machine_lines(topo, gpus)
    lines += _p2p_lines(topo)
    lines += [[]] + amd if amd else []
    return lines + _sources(topo)


def _sources(topo: MachineTopology) -> list[Line]:
    if not topo.sources:
        return []
    return [[], [("Sources: ", "dim"), (", ".join(clean(s) for s in topo.sources), "dim")]]


# ---------------------------------------------------------------- the matrix


class _Column:
    def __init__(self, header: str, cells: list[str], styles: list[str]):
        self.header, self.cells, self.styles = header, cells, styles
        self.width = max([len(header)] + [len(cell) for cell in cells])


def _matrix(topo: MachineTopology, gpus: list[int], nics: list[str], width: int) -> list[Line]:
    labels = [f"GPU{index}" for index in gpus]
    label_width = max(len(label) for label in labels)
    # No cell may be so wide that one column cannot fit beside the row labels.
    longest = max(4, min(24, width - label_width - len(SEP)))

    def path_column(header: str, cells: list[str]) -> _Column:
        cells = [_cut(clean(cell) or "?", longest) for cell in cells]
        return _Column(header, cells, [KIND_STYLES.get(path_kind(cell) or cell, "") for cell in cells])

    gpu_columns = [path_column(f"GPU{b}", ["X" if a == b else _pair_path(topo, a, b) for a in gpus]) for b in gpus]
    nic_columns = [
        path_column(_cut(clean(nic), longest), [topo.nics_links.get((a, nic)) or "?" for a in gpus]) for nic in nics
    ]
    by_index = {gpu.index: gpu for gpu in topo.gpus}
    affinity = [_cut(_affinity_cell(getattr(by_index.get(a), "cpu_affinity", None)), longest) for a in gpus]
    numa = [_cut(clean(or_unknown(getattr(by_index.get(a), "numa_node", None))), longest) for a in gpus]
    info_columns = [_Column("CPU Affinity", affinity, [""] * len(gpus)), _Column("NUMA", numa, [""] * len(gpus))]

    def fits(columns: list[_Column]) -> bool:
        return label_width + sum(len(SEP) + column.width for column in columns) <= width

    # nvidia-smi's order when it fits; otherwise the GPUs with their CPUs first and the NICs in blocks after.
    if fits(gpu_columns + nic_columns + info_columns):
        blocks = [gpu_columns + nic_columns + info_columns]
    else:
        blocks = _pack(gpu_columns + info_columns, fits) + _pack(nic_columns, fits)
    lines: list[Line] = []
    for number, block in enumerate(blocks):
        if number:
            lines.append([])
        lines.append([(" " * label_width, "")] + [(SEP + c.header.ljust(c.width), "bold") for c in block])
        for row, label in enumerate(labels):
            line: Line = [(label.ljust(label_width), "bold")]
            for column in block:
                line += [
                    (SEP, ""),
                    (column.cells[row], column.styles[row]),
                    (" " * (column.width - len(column.cells[row])), ""),
                ]
            lines.append(line)
    return lines


def _pack(columns: list[_Column], fits: Callable[[list[_Column]], bool]) -> list[list[_Column]]:
    """As few blocks as fit, as even as they can be (10 NICs in two blocks: 5 + 5, not 9 + 1)."""
    greedy: list[list[_Column]] = []
    for column in columns:
        if greedy and fits(greedy[-1] + [column]):
            greedy[-1].append(column)
        else:
            greedy.append([column])
    size = -(-len(columns) // max(len(greedy), 1))
    even = [columns[start : start + size] for start in range(0, len(columns), size)] if columns else []
    return even if len(even) == len(greedy) and all(fits(block) for block in even) else greedy


def _pair_path(topo: MachineTopology, a: int, b: int) -> str:
    pair = topo.pair(a, b)
    return pair.path if pair is not None and pair.path else "?"


def _legend(topo: MachineTopology, gpus: list[int], nics: list[str]) -> list[Line]:
    cells = [_pair_path(topo, a, b) for a in gpus for b in gpus if a < b]
    cells += [topo.nics_links.get((a, nic)) or "?" for a in gpus for nic in nics]
    present = {path_kind(cell) for cell in cells}
    rows = [(kind, PATH_MEANING["NV" if kind == "NV#" else kind]) for kind in KIND_ORDER if kind in present]
    if "?" in cells:
        rows.append(("?", "not known"))
    if not rows:
        return []
    lines: list[Line] = [[], [("Legend:", "bold")]]
    for kind, meaning in rows:
        lines.append([("  ", ""), (kind.ljust(4), KIND_STYLES[kind]), (f" = {meaning}", "")])
    return lines


# ---------------------------------------------------------------- what the matrix cannot show


def _gpu_lines(topo: MachineTopology, gpus: list[int]) -> list[Line]:
    by_index = {gpu.index: gpu for gpu in topo.gpus}
    label_width = max(len(f"GPU{index}") for index in gpus)
    lines: list[Line] = [[], [("GPUs:", "bold")]]
    for index in gpus:
        gpu = by_index.get(index)
        label = f"GPU{index}".ljust(label_width)
        if gpu is None:
            lines.append([("  ", ""), (label, "bold"), ("  (only named by a path; nothing else known)", "dim")])
            continue
        name = clean(gpu.name) or "unknown GPU"
        if gpu.form_factor:
            name += f" ({form_factor_label(gpu.form_factor)})"
        first: Line = [("  ", ""), (label, "bold"), ("  " + name, "")]
        if gpu.bus_id:
            first.append(("  " + clean(gpu.bus_id), ""))
        where = []
        if gpu.numa_node is not None:
            where.append(f"NUMA {clean(gpu.numa_node)}")
        if gpu.cpu_affinity:
            where.append(f"CPUs {clean(gpu.cpu_affinity)}")
        elif gpu.cpu_affinity == "":
            where.append("no CPU of this job near it")
        if where:
            first.append(("  " + ", ".join(where), ""))
        lines.append(first)

        second: Line = [("  " + " " * label_width, "")]
        pcie = pcie_text(gpu.pcie)
        second.append(("  PCIe " + (pcie or "unknown"), "" if pcie else "dim"))
        lanes = narrow_lanes(gpu.pcie)
        if lanes is not None:
            second.append((f"  ! only x{lanes[0]} of x{lanes[1]} lanes", BAD))
        elif pcie_slow(gpu.pcie):
            second.append(("  ~ below its best generation (normal while idle)", "dim"))
        replays = _count(getattr(gpu.pcie, "replay_count", None))
        if replays is not None and replays > 0:
            second.append((f"  ! {replays} PCIe replays", WARN))
        nvlink = nvlink_text(gpu.nvlink)
        if nvlink is not None:
            second.append(("  NVLink " + nvlink, BAD if gpu.nvlink is not None and gpu.nvlink.down else ""))
        lines.append(second)
    return lines


def _nic_lines(topo: MachineTopology, nics: list[str]) -> list[Line]:
    if not nics:
        return []
    by_label = {nic.label: nic for nic in topo.nics}
    label_width = max(len(clean(label)) for label in nics)
    name_width = max(
        [
            len(clean(getattr(by_label.get(label), "name", None)))
            for label in nics
            if clean(getattr(by_label.get(label), "name", None)) != clean(label)
        ]
        + [0]
    )
    lines: list[Line] = [[], [("NICs:", "bold")]]
    for label in nics:
        nic = by_label.get(label)
        name = clean(nic.name) if nic is not None else ""
        name = "" if name == clean(label) else name  # old drivers label the columns by name already
        near = sorted(nic.nearest_gpus) if nic is not None else []
        line: Line = [("  ", ""), (clean(label).ljust(label_width), "bold"), ("  " + name.ljust(name_width), "")]
        line.append(
            ("  near " + ", ".join(f"GPU{g}" for g in near) if near else "  near no GPU", "" if near else "dim")
        )
        lines.append(line)
    return lines


def _machine_lines(topo: MachineTopology, gpus: list[int]) -> list[Line]:
    lines: list[Line] = []
    if topo.nvswitches:
        lines.append([("NVSwitches: ", "bold"), (str(topo.nvswitches), "")])
    if topo.fabric_manager is not None:
        state = clean(topo.fabric_manager)
        lines.append([("Fabric manager: ", "bold"), (state, "green" if state == "active" else WARN)])
    if topo.fabric_states:
        states = {clean(state) for state in topo.fabric_states.values()}
        if len(states) == 1 and len(topo.fabric_states) == len(gpus):
            text = f"{states.pop()} on all {_plural(len(gpus), 'GPU')}"
        else:
            text = ", ".join(
                f"GPU{gpu} {clean(state)}"
                for gpu, state in sorted(topo.fabric_states.items(), key=lambda kv: natural_key(str(kv[0])))
            )
        lines.append([("GPU fabric state: ", "bold"), (text, "")])
    if topo.numa_nodes:
        nodes = "; ".join(
            f"{clean(node)}: CPUs {clean(cpus) or '?'}"
            for node, cpus in sorted(topo.numa_nodes.items(), key=lambda kv: natural_key(str(kv[0])))
        )
        lines.append([("NUMA nodes: ", "bold"), (nodes, "")])
    if topo.process_cpus:
        lines.append([("This process may run on CPUs: ", "bold"), (clean(topo.process_cpus), "")])
    return [[]] + lines if lines else []


def _p2p_lines(topo: MachineTopology) -> list[Line]:
    failing: dict[str, list[str]] = {}
    for pair in sorted(topo.pairs, key=lambda p: (str(p.a), str(p.b))):
        status = clean(pair.p2p_read).upper()
        if status and status != "OK":
            failing.setdefault(status, []).append(f"GPU{pair.a}-GPU{pair.b}")
    if not failing:
        return []
    lines: list[Line] = [[], [("P2P read not OK:", "bold")]]
    for status in sorted(failing):
        meaning = P2P_MEANING.get(status, "not OK")
        lines.append([("  ", ""), (status, WARN), (f" ({meaning}): " + ", ".join(failing[status]), "")])
    return lines


# ---------------------------------------------------------------- small things


def _wrap(line: Line, width: int) -> list[Line]:
    """Break a too-long line at spaces, keeping each word's style; continuation lines indented."""
    if sum(len(text) for text, _ in line) <= width:
        return [line]
    first = "".join(text for text, _ in line)
    indent = " " * min(len(first) - len(first.lstrip(" ")) + 6, width // 2)
    out: list[Line] = []
    current: Line = []
    start = used = 0  # ``start``: where text begins on the current line (after the indent)

    def new_line() -> None:
        nonlocal current, start, used
        out.append(current)
        current, start, used = [(indent, "")], len(indent), len(indent)

    for text, style in line:
        for token in re.findall(r"\S+|\s+", text):
            if token.isspace():
                # keep the line's own indent; never start a continuation line with blanks
                if (used > start or not out) and used + len(token) <= width:
                    current.append((token, style))
                    used += len(token)
                continue
            if used > start and used + len(token) > width:
                new_line()
            while used + len(token) > width:  # a word longer than a whole line: hard break
                room = width - used
                current.append((token[:room], style))
                token = token[room:]
                new_line()
            current.append((token, style))
            used += len(token)
    out.append(current)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _count(value: object) -> int | None:
    """An integer count, or None for anything else (a model read back from JSON may hold anything)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")
