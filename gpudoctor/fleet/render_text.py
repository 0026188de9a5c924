"""The fleet report as text for a terminal: a table of nodes × areas with the single-node report's marks,
then the problem groups with their fix, configuration drift, slow outliers, nodes that did not answer and
files that could not be read.

Every value that came from a node report or a file name goes through
:func:`gpudoctor.render.common.printable` (escape sequences shown, not obeyed).  Colour (ANSI) only when
asked; the plain output is ASCII marks that line up and grep well.  Large fleets: see
:mod:`gpudoctor.fleet.report_view` for which nodes get a row.
"""

from __future__ import annotations

from gpudoctor.fleet.report_model import FleetReport, NodeSummary
from gpudoctor.fleet.report_view import (
    MAX_ROWS,
    OUTLIER_RULE,
    area_heading,
    cause_text,
    count_words,
    group_text,
    headline,
    node_list,
    outlier_text,
    table_rows,
)
from gpudoctor.render.common import printable

# Area marks, as short as the table needs (the single-node report's words: ok, warn, FAIL, CRSH, ->).
MARKS = {
    "ok": "ok",
    "warning": "warn",
    "problem": "FAIL",
    "crashed": "CRSH",
    "consequence": "->",
    None: "-",
}
WORST_MARKS = {"ok": "ok", "warning": "warn", "problem": "FAIL", "crashed": "CRSH", "unknown": "????"}
_ANSI = {"ok": "32", "warning": "33", "problem": "1;31", "crashed": "35", "consequence": "33", "unknown": "35"}
SEVERITY_MARKS = {"problem": "[FAIL]", "crashed": "[CRSH]", "warning": "[warn]"}
MAX_NODE_WIDTH = 40


def _paint(text: str, status: str | None, color: bool) -> str:
    code = _ANSI.get(status or "")
    return f"\x1b[{code}m{text}\x1b[0m" if color and code else text


def _node_cell(name: str) -> str:
    name = printable(name)
    return name if len(name) <= MAX_NODE_WIDTH else name[: MAX_NODE_WIDTH - 1] + "…"


def _table(report: FleetReport, color: bool) -> list[str]:
    rows = table_rows(report)
    headings = [area_heading(a) for a in report.areas]
    widths = [max(4, len(h)) for h in headings]
    node_width = max([4] + [len(_node_cell(n.node)) for n in rows.nodes])
    header = "  ".join([f"{'node':<{node_width}}", "worst"] + [f"{h:<{w}}" for h, w in zip(headings, widths)])
    lines = [
        "Nodes × areas (ok; warn; FAIL problem; CRSH crashed; -> follows from a problem elsewhere; "
        "- not applicable or not checked)",
        printable(header).rstrip(),
    ]
    slow = {o.node for o in report.outliers}
    for node in rows.nodes:
        lines.append(_row(node, report.areas, node_width, widths, color, node.node in slow))
    if rows.clean_left_out:
        lines.append(
            f"{count_words(rows.clean_left_out, 'clean node')} (every area ok) not listed; "
            "--format json or html lists every node"
        )
    if rows.others_left_out:
        lines.append(f"... and {count_words(rows.others_left_out, 'more node')} needing a look (see --format json)")
    return lines


def _row(node: NodeSummary, areas: list[str], node_width: int, widths: list[int], color: bool, slow: bool) -> str:
    # A clean node listed for a slow smoke figure says so in its "worst" cell.
    worst = "slow" if slow and node.worst == "ok" else WORST_MARKS.get(node.worst, "????")
    cells = [
        f"{_node_cell(node.node):<{node_width}}",
        _paint(f"{worst:<5}", "warning" if worst == "slow" else node.worst, color),
    ]
    for area, width in zip(areas, widths):
        status = node.areas.get(area)
        cells.append(_paint(f"{MARKS.get(status, '?'):<{width}}", status, color))
    return "  ".join(cells).rstrip()


def _groups(report: FleetReport, color: bool) -> list[str]:
    if not report.problem_groups:
        return []
    lines = ["", "Problems (nodes grouped by identical finding)"]
    for group in report.problem_groups:
        mark = _paint(SEVERITY_MARKS.get(group.severity, "[????]"), group.severity, color)
        lines.append(f"  {mark} {printable(group_text(group))}")
        indent = " " * 9
        cause = cause_text(group)
        if cause:
            lines.append(indent + printable(cause))
        if group.fix:
            lines.append(indent + "fix: " + printable(group.fix))
        if group.command:
            lines.append(indent + "$ " + printable(group.command))
        lines.append(indent + "nodes: " + printable(node_list(group.nodes)))
    return lines


def _drift(report: FleetReport) -> list[str]:
    if not report.drift:
        return []
    lines = ["", "Configuration drift (within groups of identical nodes)"]
    hardware = None
    for item in report.drift:
        if item.hardware != hardware:
            hardware = item.hardware
            lines.append(f"  {printable(hardware)}:")
        lines.append(f"    {printable(item.key)}: {printable(item.usual)} on {count_words(item.usual_count, 'node')}")
        for value, nodes in item.odd.items():
            lines.append(
                f"      {printable(value)} on {count_words(len(nodes), 'node')}: {printable(node_list(nodes))}"
            )
    return lines


def _outliers(report: FleetReport) -> list[str]:
    if not report.outliers:
        return []
    lines = ["", f"Slow outliers ({OUTLIER_RULE})"]
    for outlier in report.outliers[:MAX_ROWS]:
        lines.append(f"  {printable(outlier.node)} ({printable(outlier.hardware)}): {printable(outlier_text(outlier))}")
    if len(report.outliers) > MAX_ROWS:
        lines.append(f"  ... and {len(report.outliers) - MAX_ROWS} more (see --format json)")
    return lines


def _missing_and_unreadable(report: FleetReport) -> list[str]:
    lines: list[str] = []
    if report.missing:
        lines += ["", "Did not answer"]
        lines += [f"  {printable(node)}: {printable(why)}" for node, why in report.missing]
    if report.unreadable:
        lines += ["", "Unreadable files (not counted as nodes)"]
        lines += [f"  {printable(u.source)}: {printable(u.why)}" for u in report.unreadable]
    return lines


def render_fleet_text(report: FleetReport, color: bool = False) -> str:
    lines = [f"gpudoctor fleet report: {printable(headline(report))}", ""]
    if report.nodes:
        lines += _table(report, color)
    else:
        lines.append("No node report could be read.")
    lines += _groups(report, color)
    lines += _drift(report)
    lines += _outliers(report)
    lines += _missing_and_unreadable(report)
    if report.nodes and not (report.problem_groups or report.drift or report.outliers):
        lines += ["", "No problems, no drift between identical nodes, no slow outliers."]
    return "\n".join(lines) + "\n"
