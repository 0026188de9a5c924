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

This module draws the boxes, PCIe links, GPUs, NICs and legend; where they go is decided in
``topology_svg_layout``, the NVLinks are drawn by ``topology_svg_nvlink``, the SVG primitives are in
``topology_svg_shapes``; AMD GPUs and their XGMI hives by ``topology_svg_xgmi`` (below the NVIDIA part, or
alone).  Advice (what to do about a degraded link) is never written here: it comes
from the checks' findings (``link_fixes``).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.facts.predicates import narrow_lanes
from gpudoctor.facts.topology import nvswitch_fabric
from gpudoctor.facts.topology_model import MachineTopology
from gpudoctor.render.topology_svg_layout import (
    BOX_PAD,
    CPU_H,
    CPU_TOP,
    GPU_H,
    GPU_W,
    MARGIN,
    NEAR,
    NIC_H,
    NIC_W,
    NUMA_GAP,
    SWITCH_HEAD,
    SWITCH_PAD,
    TITLE_H,
    UNIT_TOP,
    NumaBox,
)
from gpudoctor.render.topology_svg_nvlink import NvlinkDrawing
from gpudoctor.render.topology_svg_shapes import COLORS, FONT, MONO, esc, fit, link_list, num, svg_link, svg_text
from gpudoctor.render.topology_svg_xgmi import xgmi_block
from gpudoctor.render.topology_text_shared import NO_TOPOLOGY, clean, form_factor_label, pcie_text
from gpudoctor.render.topology_text_xgmi import xgmi_head


def render_topology_svg(
    topo: MachineTopology, title: str | None = None, link_fixes: Mapping[int, str] | None = None
) -> str:
    """The topology as a standalone SVG document (a string; write it with UTF-8).

    ``link_fixes``: GPU index -> what to do about its degraded PCIe link, in the check's own words
    (TOPO001's finding), added to that link's tooltip.
    """
    return _Drawing(topo, title, link_fixes or {}).svg()


class _Drawing(NvlinkDrawing):
    def __init__(self, topo: MachineTopology, title: str | None, link_fixes: Mapping[int, str]):
        super().__init__(topo)
        head = f"GPU topology: {len(self.gpus)} GPU" + ("" if len(self.gpus) == 1 else "s")
        if self.nics:
            head += f", {len(self.nics)} NIC" + ("" if len(self.nics) == 1 else "s")
        if not self.gpus and topo.amd_gpus:
            head = xgmi_head(topo)
        self.title = clean(title) if title is not None else head
        self.link_fixes = link_fixes

    def svg(self) -> str:
        if not self.gpus and self.topo.amd_gpus:  # AMD GPUs only: their XGMI hives are the whole picture
            parts, bottom, right = xgmi_block(self.topo, TITLE_H)
            return self._document(right + MARGIN, bottom + MARGIN, parts)
        if not self.gpus:
            return self._document(
                480, TITLE_H + 40, [svg_text(MARGIN, TITLE_H + 14, NO_TOPOLOGY, size=13, fill=COLORS["muted"])]
            )
        boxes, unplaced, box_bottom = self.arrange()
        top = TITLE_H
        x = boxes[-1].x + boxes[-1].width + NUMA_GAP if boxes else MARGIN

        body: list[str] = []
        body += self._numa_boxes(boxes, top, box_bottom)
        body += self._sys_links(boxes, top)
        body += self._pcie_links(boxes, top)
        # One NVSwitch bar instead of n² curves when facts say the GPUs meet in a switch fabric.
        nvswitch = nvswitch_fabric(self.topo, self.gpu_set)
        depth = 0.0
        if nvswitch:
            bar_y = box_bottom + 56
            body += self.nvswitch_bar(bar_y, nvswitch)
            depth = bar_y + 34 - box_bottom
        else:
            arcs, depth = self.nvlink_arcs(box_bottom)
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
        if self.topo.amd_gpus:  # a machine with GPUs of both vendors: the AMD ones below NVIDIA's
            parts, bottom, right = xgmi_block(self.topo, bottom + 16)
            body += parts
            width = max(width, right + MARGIN)
        return self._document(width, bottom + MARGIN, body)

    def _document(self, width: float, height: float, body: list[str]) -> str:
        sources = ", ".join(clean(s) for s in self.topo.sources)
        head = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(width)}" height="{num(height)}" '
            f'viewBox="0 0 {num(width)} {num(height)}" font-family="{FONT}" font-size="11" '
            f'fill="{COLORS["text"]}">',
            f"<title>{esc(self.title)}</title>",
            f'<rect x="0" y="0" width="{num(width)}" height="{num(height)}" fill="#ffffff"/>',
            svg_text(MARGIN, 26, self.title, size=15, weight="bold"),
        ]
        if sources:
            head.append(svg_text(MARGIN, 40, f"from {sources}", size=10, fill=COLORS["muted"]))
        return "\n".join(head + body + ["</svg>"]) + "\n"

    def _numa_boxes(self, boxes: list[NumaBox], top: float, bottom: float) -> list[str]:
        out = []
        for box in boxes:
            label = f"NUMA node {box.node}" if box.node is not None else "NUMA node unknown"
            if box.cpus:
                cpus = f"CPUs {clean(box.cpus)}"
            else:
                cpus = "CPU" if box.node is not None else "CPU (socket unknown)"
            inner = box.width - 2 * BOX_PAD
            out.append(
                f'<g data-numa="{esc(box.node if box.node is not None else "unknown")}">'
                f'<rect x="{num(box.x)}" y="{num(top)}" width="{num(box.width)}" height="{num(bottom - top)}" rx="8" '
                f'fill="#f8f9fa" stroke="#adb5bd"/>'
                + svg_text(box.x + BOX_PAD, top + 19, label, weight="bold", size=12)
                + f'<rect x="{num(box.x + BOX_PAD)}" y="{num(top + CPU_TOP)}" width="{num(inner)}" height="{CPU_H}" '
                f'rx="4" fill="#e7f5ff" stroke="#74c0fc"><title>{esc(label + ": " + cpus)}</title></rect>'
                + svg_text(box.x + box.width / 2, top + CPU_TOP + 17, fit(cpus, inner - 10), anchor="middle")
                + "</g>"
            )
            for unit in box.units:
                if unit.switch:
                    ux, uy = unit.x, top + UNIT_TOP
                    members = ", ".join([f"GPU{g}" for g in unit.gpus] + [clean(n) for n in unit.nics])
                    out.append(
                        f'<g data-switch="{unit.switch}"><title>{esc("PCIe switch (PIX/PXB): " + members)}</title>'
                        f'<rect x="{num(ux)}" y="{num(uy)}" width="{num(unit.width)}" '
                        f'height="{num(SWITCH_HEAD + GPU_H + SWITCH_PAD)}" rx="6" fill="none" stroke="#868e96" '
                        f'stroke-dasharray="5 3"/>'
                        + svg_text(ux + 8, uy + 15, "PCIe switch", size=10, fill=COLORS["muted"])
                        + "</g>"
                    )
        return out

    def _sys_links(self, boxes: list[NumaBox], top: float) -> list[str]:
        known = [box for box in boxes if box.node is not None]
        out = []
        y = top + CPU_TOP + CPU_H / 2
        for left, right in zip(known, known[1:]):
            x1, x2 = left.x + left.width - BOX_PAD, right.x + BOX_PAD
            tip = (
                f"NUMA node {left.node} <-> NUMA node {right.node}: CPU interconnect (QPI/UPI/xGMI); SYS paths cross it"
            )
            out.append(
                f'<g data-link="cpu{left.node}-cpu{right.node}" data-kind="sys"><title>{esc(tip)}</title>'
                f'<line x1="{num(x1)}" y1="{num(y)}" x2="{num(x2)}" y2="{num(y)}" stroke="{COLORS["sys"]}" '
                f'stroke-width="3" stroke-dasharray="2 3"/>'
                + svg_text((x1 + x2) / 2, y - 6, "SYS", size=10, fill=COLORS["sys"], anchor="middle")
                + "</g>"
            )
        return out

    def _pcie_links(self, boxes: list[NumaBox], top: float) -> list[str]:
        out = []
        cpu_bottom = top + CPU_TOP + CPU_H
        unit_top = top + UNIT_TOP
        for box in boxes:
            cpu = f"cpu{box.node}" if box.node is not None else "cpu"
            for unit in box.units:
                if unit.switch:
                    mid = unit.x + unit.width / 2
                    out.append(
                        svg_link(
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
                        svg_link(
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
        lanes = narrow_lanes(pcie)
        if lanes is not None:
            tip += f": running on x{lanes[0]} of x{lanes[1]} lanes"
            if gpu in self.link_fixes:
                tip += f" — {self.link_fixes[gpu]}"
            return svg_link(link_id, "pcie", x, y1, x, y2, COLORS["warn"], 3, tip, dashed=True, warn=True)
        return svg_link(link_id, "pcie", x, y1, x, y2, COLORS["pcie"], 2, tip)

    def _gpu(self, index: int) -> str:
        x, y = self.gpu_xy[index]
        gpu = self.by_index.get(index)
        name = clean(getattr(gpu, "name", None)) or "unknown GPU"
        short = name[7:] if name.startswith("NVIDIA ") and len(name) > 7 else name
        bus = clean(getattr(gpu, "bus_id", None)) or "bus id unknown"
        pcie = getattr(gpu, "pcie", None)
        link = pcie_text(pcie)
        lanes = narrow_lanes(pcie)
        problems = []
        if lanes is not None:
            problems.append(f"PCIe x{lanes[0]} of x{lanes[1]} lanes")
        down = self.down_links(index)
        if down:
            problems.append(f"NVLinks {link_list([link_no for link_no, _ in down])} down")
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
        short_link = link.split(" (")[0] if link else "PCIe ?"
        if link and lanes is not None:
            short_link += f" of x{lanes[1]} !"
        return (
            f'<g data-gpu="{index}"{mark}><title>{esc(" | ".join(tip))}</title>'
            f'<rect x="{num(x)}" y="{num(y)}" width="{GPU_W}" height="{GPU_H}" rx="5" fill="#ffffff" '
            f'stroke="{stroke}" stroke-width="{2.5 if problems else 1.5}"/>'
            + svg_text(x + 8, y + 16, f"GPU{index}", weight="bold", size=12)
            + svg_text(x + 8, y + 31, fit(short, GPU_W - 14))
            + svg_text(x + 8, y + 46, fit(bus, GPU_W - 14), family=MONO, size=10, fill=COLORS["muted"])
            + svg_text(
                x + 8,
                y + 61,
                fit(("PCIe " + short_link) if link else "PCIe unknown", GPU_W - 14),
                size=10,
                fill=COLORS["warn"] if lanes is not None else COLORS["muted"],
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
        near = self.near_gpus(label, NEAR)
        if near:
            tip += ": near " + ", ".join(f"GPU{g}" for g in near)
        return (
            f'<g data-nic="{esc(shown)}"><title>{esc(tip)}</title>'
            f'<rect x="{num(x)}" y="{num(y)}" width="{NIC_W}" height="{NIC_H}" rx="4" fill="#fff4e6" '
            f'stroke="#f08c00"/>'
            + svg_text(
                x + NIC_W / 2, y + (11 if name else 17), fit(shown, NIC_W - 6), size=9, weight="bold", anchor="middle"
            )
            + svg_text(x + NIC_W / 2, y + 22, fit(name, NIC_W - 6), size=9, anchor="middle", family=MONO)
            + "</g>"
        )

    def _unplaced(self, nics: list[str], top: float) -> tuple[list[str], float]:
        width = len(nics) * (NIC_W + 8) - 8 + 2 * BOX_PAD
        out = [
            f'<rect x="{MARGIN}" y="{num(top)}" width="{num(width)}" height="{num(NIC_H + 40)}" rx="8" '
            f'fill="#f8f9fa" stroke="#adb5bd"/>',
            svg_text(MARGIN + BOX_PAD, top + 18, "NICs near no GPU's socket (or socket unknown)", weight="bold"),
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
                f'<line x1="{num(x)}" y1="{num(top + 8)}" x2="{num(x + 26)}" y2="{num(top + 8)}" stroke="{color}" '
                f'stroke-width="3"{dash_attr}/>' + svg_text(x + 32, top + 12, text, size=10)
            )
            x += 32 + len(text) * 6 + 24
        note = "Dashed boxes: PCIe switches (GPUs and NICs on PIX/PXB paths to each other). Hover for details."
        out.append(svg_text(MARGIN, top + 28, note, size=10, fill=COLORS["muted"]))
        out.append("</g>")
        return out, top + 34, max(x, MARGIN + len(note) * 6)
