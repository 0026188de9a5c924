"""The NVLink part of the topology picture: a curve per GPU pair with its link count ("NV4"), or one
NVSwitch bar every GPU plugs into when the facts say the GPUs meet in a switch fabric; links that are
down in the warning colour, with a tooltip naming them.
"""

from __future__ import annotations

from gpudoctor.facts.topology_model import nvlink_count
from gpudoctor.render.topology_svg_layout import ARC_MIN, ARC_STEP, GPU_H, GPU_W, SvgLayout
from gpudoctor.render.topology_svg_shapes import COLORS, esc, fit, link_list, num, svg_text
from gpudoctor.render.topology_text_shared import clean


class NvlinkDrawing(SvgLayout):
    """Draws the NVLinks of a placed layout."""

    def pair_warning(self, a: int, b: int) -> str | None:
        notes = []
        for me, peer in ((a, b), (b, a)):
            down = self.down_links(me)
            to_peer = [link for link, remote in down if remote is not None and remote == self.bus_of(peer)]
            unknown = [link for link, remote in down if remote is None]
            if to_peer:
                notes.append(f"GPU{me} links {link_list(to_peer)} to GPU{peer} are down")
            if unknown:
                notes.append(f"GPU{me} links {link_list(unknown)} are down (peer not reported)")
        return "; ".join(notes) or None

    def nvlink_arcs(self, box_bottom: float) -> tuple[list[str], float]:
        edges = sorted((a, b, path) for (a, b), path in self.pair_paths().items() if nvlink_count(path))
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
            warning = self.pair_warning(a, b)
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
                f'<g data-link="{a}-{b}" data-kind="nvlink"{mark}><title>{esc(tip)}</title>'
                f'<path d="M {num(x1)} {num(y0)} C {num(x1)} {num(y0 + depth)}, {num(x2)} {num(y0 + depth)}, '
                f'{num(x2)} {num(y0)}" fill="none" stroke="{color}" stroke-width="{num(stroke)}"{dash}/>'
                f'<rect x="{num(mx - label_w / 2)}" y="{num(apex - 8)}" width="{num(label_w)}" height="15" rx="3" '
                f'fill="#ffffff" stroke="{color}"/>'
                + svg_text(mx, apex + 3.5, label, size=10, anchor="middle", fill=color, weight="bold")
                + "</g>"
            )
        return out, deepest

    def nvswitch_bar(self, bar_y: float, fabric: str) -> list[str]:
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
        paths = self.pair_paths()
        y0 = self.gpu_y + GPU_H
        for gpu in self.gpus:
            if not any(gpu in pair for pair in paths):
                continue  # no path known for this GPU: do not draw a link nobody reported
            x = self.gpu_xy[gpu][0] + GPU_W / 2
            state = getattr(self.by_index.get(gpu), "nvlink", None)
            shared = {nvlink_count(path) for (a, b), path in paths.items() if gpu in (a, b)}
            count_text = f"NV{shared.pop()}" if len(shared) == 1 else "NV"
            down = self.down_links(gpu)
            tip = f"GPU{gpu} to the NVSwitches: {count_text}"
            if state is not None and state.total:
                tip += f", {state.active}/{state.total} links active"
            if down:
                tip += f"; links {link_list([link for link, _ in down])} are down"
            color = COLORS["warn"] if down else COLORS["nvlink"]
            mark = ' data-warning="nvlink-down"' if down else ""
            dash = ' stroke-dasharray="7 4"' if down else ""
            out.append(
                f'<g data-link="{gpu}-nvswitch" data-kind="nvlink"{mark}><title>{esc(tip)}</title>'
                f'<line x1="{num(x)}" y1="{num(y0)}" x2="{num(x)}" y2="{num(bar_y)}" stroke="{color}" '
                f'stroke-width="4"{dash}/>'
                + svg_text(x + 5, bar_y - 8, count_text, size=10, fill=color, weight="bold")
                + "</g>"
            )
        out.append(
            f'<g data-switch="nvswitch"><title>{esc(label)}</title>'
            f'<rect x="{num(left)}" y="{num(bar_y)}" width="{num(right - left)}" '
            f'height="28" rx="5" fill="#d3f9d8" stroke="{COLORS["nvlink"]}" stroke-width="2"/>'
            + svg_text((left + right) / 2, bar_y + 18, fit(label, right - left - 10), anchor="middle", weight="bold")
            + "</g>"
        )
        return out
