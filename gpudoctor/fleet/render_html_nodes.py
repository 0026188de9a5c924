"""The fleet page's nodes × areas table, laid out to stay quick at 10,000 rows.

A plain table lays out every cell of every row, and lays them out again after each sort: 300,000 cells
took seconds per click.  So this one table keeps its HTML (and its roles: Chromium still exposes it as a
table) but is drawn as one CSS grid per row with the same fixed column widths, and each body row has
``content-visibility: auto``: the browser lays out only the rows near the screen.  Fixed widths mean a
long value is cut with an ellipsis on screen; the whole text stays in the page (selectable, found by
find-in-page, read by a screen reader) and the node's cell carries it as a tooltip too.

The widths come from the lengths of what the columns hold (numbers only ever reach the stylesheet, never
report text), so the stylesheet differs per report and the page's policy hashes it at render time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from gpudoctor.areas import area_title
from gpudoctor.fleet.render_html_parts import (
    Column,
    number_cell,
    row_header,
    sortable_table,
    status_cell,
    status_class_and_word,
    text_cell,
)
from gpudoctor.fleet.report_model import FleetReport, NodeSummary
from gpudoctor.render.common import printable

TABLE_ID = "nodes-table"
_NARROWEST_CH = 6
_WIDEST_CH = 40
# Room for the cell's padding, the sort arrow in a header and a status cell's symbol.
_SLACK_CH = 3
# Letters are on average a little wider than the "0" a ch measures, and headers are bold.
_LETTER_CH = 1.1

# The grid that replaces the table layout; the per-report column widths are added after it.
_GRID_STYLE = f"""
#{TABLE_ID} {{ width: max-content; }}
#{TABLE_ID}, #{TABLE_ID} thead, #{TABLE_ID} tbody {{ display: block; }}
#{TABLE_ID} tr {{ display: grid; }}
#{TABLE_ID} thead {{ position: sticky; top: 0; z-index: 1; background: #eef1f4; }}
#{TABLE_ID} thead th {{ position: static; }}
#{TABLE_ID} th, #{TABLE_ID} td {{ border-width: 0 1px 1px 0; overflow: hidden; text-overflow: ellipsis; }}
#{TABLE_ID} tbody tr {{ content-visibility: auto; contain-intrinsic-size: auto 1.6rem; }}
"""


def nodes_table(report: FleetReport) -> tuple[str, str]:
    """The table's HTML and the stylesheet rules that lay it out (to append to the page's style)."""
    columns, widths = _columns(report)
    rows = (_node_row(node, report.areas) for node in report.nodes)
    table = sortable_table(TABLE_ID, "Nodes and the worst status of each area", columns, rows)
    template = " ".join(f"{w}ch" for w in widths)
    return table, _GRID_STYLE + f"#{TABLE_ID} tr {{ grid-template-columns: {template}; }}\n"


def _width(label: str, values: Iterable[str]) -> int:
    """Enough ``ch`` for the header and the longest value, within the narrowest and widest a column gets."""
    longest = max((len(printable(v)) for v in values), default=0)
    wanted = math.ceil(max(len(label), longest) * _LETTER_CH) + _SLACK_CH
    return min(max(wanted, _NARROWEST_CH), _WIDEST_CH)


def _columns(report: FleetReport) -> tuple[list[Column], list[int]]:
    nodes = report.nodes
    status_words = [status_class_and_word(n.worst)[1] for n in nodes]
    columns = [
        (Column("Node"), [n.node for n in nodes]),
        (Column("Hardware"), [n.hardware for n in nodes]),
        (Column("Worst", "rank"), status_words),
        (Column("Problems", "num"), []),
        (Column("Warnings", "num"), []),
        (Column("Driver"), [n.config.get("driver", "") for n in nodes]),
        (
            Column("CUDA (driver)", title="the highest CUDA version the driver supports"),
            [n.config.get("cuda_driver_max", "") for n in nodes],
        ),
    ]
    for area in report.areas:
        words = {status_class_and_word(n.areas.get(area))[1] for n in nodes}
        columns.append((Column(area, "rank", title=area_title(area)), sorted(words)))
    return [c for c, _ in columns], [_width(c.label, values) for c, values in columns]


def _node_row(node: NodeSummary, areas: list[str]) -> str:
    problems = sum(1 for p in node.problems if p.severity == "problem")
    warnings = sum(1 for p in node.problems if p.severity == "warning")
    cells = [
        row_header(node.node, title=f"{node.node}, from {node.source}"),
        text_cell(node.hardware),
        status_cell(node.worst),
        number_cell(problems),
        number_cell(warnings),
        text_cell(node.config.get("driver")),
        text_cell(node.config.get("cuda_driver_max")),
    ]
    cells.extend(status_cell(node.areas.get(area)) for area in areas)
    return "<tr>" + "".join(cells) + "</tr>"
