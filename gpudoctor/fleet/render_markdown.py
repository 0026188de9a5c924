"""The fleet report as GitHub-flavoured Markdown: the nodes × areas table, then tables of the problem
groups, drift, slow outliers, nodes that did not answer and unreadable files.

Every value from a node report or a file name is data: in table cells ``|`` and markup characters are
escaped (``\\|``, ``\\*``, ``&lt;``), nothing spans lines, and control characters are shown as escapes
(:func:`gpudoctor.render.common.printable`).  Large fleets: see :mod:`gpudoctor.fleet.report_view`.
"""

from __future__ import annotations

import re

from gpudoctor.areas import area_title
from gpudoctor.fleet.report_model import FleetReport, NodeSummary
from gpudoctor.fleet.report_view import (
    MAX_ROWS,
    OUTLIER_RULE,
    area_heading,
    count_words,
    figure,
    headline,
    node_list,
    table_rows,
)
from gpudoctor.render.common import printable

CELLS = {
    "ok": "✅",
    "warning": "⚠️",
    "problem": "❌",
    "crashed": "💥",
    "consequence": "↳",
    "unknown": "❓",
    None: "➖",
}
# Inside one line of a cell only these start markup ("#", ">" and "-" only at a line's start, never here).
_MARKUP = re.compile(r"([\\`*_\[\]|~])")


def md(text: object) -> str:
    """Text safe in a table cell or a line of prose: markup characters backslash-escaped, ``<``/``&`` as
    entities (no raw HTML), one line."""
    value = printable(str(text)).replace("&", "&amp;").replace("<", "&lt;")
    return " ".join(_MARKUP.sub(r"\\\1", value).split())


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(headings: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(headings), _row(["---"] * len(headings)), *(_row(r) for r in rows), ""]


def _nodes_section(report: FleetReport) -> list[str]:
    rows = table_rows(report)
    legend = ", ".join(f"{area_heading(a)} = {area_title(a)}" for a in report.areas)
    lines = [
        "## Nodes × areas",
        "",
        f"✅ ok, ⚠️ warning, ❌ problem, 💥 crashed, ↳ follows from a problem elsewhere, ➖ not applicable. {md(legend)}",
        "",
    ]
    headings = ["node", "worst", *(md(area_heading(a)) for a in report.areas)]
    slow = {o.node for o in report.outliers}

    def worst(node: NodeSummary) -> str:  # a clean node listed for a slow smoke figure says so
        return "🐢 slow" if node.worst == "ok" and node.node in slow else CELLS.get(node.worst, "❓")

    body = [[md(n.node), worst(n), *(CELLS.get(n.areas.get(a), "❓") for a in report.areas)] for n in rows.nodes]
    lines += _table(headings, body)
    if rows.clean_left_out:
        lines += [
            f"{count_words(rows.clean_left_out, 'clean node')} (every area ok) not listed; "
            "`--format json` or `--format html` lists every node.",
            "",
        ]
    if rows.others_left_out:
        lines += [f"… and {count_words(rows.others_left_out, 'more node')} needing a look (see `--format json`).", ""]
    return lines


def _groups_section(report: FleetReport) -> list[str]:
    if not report.problem_groups:
        return []
    rows = [
        [
            str(len(g.nodes)),
            md(g.severity),
            md(g.code),
            md(g.message),
            md(g.cause or ""),
            md(g.fix or ""),
            md(g.command or ""),
            md(node_list(g.nodes)),
        ]
        for g in report.problem_groups
    ]
    return [
        "## Problems (nodes grouped by identical finding)",
        "",
        *_table(["nodes", "severity", "check", "finding", "cause", "fix", "command", "which"], rows),
    ]


def _drift_section(report: FleetReport) -> list[str]:
    if not report.drift:
        return []
    rows = [
        [
            md(d.hardware),
            md(d.key),
            f"{md(d.usual)} ({d.usual_count})",
            "; ".join(f"{md(value)} ({len(nodes)}): {md(node_list(nodes))}" for value, nodes in d.odd.items()),
        ]
        for d in report.drift
    ]
    return [
        "## Configuration drift (within groups of identical nodes)",
        "",
        *_table(["hardware", "setting", "usual value (nodes)", "differing values (nodes)"], rows),
    ]


def _outliers_section(report: FleetReport) -> list[str]:
    if not report.outliers:
        return []
    rows = []
    for o in report.outliers[:MAX_ROWS]:
        drop = (o.value - o.median) / o.median if o.median else 0.0
        z = f"{o.robust_z:.1f}" if abs(o.robust_z) != float("inf") else "MAD 0"
        rows.append(
            [
                md(o.node),
                md(o.hardware),
                md(o.metric),
                f"{figure(o.value)} {md(o.unit)}",
                f"{figure(o.median)} {md(o.unit)}",
                f"{drop:+.0%}",
                z,
                str(o.peers),
            ]
        )
    return [
        "## Slow outliers",
        "",
        md(f"Rule: {OUTLIER_RULE}."),
        "",
        *_table(["node", "hardware", "metric", "value", "median", "vs median", "robust z", "nodes"], rows),
        *(
            [f"… and {len(report.outliers) - MAX_ROWS} more (see `--format json`).", ""]
            if len(report.outliers) > MAX_ROWS
            else []
        ),
    ]


def _other_sections(report: FleetReport) -> list[str]:
    lines: list[str] = []
    if report.missing:
        lines += ["## Did not answer", "", *_table(["node", "why"], [[md(n), md(w)] for n, w in report.missing])]
    if report.unreadable:
        rows = [[md(u.source), md(u.why)] for u in report.unreadable]
        lines += ["## Unreadable files (not counted as nodes)", "", *_table(["file", "why"], rows)]
    return lines


def render_fleet_markdown(report: FleetReport) -> str:
    lines = ["# gpudoctor fleet report", "", f"**{md(headline(report))}**", ""]
    lines += _nodes_section(report) if report.nodes else ["No node report could be read.", ""]
    lines += _groups_section(report)
    lines += _drift_section(report)
    lines += _outliers_section(report)
    lines += _other_sections(report)
    return "\n".join(lines).rstrip("\n") + "\n"
