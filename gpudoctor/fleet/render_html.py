"""The fleet report as one self-contained HTML page: counts, the nodes × areas table, problem groups,
drift, outliers, nodes that did not answer and files that could not be read.

The page loads nothing (inline style and script only, a Content-Security-Policy that admits exactly those
two blocks by hash), reads fully without script (every table is plain HTML) and shows each status as a word
and a symbol as well as a colour.  The script only sorts tables.  Every value from a report is escaped
(:func:`gpudoctor.fleet.render_html_parts.esc`).
"""

from __future__ import annotations

import math

from gpudoctor import __version__
from gpudoctor.fleet.render_html_assets import SCRIPT, STYLE, content_security_policy
from gpudoctor.fleet.render_html_nodes import nodes_table
from gpudoctor.fleet.render_html_parts import (
    Column,
    esc,
    number_cell,
    number_text,
    row_header,
    sortable_table,
    status_span,
    text_cell,
)
from gpudoctor.fleet.report_model import Drift, FleetReport, Outlier, ProblemGroup

# A problem group lists its nodes open on the page up to this many; longer lists fold (still in the page).
_OPEN_NODE_LIST = 20
_BAD_WORST = ("problem", "crashed", "unknown")


def render_fleet_html(report: FleetReport) -> str:
    nodes, nodes_style = _nodes_section(report)
    style = STYLE + nodes_style
    policy = content_security_policy(SCRIPT, style)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
            '<meta name="referrer" content="no-referrer">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>gpudoctor fleet report</title>",
            f"<style>{style}</style>",
            "</head>",
            "<body>",
            _header(report),
            "<main>",
            nodes,
            _groups_section(report.problem_groups),
            _drift_section(report.drift),
            _outliers_section(report.outliers),
            _missing_section(report.missing),
            _unreadable_section(report),
            "</main>",
            '<p id="sort-status" class="sr" role="status" aria-live="polite"></p>',
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _header(report: FleetReport) -> str:
    nodes = report.nodes
    clean = sum(1 for n in nodes if n.worst == "ok")
    warned = sum(1 for n in nodes if n.worst == "warning")
    bad = sum(1 for n in nodes if n.worst in _BAD_WORST)
    slow = len({o.node for o in report.outliers})
    counts = [
        (len(nodes), "nodes reported"),
        (clean, "clean"),
        (warned, "with warnings only"),
        (bad, "with problems"),
        (slow, "slow outliers"),
        (len(report.missing), "not answering"),
        (len(report.unreadable), "unreadable files"),
    ]
    items = "".join(f'<li><span class="n">{n}</span>{esc(label)}</li>' for n, label in counts)
    return (
        "<header><h1>GPU fleet report</h1>"
        f'<p class="headline">{esc(_headline(report, bad, slow))}</p>'
        f'<ul class="counts" aria-label="Counts">{items}</ul>'
        f'<p class="muted">Made by gpudoctor {esc(__version__)} · exit code {report.exit_code}</p></header>'
    )


def _headline(report: FleetReport, bad: int, slow: int) -> str:
    if report.exit_code == 0:
        if not report.nodes:
            return "No node reports."
        warned = sum(1 for n in report.nodes if n.worst != "ok")
        if warned:
            return f"No problems; {_plural(warned, 'node has', 'nodes have')} warnings."
        return f"Every node is clean ({_plural(len(report.nodes), 'node', 'nodes')})."
    parts = []
    if bad:
        parts.append(_plural(bad, "node with problems", "nodes with problems"))
    if slow:
        parts.append(_plural(slow, "slow outlier", "slow outliers"))
    if report.missing:
        parts.append(_plural(len(report.missing), "node not answering", "nodes not answering"))
    if report.unreadable:
        parts.append(_plural(len(report.unreadable), "unreadable file", "unreadable files"))
    return "Needs attention: " + ", ".join(parts) + "."


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}" aria-labelledby="{key}-h"><h2 id="{key}-h">{esc(title)}</h2>\n{body}\n</section>'


def _none(text: str) -> str:
    return f'<p class="muted">{esc(text)}</p>'


def _nodes_section(report: FleetReport) -> tuple[str, str]:
    """The section and the stylesheet rules its table needs."""
    if not report.nodes:
        return _section("nodes", "Nodes", _none("No node reports were read.")), ""
    table, style = nodes_table(report)
    hint = _none("Click a column's name to sort by it; click again to reverse.")
    return _section("nodes", "Nodes × areas", hint + table), style


def _groups_section(groups: list[ProblemGroup]) -> str:
    if not groups:
        return _section("problems", "Problems", _none("No node has a problem or a warning."))
    items = "\n".join(_group_item(g) for g in groups)
    return _section("problems", "Problems, grouped", f'<ol class="groups">\n{items}\n</ol>')


def _group_item(group: ProblemGroup) -> str:
    css = "g-problem" if group.severity == "problem" else "g-warning"
    fix = f" → {esc(group.fix)}" if group.fix else ""
    lines = [
        f"<p><strong>{esc(_plural(len(group.nodes), 'node', 'nodes'))}</strong>: {status_span(group.severity)} "
        f"<code>{esc(group.code)}</code> {esc(group.message)}{fix}</p>"
    ]
    if group.command:
        lines.append(f"<p>Fix: <code>{esc(group.command)}</code></p>")
    if group.cause:
        lines.append(f'<p class="muted">Cause: {esc(group.cause)}</p>')
    opened = " open" if len(group.nodes) <= _OPEN_NODE_LIST else ""
    names = ", ".join(esc(n) for n in group.nodes)
    lines.append(
        f"<details{opened}><summary>{esc(_plural(len(group.nodes), 'node', 'nodes'))}</summary>"
        f'<p class="nodes-list">{names}</p></details>'
    )
    return f'<li class="{css}">' + "".join(lines) + "</li>"


def _drift_section(drift: list[Drift]) -> str:
    if not drift:
        return _section("drift", "Configuration drift", _none("Identical nodes are configured alike."))
    columns = [
        Column("Hardware"),
        Column("Setting"),
        Column("Usual value"),
        Column("Nodes with it", "num"),
        Column("Other value"),
        Column("Nodes with that", "num"),
        Column("Which nodes"),
    ]
    rows = []
    for d in drift:
        for value, nodes in d.odd.items():
            rows.append(
                "<tr>"
                + "".join(
                    [
                        text_cell(d.hardware),
                        text_cell(d.key),
                        text_cell(d.usual),
                        number_cell(d.usual_count),
                        text_cell(value),
                        number_cell(len(nodes)),
                        f'<td class="wrap">{", ".join(esc(n) for n in nodes)}</td>',
                    ]
                )
                + "</tr>"
            )
    table = sortable_table("drift-table", "Settings that differ among identical nodes", columns, rows)
    return _section("drift", "Configuration drift", table)


def _outliers_section(outliers: list[Outlier]) -> str:
    if not outliers:
        return _section("outliers", "Performance outliers", _none("No node is slower than its peers."))
    columns = [
        Column("Node"),
        Column("Hardware"),
        Column("Metric"),
        Column("Value", "num"),
        Column("Median", "num"),
        Column("Robust z", "num", title="(value − median) / (1.4826 · MAD); negative is slower"),
        Column("MAD", "num", title="median absolute deviation of the peers"),
        Column("Peers", "num"),
    ]
    rows = (_outlier_row(o) for o in outliers)
    table = sortable_table("outliers-table", "Nodes slower than the median of their peers", columns, rows)
    return _section("outliers", "Performance outliers", table)


def _outlier_row(o: Outlier) -> str:
    z = f"{o.robust_z:+.1f}" if math.isfinite(o.robust_z) else number_text(o.robust_z)
    cells = [
        row_header(o.node),
        text_cell(o.hardware),
        text_cell(f"{o.metric} ({o.unit})" if o.unit else o.metric),
        number_cell(o.value),
        number_cell(o.median),
        f'<td class="num">{esc(z)}</td>',
        number_cell(o.mad),
        number_cell(o.peers),
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _missing_section(missing: list[tuple[str, str]]) -> str:
    if not missing:
        return _section("missing", "Nodes that did not answer", _none("Every node asked answered."))
    rows = (f"<tr>{row_header(node)}<td>{esc(why)}</td></tr>" for node, why in missing)
    table = sortable_table("missing-table", "Nodes that did not answer", [Column("Node"), Column("Why")], rows)
    return _section("missing", "Nodes that did not answer", table)


def _unreadable_section(report: FleetReport) -> str:
    if not report.unreadable:
        return _section("unreadable", "Unreadable files", _none("Every file was a node report."))
    rows = (f"<tr>{row_header(u.source)}<td>{esc(u.why)}</td></tr>" for u in report.unreadable)
    table = sortable_table("unreadable-table", "Files that are not node reports", [Column("File"), Column("Why")], rows)
    return _section("unreadable", "Unreadable files", table)
