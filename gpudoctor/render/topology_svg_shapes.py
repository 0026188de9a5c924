"""The SVG primitives of the topology picture: colours, fonts, a link, a piece of text, escaping, numbers.

Every piece of text goes through :func:`esc` (control characters removed, markup escaped) and every
coordinate through :func:`num` (at most one decimal), so equal pictures are equal bytes.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from gpudoctor.render.topology_svg_layout import CHAR_W
from gpudoctor.render.topology_text_shared import clean

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


def svg_link(
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
        f'<g data-link="{esc(link_id)}" data-kind="{kind}"{mark}><title>{esc(tip)}</title>'
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{color}" '
        f'stroke-width="{num(width)}"{dash}/></g>'
    )


def svg_text(
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
    attrs = f'x="{num(x)}" y="{num(y)}"'
    if size != 11:
        attrs += f' font-size="{num(size)}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if fill:
        attrs += f' fill="{fill}"'
    if anchor:
        attrs += f' text-anchor="{anchor}"'
    if family:
        attrs += f' font-family="{family}"'
    return f"<text {attrs}>{esc(text)}</text>"


def esc(text: object) -> str:
    """Text and attribute values: no control characters (XML 1.0 forbids most), markup characters escaped."""
    return escape(clean(text), {'"': "&quot;", "'": "&apos;"})


def fit(text: object, width: float) -> str:
    text = clean(text)
    limit = max(int(width / CHAR_W), 2)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def link_list(links: list[int]) -> str:
    return ", ".join(str(link) for link in links)


def num(value: float) -> str:
    """Coordinates with at most one decimal, and none when whole: stable text for equal layouts."""
    rounded = round(float(value), 1)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:.1f}"
