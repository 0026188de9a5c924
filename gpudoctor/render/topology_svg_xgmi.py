"""The AMD part of the topology picture: one box per XGMI hive with its GPUs side by side and a curve per XGMI
link under them; GPUs in different boxes reach each other over PCIe.

Hooks for tests and people: each AMD GPU has ``data-amd-gpu="N"``, each XGMI link ``data-link="amdA-amdB"`` and
``data-kind="xgmi"``, each hive box ``data-hive="N"`` (its position; the KFD hive id is in its tooltip), the box
of GPUs in no hive ``data-hive="none"``.
"""

from __future__ import annotations

from gpudoctor.facts.topology_model import AmdTopoGpu, MachineTopology, XgmiLink
from gpudoctor.facts.topology_xgmi import xgmi_hives
from gpudoctor.render.topology_svg_layout import BOX_PAD, GAP, GPU_H, GPU_W, MARGIN, NUMA_GAP
from gpudoctor.render.topology_svg_shapes import COLORS, MONO, esc, fit, num, svg_text
from gpudoctor.render.topology_text_shared import clean

XGMI_COLOR = "#c92a2a"
HEAD = 26  # the box's label row
ARC_MIN, ARC_STEP = 26, 16
LEGEND_H = 30


def _arcs_depth(members: list[int]) -> float:
    return ARC_MIN + ARC_STEP * (len(members) - 2) + 14 if len(members) > 1 else 0.0


def xgmi_block(topo: MachineTopology, top: float) -> tuple[list[str], float, float]:
    """The AMD GPUs' drawing from ``top`` down: its parts, its bottom and its right edge."""
    by_index = {gpu.index: gpu for gpu in topo.amd_gpus}
    groups: list[tuple[str, str | None, list[int]]] = [
        (str(number), hive, members) for number, (hive, members) in enumerate(xgmi_hives(topo.amd_gpus).items())
    ]
    lonely = [gpu.index for gpu in sorted(topo.amd_gpus, key=lambda g: g.index) if not gpu.hive_id]
    if lonely:
        groups.append(("none", None, lonely))
    out: list[str] = []
    x = float(MARGIN)
    bottom = top
    placed: dict[int, tuple[float, float]] = {}
    for label, hive, members in groups:
        width = len(members) * GPU_W + (len(members) - 1) * GAP + 2 * BOX_PAD
        height = HEAD + GPU_H + _arcs_depth(members) + BOX_PAD
        title = f"XGMI hive {label}" if hive else "No XGMI hive"
        tip = f"{title}: " + ", ".join(f"GPU{m}" for m in members) + (f" (KFD hive id {clean(hive)})" if hive else "")
        out.append(
            f'<g data-hive="{esc(label)}"><title>{esc(tip)}</title>'
            f'<rect x="{num(x)}" y="{num(top)}" width="{num(width)}" height="{num(height)}" rx="8" fill="#fff5f5" '
            f'stroke="#ffa8a8"/>' + svg_text(x + BOX_PAD, top + 18, title, weight="bold", size=12) + "</g>"
        )
        for n, index in enumerate(members):
            placed[index] = (x + BOX_PAD + n * (GPU_W + GAP), top + HEAD)
        out += _arcs(topo, members, placed)
        out += [_gpu(by_index[index], placed[index]) for index in members]
        x += width + NUMA_GAP
        bottom = max(bottom, top + height)
    across = [link for link in topo.xgmi_links if not _same_group(link, groups)]
    legend_top = bottom + 12
    out.append(
        '<g data-legend="xgmi">'
        f'<line x1="{MARGIN}" y1="{num(legend_top + 8)}" x2="{MARGIN + 26}" y2="{num(legend_top + 8)}" '
        f'stroke="{XGMI_COLOR}" stroke-width="3"/>'
        + svg_text(MARGIN + 32, legend_top + 12, "XGMI link (AMD GPU to GPU)", size=10)
        + svg_text(
            MARGIN + 220, legend_top + 12, "GPUs in different boxes talk over PCIe.", size=10, fill=COLORS["muted"]
        )
        + "</g>"
    )
    if across:
        pairs = ", ".join(f"GPU{link.a}-GPU{link.b}" for link in across)
        out.append(svg_text(MARGIN, legend_top + 28, f"XGMI links between hives: {pairs}", size=10))
    right = max(x - NUMA_GAP, MARGIN + 440.0)
    return out, legend_top + LEGEND_H + (16 if across else 0), right


def _same_group(link: XgmiLink, groups: list[tuple[str, str | None, list[int]]]) -> bool:
    return any(link.a in members and link.b in members for _, _, members in groups)


def _arcs(topo: MachineTopology, members: list[int], placed: dict[int, tuple[float, float]]) -> list[str]:
    order = {gpu: n for n, gpu in enumerate(members)}
    links = [link for link in topo.xgmi_links if link.a in order and link.b in order]
    peers: dict[int, list[int]] = {}
    for link in links:
        peers.setdefault(link.a, []).append(link.b)
        peers.setdefault(link.b, []).append(link.a)
    for gpu in peers:
        peers[gpu].sort(key=lambda p: order[p])

    def anchor(gpu: int, peer: int) -> float:
        slot = peers[gpu].index(peer)
        return placed[gpu][0] + GPU_W * (slot + 1) / (len(peers[gpu]) + 1)

    out = []
    for link in sorted(links, key=lambda k: (k.a, k.b)):
        y0 = placed[link.a][1] + GPU_H
        depth = ARC_MIN + ARC_STEP * (abs(order[link.a] - order[link.b]) - 1)
        x1, x2 = anchor(link.a, link.b), anchor(link.b, link.a)
        tip = f"GPU{link.a} <-> GPU{link.b}: XGMI"
        if link.weight is not None:
            tip += f" (KFD weight {link.weight})"
        if link.hops is not None:
            tip += f", {link.hops} hop" + ("" if link.hops == 1 else "s")
        out.append(
            f'<g data-link="amd{link.a}-amd{link.b}" data-kind="xgmi"><title>{esc(tip)}</title>'
            f'<path d="M {num(x1)} {num(y0)} C {num(x1)} {num(y0 + depth)}, {num(x2)} {num(y0 + depth)}, '
            f'{num(x2)} {num(y0)}" fill="none" stroke="{XGMI_COLOR}" stroke-width="2.5"/></g>'
        )
    return out


def _gpu(gpu: AmdTopoGpu, at: tuple[float, float]) -> str:
    x, y = at
    name = clean(gpu.name) or "AMD GPU"
    short = name[4:] if name.startswith("AMD ") and len(name) > 4 and gpu.name else "AMD"
    what = " ".join(part for part in (short, clean(gpu.gfx_target)) if part)
    bus = clean(gpu.bus_id) or "bus id unknown"
    where = [f"NUMA {gpu.numa_node}" if gpu.numa_node is not None else "NUMA ?"]
    if gpu.partitions > 1:
        where.append(f"{gpu.partitions} partitions")
    tip = [f"GPU{gpu.index}: {name}", bus]
    if gpu.gfx_target:
        tip.append(clean(gpu.gfx_target))
    if gpu.device_id:
        tip.append(f"device {clean(gpu.device_id)}")
    tip += where
    return (
        f'<g data-amd-gpu="{gpu.index}"><title>{esc(" | ".join(tip))}</title>'
        f'<rect x="{num(x)}" y="{num(y)}" width="{GPU_W}" height="{GPU_H}" rx="5" fill="#ffffff" '
        f'stroke="#343a40" stroke-width="1.5"/>'
        + svg_text(x + 8, y + 16, f"GPU{gpu.index}", weight="bold", size=12)
        + svg_text(x + 8, y + 31, fit(what, GPU_W - 14))
        + svg_text(x + 8, y + 46, fit(bus, GPU_W - 14), family=MONO, size=10, fill=COLORS["muted"])
        + svg_text(x + 8, y + 61, fit(", ".join(where), GPU_W - 14), size=10, fill=COLORS["muted"])
        + "</g>"
    )
