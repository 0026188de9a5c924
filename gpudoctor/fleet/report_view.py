"""What the text and Markdown fleet reports agree on: which nodes get a row, column headings, wording.

Large fleets: the JSON (and HTML) report lists every node.  Text and Markdown list every node of a fleet
up to :data:`ALL_ROWS_UP_TO` nodes; beyond that only the nodes that need a look (not clean, or a slow
outlier), at most :data:`MAX_ROWS` of them, and say how many clean ones were left out.  Node lists inside
groups are cut at :data:`NODES_SHOWN` names the same way ("... and 40 more").
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.areas import AREAS
from gpudoctor.fleet.report_model import FleetReport, NodeSummary, Outlier, ProblemGroup
from gpudoctor.fleet.report_stats import MIN_PEERS, MIN_RELATIVE_DROP, ROBUST_Z_LIMIT

ALL_ROWS_UP_TO = 50
MAX_ROWS = 200
NODES_SHOWN = 20
_HEADINGS = {area.key: area.prefixes[0] for area in AREAS}
WORST_WORDS = {"ok": "ok", "warning": "warning", "problem": "problem", "crashed": "crashed", "unknown": "unknown"}

OUTLIER_RULE = (
    f"robust z-score below {ROBUST_Z_LIMIT} and at least {MIN_RELATIVE_DROP:.0%} below the median of "
    f"identical nodes (at least {MIN_PEERS} with the figure)"
)


def area_heading(area: str) -> str:
    """An area's column heading: its check-code prefix ("DRV", "TOPO"); a plugin's area by its key."""
    return _HEADINGS.get(area, area)


@dataclass
class Rows:
    nodes: list[NodeSummary]  # the rows, in the report's order
    clean_left_out: int  # clean nodes without a row
    others_left_out: int  # nodes needing a look beyond MAX_ROWS


def table_rows(report: FleetReport) -> Rows:
    if len(report.nodes) <= ALL_ROWS_UP_TO:
        return Rows(list(report.nodes), 0, 0)
    slow = {o.node for o in report.outliers}
    needing = [n for n in report.nodes if n.worst != "ok" or n.node in slow]
    return Rows(needing[:MAX_ROWS], len(report.nodes) - len(needing), max(0, len(needing) - MAX_ROWS))


def node_list(nodes: list[str], limit: int = NODES_SHOWN) -> str:
    shown = ", ".join(nodes[:limit])
    return f"{shown} and {len(nodes) - limit} more" if len(nodes) > limit else shown


def count_words(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def headline(report: FleetReport) -> str:
    """'12 nodes: 10 ok, 1 warning, 1 problem; 1 did not answer; 1 file unreadable; 2 slow figures'."""
    counts: dict[str, int] = {}
    for node in report.nodes:
        counts[node.worst] = counts.get(node.worst, 0) + 1
    states = ", ".join(f"{counts[w]} {WORST_WORDS[w]}" for w in WORST_WORDS if counts.get(w))
    parts = [count_words(len(report.nodes), "node") + (f": {states}" if states else "")]
    if report.missing:
        parts.append(f"{len(report.missing)} did not answer")
    if report.unreadable:
        parts.append(count_words(len(report.unreadable), "file") + " unreadable")
    if report.outliers:
        parts.append(count_words(len(report.outliers), "slow figure"))
    return "; ".join(parts)


def figure(value: float) -> str:
    """701.8, 54.5, 0.969: three significant figures at least, no exponent for ordinary figures."""
    if abs(value) >= 100:
        return f"{value:.0f}" if abs(value) >= 10000 else f"{value:.1f}"
    return f"{value:.3g}"


def outlier_text(outlier: Outlier) -> str:
    """'matmul bf16 350 TFLOP/s, median 701.8 (-50%, robust z -12.3, 12 nodes)'."""
    drop = (outlier.value - outlier.median) / outlier.median if outlier.median else 0.0
    z = f"robust z {outlier.robust_z:.1f}" if abs(outlier.robust_z) != float("inf") else "MAD 0"
    return (
        f"{outlier.metric} {figure(outlier.value)} {outlier.unit}, median {figure(outlier.median)} "
        f"({drop:+.0%}, {z}, {outlier.peers} nodes)"
    )


def group_text(group: ProblemGroup) -> str:
    """'12 nodes: DRV002 Driver/library version mismatch ...'."""
    return f"{count_words(len(group.nodes), 'node')}: {group.code} {group.message}"


def cause_text(group: ProblemGroup) -> str | None:
    return f"cause: {group.cause}" if group.cause else None
