"""The machine's topology as a picture (``gpudoctor topo --svg FILE``): one self-contained SVG.

What a person should see at a glance: which CPU socket (NUMA node) each GPU hangs off, which GPUs and
NICs share a PCIe switch (a dashed box: they are pairwise PIX/PXB), which pairs talk over NVLink and
how many links (curves under the GPUs, "NV4"), or the NVSwitch bar every GPU plugs into, and what is
broken: NVLinks down and PCIe links narrower than they can be are drawn in a warning colour with a
tooltip (``<title>``) saying what is wrong.

Layout, left to right: one box per NUMA node (GPUs without a known node in a last "NUMA node unknown"
box), its CPU bar on top, its PCIe switch groups and lone GPUs below in GPU index order, each group's
NICs beside its GPUs.  Everything is placed by arithmetic on the sorted model, so the same model always
gives the same bytes.  No scripts, fonts or images are referenced; every piece of text is escaped.

Hooks for tests and people: each GPU element has ``data-gpu="N"``, each NIC ``data-nic="NIC0"``, each
link ``data-link`` ("0-1" for a GPU pair, "3-nvswitch", "3-sw1", "sw1-cpu0", "NIC2-sw1", "cpu0-cpu1")
and ``data-kind`` ("nvlink", "pcie", or "sys" for the CPU interconnect); the NVSwitch bar has
``data-switch="nvswitch"``, a PCIe switch box ``data-switch="sw1"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.topology import nvswitch_fabric
from gpudoctor.facts.topology_model import MachineTopology, TopoGpu, nvlink_count
from gpudoctor.render.topology_text import (
    NO_TOPOLOGY,
    clean,
    form_factor_label,
    gpu_indices,
    nic_labels,
    path_kind,
    pcie_narrow,
    pcie_text,
)

# Sizes in px.
MARGIN = 20
TITLE_H = 46
GPU_W, GPU_H = 150, 70
NIC_W, NIC_H = 74, 26
NIC_ROWS = 2  # NICs stack two high beside their GPUs
GAP = 16
BOX_PAD = 14
NUMA_GAP = 48
CPU_TOP, CPU_H = 30, 26  # the CPU bar, below the NUMA box's label
UNIT_TOP = CPU_TOP + CPU_H + 30  # room for the PCIe uplinks
SWITCH_HEAD = 22  # the PCIe switch box's label row
SWITCH_PAD = 10
ARC_MIN = 64  # the shallowest NVLink curve still clears the NUMA box under the GPUs
ARC_STEP = 22
CHAR_W = 6.4  # average glyph width at 11px, to shorten text that would overflow its box

COLORS = {
    "nvlink": "#2f9e44",
    "pcie": "#495057",
    "sys": "#7048e8",
    "warn": "#e8590c",
    "text": "#212529",
    "muted": "#6c757d",
}
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
NEAR = ("PIX", "PXB")


@dataclass
class _Unit:
    """What sits side by side under a CPU bar: a PCIe switch group (GPUs and NICs pairwise PIX/PXB), a lone
    GPU, or the NICs of the node near no GPU."""

    gpus: list[int]
    nics: list[str] = field(default_factory=list)
    switch: str | None = None  # "sw1" when drawn as a switch box
    x: float = 0.0

    @property
    def nic_columns(self) -> int:
        return -(-len(self.nics) // NIC_ROWS)

    @property
    def inner_width(self) -> float:
        gpus = len(self.gpus) * GPU_W + max(len(self.gpus) - 1, 0) * GAP
        nics = self.nic_columns * NIC_W + max(self.nic_columns - 1, 0) * 8
        return gpus + (GAP if gpus and nics else 0) + nics

    @property
    def width(self) -> float:
        return self.inner_width + (2 * SWITCH_PAD if self.switch else 0)


@dataclass
class _NumaBox:
    node: int | None
    cpus: str | None
    units: list[_Unit] = field(default_factory=list)
    x: float = 0.0

    @property
    def width(self) -> float:
        content = sum(unit.width for unit in self.units) + max(len(self.units) - 1, 0) * GAP
        return max(content + 2 * BOX_PAD, 220.0)


def render_topology_svg(topo: MachineTopology, title: str | None = None) -> str:
    """The topology as a standalone SVG document (a string; write it with UTF-8)."""
    return _Drawing(topo, title).svg()


class _Drawing:
    def __init__(self, topo: MachineTopology, title: str | None):
        self.topo = topo
        self.gpus = gpu_indices(topo)
        self.nics = nic_labels(topo)
        self.by_index: dict[int, TopoGpu] = {}
        for gpu in topo.gpus:
            self.by_index.setdefault(gpu.index, gpu)
        head = f"GPU topology: {len(self.gpus)} GPU" + ("" if len(self.gpus) == 1 else "s")
        if self.nics:
            head += f", {len(self.nics)} NIC" + ("" if len(self.nics) == 1 else "s")
        self.title = clean(title) if title is not None else head
        self.gpu_set = set(self.gpus)
        self.gpu_xy: dict[int, tuple[float, float]] = {}
        self.nic_xy: dict[str, tuple[float, float]] = {}

    # ------------------------------------------------------------ structure

    def _components(self) -> list[list[int]]:
        """GPUs behind one PCIe switch (PIX/PXB to each other or to one NIC), each sorted, by first GPU."""
        parent = {gpu: gpu for gpu in self.gpus}

        def root(gpu: int) -> int:
            while parent[gpu] != gpu:
                parent[gpu] = parent[parent[gpu]]
                gpu = parent[gpu]
            return gpu

        def join(a: int, b: int) -> None:
            low, high = sorted((root(a), root(b)))
            parent[high] = low

        for pair in self.topo.pairs:
            if pair.a in parent and pair.b in parent and path_kind(pair.path) in NEAR:
                join(pair.a, pair.b)
        # An NVLink pair's topo -m cell says NV#, hiding that the two may also share a PCIe switch; a NIC
        # both are PIX/PXB to gives it away (DGX-1: GPU2 and GPU3 are NV1 and both PIX to mlx5_0).
        for nic in self.nics:
            near = self._near_gpus(nic, NEAR)
            for gpu in near[1:]:
                join(near[0], gpu)
        groups: dict[int, list[int]] = {}
        for gpu in self.gpus:
            groups.setdefault(root(gpu), []).append(gpu)
        return sorted(groups.values(), key=lambda group: group[0])

    def _numa(self, gpu: int) -> int | None:
        node = getattr(self.by_index.get(gpu), "numa_node", None)
        return node if isinstance(node, int) and not isinstance(node, bool) else None

    def _near_gpus(self, nic: str, kinds: tuple[str, ...]) -> list[int]:
        near = {
            gpu
            for (gpu, label), path in self.topo.nics_links.items()
            if label == nic and path_kind(path) in kinds and gpu in self.gpu_set
        }
        if kinds == NEAR:
            named = next((n for n in self.topo.nics if n.label == nic), None)
            near.update(g for g in (named.nearest_gpus if named else []) if g in self.gpu_set)
        return sorted(near)

    def _boxes(self) -> tuple[list[_NumaBox], list[str]]:
        self.gpu_set = set(self.gpus)
        units: list[_Unit] = [_Unit(list(group)) for group in self._components()]
        unit_of = {gpu: unit for unit in units for gpu in unit.gpus}
        loose: dict[int | None, list[str]] = {}
        unplaced: list[str] = []
        for nic in self.nics:
            near = self._near_gpus(nic, NEAR)
            if near:
                unit_of[near[0]].nics.append(nic)
                continue
            # Not behind a GPU's switch: on the socket of the GPUs it reaches without crossing sockets.
            local = [self._numa(g) for g in self._near_gpus(nic, ("PHB", "NODE"))]
            local = [node for node in local if node is not None]
            if local:
                loose.setdefault(min(local), []).append(nic)
            else:
                unplaced.append(nic)
        number = 0
        for unit in units:
            if len(unit.gpus) + len(unit.nics) > 1:
                number += 1
                unit.switch = f"sw{number}"
        # A unit sits in the NUMA node of its first GPU (a PIX pair across sockets would be a bad merge).
        nodes = {self._numa(unit.gpus[0]) for unit in units}
        nodes.update(node for node in self.topo.numa_nodes if isinstance(node, int) and not isinstance(node, bool))
        nodes.update(loose)
        ordered = sorted(node for node in nodes if node is not None) + ([None] if None in nodes else [])
        boxes = []
        for node in ordered:
            box = _NumaBox(node, self.topo.numa_nodes.get(node) if node is not None else None)
            box.units = [unit for unit in units if self._numa(unit.gpus[0]) == node]
            if loose.get(node):
                box.units.append(_Unit([], loose[node]))
            boxes.append(box)
        return boxes, unplaced

    # ------------------------------------------------------------ drawing

    def svg(self) -> str:
        if not self.gpus:
            return self._document(
                480, TITLE_H + 40, [_text(MARGIN, TITLE_H + 14, NO_TOPOLOGY, size=13, fill=COLORS["muted"])]
            )
        boxes, unplaced = self._boxes()
        x = MARGIN
        top = TITLE_H
        for box in boxes:
            box.x = x
            ux = x + BOX_PAD
            for unit in box.units:
                unit.x = ux
                ux += unit.width + GAP
            x += box.width + NUMA_GAP
        self.gpu_y = top + UNIT_TOP + SWITCH_HEAD
        box_bottom = self.gpu_y + GPU_H + SWITCH_PAD + BOX_PAD
        self._place(boxes)

        body: list[str] = []
        body += self._numa_boxes(boxes, top, box_bottom)
        body += self._sys_links(boxes, top)
        body += self._pcie_links(boxes, top)
        # One NVSwitch bar instead of n² curves when facts say the GPUs meet in a switch fabric.
        nvswitch = nvswitch_fabric(self.topo, self.gpu_set)
        depth = 0.0
        if nvswitch:
            bar_y = box_bottom + 56
            body += self._nvswitch(bar_y, nvswitch)
            depth = bar_y + 34 - box_bottom
        else:
            arcs, depth = self._nvlink_arcs(box_bottom)
            body += arcs
        body += [self._gpu(index) for index in self.gpus]
        body += [self._nic(label) for label in self.nics if label in self.nic_xy]
        bottom = box_bottom + max(depth, 0) + 16
        if unplaced:
            extra, bottom = self._unplaced(unplaced, bottom)
            body += extra
        legend, bottom, legend_right = self._legend(bottom + 8)
        body += legend
        width = max(x - NUMA_GAP + MARGIN, legend_right + MARGIN)
        return self._document(width, bottom + MARGIN, body)

    def _document(self, width: float, height: float, body: list[str]) -> str:
        sources = ", ".join(clean(s) for s in self.topo.sources)
        head = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
            f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="{FONT}" font-size="11" '
            f'fill="{COLORS["text"]}">',
            f"<title>{_esc(self.title)}</title>",
            f'<rect x="0" y="0" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>',
            _text(MARGIN, 26, self.title, size=15, weight="bold"),
        ]
        if sources:
            head.append(_text(MARGIN, 40, f"from {sources}", size=10, fill=COLORS["muted"]))
        return "\n".join(head + body + ["</svg>"]) + "\n"

    def _place(self, boxes: list[_NumaBox]) -> None:
        for box in boxes:
            for unit in box.units:
                x = unit.x + (SWITCH_PAD if unit.switch else 0)
                for gpu in unit.gpus:
                    self.gpu_xy[gpu] = (x, self.gpu_y)
                    x += GPU_W + GAP
                nic_x = x
                for j, nic in enumerate(unit.nics):
                    column, row = divmod(j, NIC_ROWS)
                    self.nic_xy[nic] = (nic_x + column * (NIC_W + 8), self.gpu_y + 4 + row * (NIC_H + 14))

    def _numa_boxes(self, boxes: list[_NumaBox], top: float, bottom: float) -> list[str]:
        out = []
        for box in boxes:
            label = f"NUMA node {box.node}" if box.node is not None else "NUMA node unknown"
            if box.cpus:
                cpus = f"CPUs {clean(box.cpus)}"
            else:
                cpus = "CPU" if box.node is not None else "CPU (socket unknown)"
            inner = box.width - 2 * BOX_PAD
            out.append(
                f'<g data-numa="{_esc(box.node if box.node is not None else "unknown")}">'
                f'<rect x="{_n(box.x)}" y="{_n(top)}" width="{_n(box.width)}" height="{_n(bottom - top)}" rx="8" '
                f'fill="#f8f9fa" stroke="#adb5bd"/>'
                + _text(box.x + BOX_PAD, top + 19, label, weight="bold", size=12)
                + f'<rect x="{_n(box.x + BOX_PAD)}" y="{_n(top + CPU_TOP)}" width="{_n(inner)}" height="{CPU_H}" '
                f'rx="4" fill="#e7f5ff" stroke="#74c0fc"><title>{_esc(label + ": " + cpus)}</title></rect>'
                + _text(box.x + box.width / 2, top + CPU_TOP + 17, _fit(cpus, inner - 10), anchor="middle")
                + "</g>"
            )
            for unit in box.units:
                if unit.switch:
                    ux, uy = unit.x, top + UNIT_TOP
                    members = ", ".join([f"GPU{g}" for g in unit.gpus] + [clean(n) for n in unit.nics])
                    out.append(
                        f'<g data-switch="{unit.switch}"><title>{_esc("PCIe switch (PIX/PXB): " + members)}</title>'
                        f'<rect x="{_n(ux)}" y="{_n(uy)}" width="{_n(unit.width)}" '
                        f'height="{_n(SWITCH_HEAD + GPU_H + SWITCH_PAD)}" rx="6" fill="none" stroke="#868e96" '
                        f'stroke-dasharray="5 3"/>'
                        + _text(ux + 8, uy + 15, "PCIe switch", size=10, fill=COLORS["muted"])
                        + "</g>"
                    )
        return out

    def _sys_links(self, boxes: list[_NumaBox], top: float) -> list[str]:
        known = [box for box in boxes if box.node is not None]
        out = []
        y = top + CPU_TOP + CPU_H / 2
        for left, right in zip(known, known[1:]):
            x1, x2 = left.x + left.width - BOX_PAD, right.x + BOX_PAD
            tip = (
                f"NUMA node {left.node} <-> NUMA node {right.node}: CPU interconnect (QPI/UPI/xGMI); SYS paths cross it"
            )
            out.append(
                f'<g data-link="cpu{left.node}-cpu{right.node}" data-kind="sys"><title>{_esc(tip)}</title>'
                f'<line x1="{_n(x1)}" y1="{_n(y)}" x2="{_n(x2)}" y2="{_n(y)}" stroke="{COLORS["sys"]}" '
                f'stroke-width="3" stroke-dasharray="2 3"/>'
                + _text((x1 + x2) / 2, y - 6, "SYS", size=10, fill=COLORS["sys"], anchor="middle")
                + "</g>"
            )
        return out

    def _pcie_links(self, boxes: list[_NumaBox], top: float) -> list[str]:
        out = []
        cpu_bottom = top + CPU_TOP + CPU_H
        unit_top = top + UNIT_TOP
        for box in boxes:
            cpu = f"cpu{box.node}" if box.node is not None else "cpu"
            for unit in box.units:
                if unit.switch:
                    mid = unit.x + unit.width / 2
                    out.append(
                        _link(
                            f"{unit.switch}-{cpu}",
                            "pcie",
                            mid,
                            cpu_bottom,
                            mid,
                            unit_top,
                            COLORS["pcie"],
                            2.5,
                            f"PCIe switch {unit.switch} to the CPU",
                        )
                    )
                upper = unit_top if unit.switch else cpu_bottom
                for gpu in unit.gpus:
                    gx, gy = self.gpu_xy[gpu]
                    out.append(self._gpu_uplink(gpu, f"{gpu}-{unit.switch or cpu}", gx + GPU_W / 2, upper, gy))
                for nic in unit.nics:
                    nx, ny = self.nic_xy[nic]
                    label = clean(nic)
                    out.append(
                        _link(
                            f"{label}-{unit.switch or cpu}",
                            "pcie",
                            nx + NIC_W / 2,
                            upper,
                            nx + NIC_W / 2,
                            ny,
                            COLORS["pcie"],
                            1.5,
                            f"{label} PCIe",
                        )
                    )
        return out

    def _gpu_uplink(self, gpu: int, link_id: str, x: float, y1: float, y2: float) -> str:
        info = self.by_index.get(gpu)
        pcie = getattr(info, "pcie", None)
        text = pcie_text(pcie)
        tip = f"GPU{gpu} PCIe " + (text or "link unknown")
        if pcie_narrow(pcie):
            tip += (
                f": running on x{pcie.width_current} of x{pcie.width_max} lanes (reseat the card, check the riser/slot)"
            )
            return _link(link_id, "pcie", x, y1, x, y2, COLORS["warn"], 3, tip, dashed=True, warn=True)
        return _link(link_id, "pcie", x, y1, x, y2, COLORS["pcie"], 2, tip)

    def _pair_paths(self) -> dict[tuple[int, int], str]:
        paths = {}
        for pair in self.topo.pairs:
            if pair.a in self.gpu_set and pair.b in self.gpu_set and pair.a != pair.b and pair.path:
                paths.setdefault((min(pair.a, pair.b), max(pair.a, pair.b)), pair.path)
        return paths

    def _down(self, gpu: int) -> list[tuple[int, str | None]]:
        """The GPU's down NVLinks as (link, normalised remote bus id or None)."""
        state = getattr(self.by_index.get(gpu), "nvlink", None)
        if state is None:
            return []
        return [(port.link, normalize_bus_id(port.remote_bus_id)) for port in state.ports if port.active is False]

    def _bus(self, gpu: int) -> str | None:
        return normalize_bus_id(getattr(self.by_index.get(gpu), "bus_id", None))

    def _pair_warning(self, a: int, b: int) -> str | None:
        notes = []
        for me, peer in ((a, b), (b, a)):
            down = self._down(me)
            to_peer = [link for link, remote in down if remote is not None and remote == self._bus(peer)]
            unknown = [link for link, remote in down if remote is None]
            if to_peer:
                notes.append(f"GPU{me} links {_list(to_peer)} to GPU{peer} are down")
            if unknown:
                notes.append(f"GPU{me} links {_list(unknown)} are down (peer not reported)")
        return "; ".join(notes) or None

    def _nvlink_arcs(self, box_bottom: float) -> tuple[list[str], float]:
        edges = sorted((a, b, path) for (a, b), path in self._pair_paths().items() if nvlink_count(path))
        if not edges:
            return [], 0.0
        order = {gpu: n for n, gpu in enumerate(sorted(self.gpu_xy, key=lambda g: (self.gpu_xy[g][0], g)))}
        # Spread each GPU's curves over its bottom edge, leftmost peer leftmost, so they do not all meet in one point.
        peers: dict[int, list[int]] = {}
        for a, b, _ in edges:
            peers.setdefault(a, []).append(b)
            peers.setdefault(b, []).append(a)
        for gpu in peers:
            peers[gpu].sort(key=lambda p: order[p])

        def anchor(gpu: int, peer: int) -> float:
            slot = peers[gpu].index(peer)
            return self.gpu_xy[gpu][0] + GPU_W * (slot + 1) / (len(peers[gpu]) + 1)

        out = []
        deepest = 0.0
        y0 = self.gpu_y + GPU_H
        for a, b, path in edges:
            count = nvlink_count(path) or 0
            distance = abs(order[a] - order[b])
            depth = ARC_MIN + ARC_STEP * (distance - 1)
            x1, x2 = anchor(a, b), anchor(b, a)
            apex = y0 + depth * 0.75
            deepest = max(deepest, apex + 10 - box_bottom)
            warning = self._pair_warning(a, b)
            tip = f"GPU{a} <-> GPU{b}: {clean(path)} ({count} NVLink{'s' if count != 1 else ''})"
            color = COLORS["warn"] if warning else COLORS["nvlink"]
            if warning:
                tip += "; " + warning
            stroke = 1.5 + min(count, 6) / 2.5  # NV1 < NV2 < NV4 visibly, NV6 and up alike
            dash = ' stroke-dasharray="7 4"' if warning else ""
            mark = ' data-warning="nvlink-down"' if warning else ""
            label = clean(path)
            label_w = len(label) * 7 + 8
            mx = (x1 + x2) / 2
            out.append(
                f'<g data-link="{a}-{b}" data-kind="nvlink"{mark}><title>{_esc(tip)}</title>'
                f'<path d="M {_n(x1)} {_n(y0)} C {_n(x1)} {_n(y0 + depth)}, {_n(x2)} {_n(y0 + depth)}, '
                f'{_n(x2)} {_n(y0)}" fill="none" stroke="{color}" stroke-width="{_n(stroke)}"{dash}/>'
                f'<rect x="{_n(mx - label_w / 2)}" y="{_n(apex - 8)}" width="{_n(label_w)}" height="15" rx="3" '
                f'fill="#ffffff" stroke="{color}"/>'
                + _text(mx, apex + 3.5, label, size=10, anchor="middle", fill=color, weight="bold")
                + "</g>"
            )
        return out, deepest

    def _nvswitch(self, bar_y: float, fabric: str) -> list[str]:
        xs = [self.gpu_xy[g][0] for g in self.gpus]
        left, right = min(xs), max(xs) + GPU_W
        count = self.topo.nvswitches if isinstance(self.topo.nvswitches, int) else 0
        label = (
            f"NVSwitch × {count}"
            if fabric == "present"
            else "NVSwitch (inferred: more NVLinks per GPU than direct links allow)"
        )
        if self.topo.fabric_manager:
            label += f" · fabric manager: {clean(self.topo.fabric_manager)}"
        out = []
        paths = self._pair_paths()
        y0 = self.gpu_y + GPU_H
        for gpu in self.gpus:
            if not any(gpu in pair for pair in paths):
                continue  # no path known for this GPU: do not draw a link nobody reported
            x = self.gpu_xy[gpu][0] + GPU_W / 2
            state = getattr(self.by_index.get(gpu), "nvlink", None)
            shared = {nvlink_count(path) for (a, b), path in paths.items() if gpu in (a, b)}
            count_text = f"NV{shared.pop()}" if len(shared) == 1 else "NV"
            down = self._down(gpu)
            tip = f"GPU{gpu} to the NVSwitches: {count_text}"
            if state is not None and state.total:
                tip += f", {state.active}/{state.total} links active"
            if down:
                tip += f"; links {_list([link for link, _ in down])} are down"
            color = COLORS["warn"] if down else COLORS["nvlink"]
            mark = ' data-warning="nvlink-down"' if down else ""
            dash = ' stroke-dasharray="7 4"' if down else ""
            out.append(
                f'<g data-link="{gpu}-nvswitch" data-kind="nvlink"{mark}><title>{_esc(tip)}</title>'
                f'<line x1="{_n(x)}" y1="{_n(y0)}" x2="{_n(x)}" y2="{_n(bar_y)}" stroke="{color}" '
                f'stroke-width="4"{dash}/>'
                + _text(x + 5, bar_y - 8, count_text, size=10, fill=color, weight="bold")
                + "</g>"
            )
        out.append(
            f'<g data-switch="nvswitch"><title>{_esc(label)}</title>'
            f'<rect x="{_n(left)}" y="{_n(bar_y)}" width="{_n(right - left)}" '
            f'height="28" rx="5" fill="#d3f9d8" stroke="{COLORS["nvlink"]}" stroke-width="2"/>'
            + _text((left + right) / 2, bar_y + 18, _fit(label, right - left - 10), anchor="middle", weight="bold")
            + "</g>"
        )
        return out

    def _gpu(self, index: int) -> str:
        x, y = self.gpu_xy[index]
        gpu = self.by_index.get(index)
        name = clean(getattr(gpu, "name", None)) or "unknown GPU"
        short = name[7:] if name.startswith("NVIDIA ") and len(name) > 7 else name
        bus = clean(getattr(gpu, "bus_id", None)) or "bus id unknown"
        pcie = getattr(gpu, "pcie", None)
        link = pcie_text(pcie)
        problems = []
        if pcie_narrow(pcie):
            problems.append(f"PCIe x{pcie.width_current} of x{pcie.width_max} lanes")
        down = self._down(index)
        if down:
            problems.append(f"NVLinks {_list([link_no for link_no, _ in down])} down")
        tip = [f"GPU{index}: {name}", bus]
        form = form_factor_label(getattr(gpu, "form_factor", None))
        if form:
            tip.append(form)
        if link:
            tip.append("PCIe " + link)
        state = getattr(gpu, "nvlink", None)
        if state is not None:
            tip.append(f"NVLink {state.active}/{state.total} active")
        cpus = clean(getattr(gpu, "cpu_affinity", None))
        if cpus:
            tip.append(f"CPUs {cpus}")
        if problems:
            tip.append("PROBLEM: " + "; ".join(problems))
        stroke = COLORS["warn"] if problems else "#343a40"
        mark = ' data-warning="degraded"' if problems else ""
        short_link = pcie_text(pcie).split(" (")[0] if link else "PCIe ?"
        if link and pcie_narrow(pcie):
            short_link += f" of x{pcie.width_max} !"
        return (
            f'<g data-gpu="{index}"{mark}><title>{_esc(" | ".join(tip))}</title>'
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{GPU_W}" height="{GPU_H}" rx="5" fill="#ffffff" '
            f'stroke="{stroke}" stroke-width="{2.5 if problems else 1.5}"/>'
            + _text(x + 8, y + 16, f"GPU{index}", weight="bold", size=12)
            + _text(x + 8, y + 31, _fit(short, GPU_W - 14))
            + _text(x + 8, y + 46, _fit(bus, GPU_W - 14), family=MONO, size=10, fill=COLORS["muted"])
            + _text(
                x + 8,
                y + 61,
                _fit(("PCIe " + short_link) if link else "PCIe unknown", GPU_W - 14),
                size=10,
                fill=COLORS["warn"] if pcie_narrow(pcie) else COLORS["muted"],
            )
            + "</g>"
        )

    def _nic(self, label: str) -> str:
        x, y = self.nic_xy[label]
        nic = next((n for n in self.topo.nics if n.label == label), None)
        shown = clean(label)
        name = clean(getattr(nic, "name", None))
        name = "" if name == shown else name  # old drivers label the columns by name already
        tip = shown + (f" ({name})" if name else "")
        near = self._near_gpus(label, NEAR)
        if near:
            tip += ": near " + ", ".join(f"GPU{g}" for g in near)
        return (
            f'<g data-nic="{_esc(shown)}"><title>{_esc(tip)}</title>'
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{NIC_W}" height="{NIC_H}" rx="4" fill="#fff4e6" '
            f'stroke="#f08c00"/>'
            + _text(
                x + NIC_W / 2, y + (11 if name else 17), _fit(shown, NIC_W - 6), size=9, weight="bold", anchor="middle"
            )
            + _text(x + NIC_W / 2, y + 22, _fit(name, NIC_W - 6), size=9, anchor="middle", family=MONO)
            + "</g>"
        )

    def _unplaced(self, nics: list[str], top: float) -> tuple[list[str], float]:
        width = len(nics) * (NIC_W + 8) - 8 + 2 * BOX_PAD
        out = [
            f'<rect x="{MARGIN}" y="{_n(top)}" width="{_n(width)}" height="{_n(NIC_H + 40)}" rx="8" '
            f'fill="#f8f9fa" stroke="#adb5bd"/>',
            _text(MARGIN + BOX_PAD, top + 18, "NICs near no GPU's socket (or socket unknown)", weight="bold"),
        ]
        for n, label in enumerate(nics):
            self.nic_xy[label] = (MARGIN + BOX_PAD + n * (NIC_W + 8), top + 28)
            out.append(self._nic(label))
        return out, top + NIC_H + 40 + 8

    def _legend(self, top: float) -> tuple[list[str], float, float]:
        """The legend's parts, its bottom and its right edge."""
        items = [
            ("NVLink (NV# = links bonded)", COLORS["nvlink"], ""),
            ("PCIe", COLORS["pcie"], ""),
            ("CPU interconnect (SYS)", COLORS["sys"], "2 3"),
            ("down / degraded (hover for why)", COLORS["warn"], "7 4"),
        ]
        out = ['<g data-legend="1">']
        x = MARGIN
        for text, color, dash in items:
            dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(
                f'<line x1="{_n(x)}" y1="{_n(top + 8)}" x2="{_n(x + 26)}" y2="{_n(top + 8)}" stroke="{color}" '
                f'stroke-width="3"{dash_attr}/>' + _text(x + 32, top + 12, text, size=10)
            )
            x += 32 + len(text) * 6 + 24
        note = "Dashed boxes: PCIe switches (GPUs and NICs on PIX/PXB paths to each other). Hover for details."
        out.append(_text(MARGIN, top + 28, note, size=10, fill=COLORS["muted"]))
        out.append("</g>")
        return out, top + 34, max(x, MARGIN + len(note) * 6)


# ---------------------------------------------------------------- small things


def _link(
    link_id: str,
    kind: str,
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    color: str,
    width: float,
    tip: str,
    dashed: bool = False,
    warn: bool = False,
) -> str:
    dash = ' stroke-dasharray="6 3"' if dashed else ""
    mark = ' data-warning="degraded"' if warn else ""
    return (
        f'<g data-link="{_esc(link_id)}" data-kind="{kind}"{mark}><title>{_esc(tip)}</title>'
        f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{color}" '
        f'stroke-width="{_n(width)}"{dash}/></g>'
    )


def _text(
    x: float,
    y: float,
    text: object,
    *,
    size: float = 11,
    weight: str | None = None,
    fill: str | None = None,
    anchor: str | None = None,
    family: str | None = None,
) -> str:
    attrs = f'x="{_n(x)}" y="{_n(y)}"'
    if size != 11:
        attrs += f' font-size="{_n(size)}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if fill:
        attrs += f' fill="{fill}"'
    if anchor:
        attrs += f' text-anchor="{anchor}"'
    if family:
        attrs += f' font-family="{family}"'
    return f"<text {attrs}>{_esc(text)}</text>"


def _esc(text: object) -> str:
    """Text and attribute values: no control characters (XML 1.0 forbids most), markup characters escaped."""
    return escape(clean(text), {'"': "&quot;", "'": "&apos;"})


def _fit(text: object, width: float) -> str:
    text = clean(text)
    limit = max(int(width / CHAR_W), 2)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _list(links: list[int]) -> str:
    return ", ".join(str(link) for link in links)


def _n(value: float) -> str:
    """Coordinates with at most one decimal, and none when whole: stable text for equal layouts."""
    rounded = round(float(value), 1)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:.1f}"
