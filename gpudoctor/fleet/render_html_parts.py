"""The fleet page's building blocks: escaped text, status cells and sortable tables.

Every value that came from a node report (node names, messages, commands, file names) is data: it reaches
the page only through :func:`esc`, which first makes it printable (control characters shown as escapes,
URL credentials dropped, as in every renderer) and then HTML-escapes it, quotes included, so the same call
is safe in text and in attribute values.  Class names are never built from report values: a status picks
its class from a fixed table.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gpudoctor.render.common import printable

SortKind = Literal["text", "num", "rank"]

# Status -> (CSS class, the word shown).  The script ranks by class; anything unexpected reads as unknown.
_STATUS_CELLS: dict[str, tuple[str, str]] = {
    "ok": ("s-ok", "ok"),
    "consequence": ("s-consequence", "follows"),
    "warning": ("s-warning", "warning"),
    "problem": ("s-problem", "problem"),
    "crashed": ("s-crashed", "crashed"),
    "unknown": ("s-unknown", "unknown"),
}
_NOT_CHECKED = ("s-none", "n/a")


def esc(value: object) -> str:
    """``value`` as page text: printable, then HTML-escaped (safe inside a quoted attribute too)."""
    return html.escape(printable(str(value)), quote=True)


def status_class_and_word(status: str | None) -> tuple[str, str]:
    """The fixed CSS class and the word of a status; ``None`` / ``not_applicable`` is "n/a"."""
    if status is None or status == "not_applicable":
        return _NOT_CHECKED
    return _STATUS_CELLS.get(status, ("s-unknown", status))


def status_span(status: str | None) -> str:
    css, word = status_class_and_word(status)
    return f'<span class="{css}">{esc(word)}</span>'


def status_cell(status: str | None) -> str:
    css, word = status_class_and_word(status)
    return f'<td class="{css}">{esc(word)}</td>'


def text_cell(value: str | None) -> str:
    return "<td>" + esc(value) + "</td>" if value else '<td class="muted">—</td>'


def number_text(value: float) -> str:
    """A figure as shown: one decimal from 10 up, three significant digits below; no thousands separators
    (the sort reads the cell's number back)."""
    if not math.isfinite(value):
        return "n/a"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def number_cell(value: float | int) -> str:
    shown = str(value) if isinstance(value, int) else number_text(value)
    return f'<td class="num">{shown}</td>'


def row_header(value: str, title: str | None = None) -> str:
    hint = f' title="{esc(title)}"' if title else ""
    return f'<th scope="row"{hint}>{esc(value)}</th>'


@dataclass(frozen=True)
class Column:
    label: str
    kind: SortKind = "text"
    title: str | None = None  # the long name, as a tooltip


def sortable_table(table_id: str, caption: str, columns: Sequence[Column], rows: Iterable[str]) -> str:
    """A plain HTML table (complete without script); the page's script makes each header a sort button.

    ``table_id`` and the column kinds are the renderer's own constants; labels and rows are escaped text.
    """
    head = "".join(
        f'<th scope="col" data-type="{c.kind}"><button type="button"'
        + (f' title="{esc(c.title)}"' if c.title else "")
        + f">{esc(c.label)}</button></th>"
        for c in columns
    )
    body = "\n".join(rows)
    return (
        f'<div class="scroll"><table class="sortable" id="{table_id}">'
        f'<caption class="sr">{esc(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table></div>"
    )
