"""The fleet report as JSON: every node, every group; stable keys, only ever added within a schema version.

Top level (``schema_version`` :data:`FLEET_SCHEMA_VERSION`)::

    schema_version  1
    kind            "gpudoctor-fleet-report"
    tool            {"name": "gpudoctor", "version"}
    summary         {"nodes", "ok", "warning", "problem", "crashed", "unknown", "missing", "unreadable",
                     "outliers", "exit_code"}   (exit_code: 0 all clean, 1 otherwise; see FleetReport.exit_code)
    areas           [area key, ...]           the table's columns, in gpudoctor's area order
    nodes           [{"node", "source", "exit_code", "worst", "hardware", "gpu_model", "gpu_count",
                      "areas": {area: status}, "problems": [{"code", "area", "severity", "message",
                      "cause", "fix", "command"}], "config": {key: value},
                      "measurements": [{"metric", "value", "unit", "device"}]}]
    problem_groups  [{"code", "severity", "message", "cause", "fix", "command", "count", "nodes"}]
    drift           [{"hardware", "key", "usual", "usual_count", "odd": [{"value", "nodes"}]}]
    outliers        [{"node", "hardware", "metric", "unit", "value", "median", "mad", "robust_z", "peers"}]
                    robust_z is null where the MAD is 0 (the relative drop alone decided)
    outlier_rule    {"min_peers", "robust_z_below", "min_relative_drop"}
    missing         [{"node", "why"}]         nodes the gatherer named as not answering
    unreadable      [{"source", "why"}]       files that are not node reports

Statuses are the node report's words (ok, warning, problem, crashed, consequence); an area absent from a
node's ``areas`` had only checks that did not apply.  Numbers are plain JSON numbers (never NaN/Infinity).
Non-ASCII characters are written as \\u escapes (a report may hold any string, lone surrogates too).
"""

from __future__ import annotations

import json
import math
from typing import Any

import gpudoctor
from gpudoctor.fleet.report_model import FleetReport, NodeSummary
from gpudoctor.fleet.report_stats import MIN_PEERS, MIN_RELATIVE_DROP, ROBUST_Z_LIMIT

FLEET_SCHEMA_VERSION = 1
KIND = "gpudoctor-fleet-report"


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _node(node: NodeSummary) -> dict[str, Any]:
    return {
        "node": node.node,
        "source": node.source,
        "exit_code": node.exit_code,
        "worst": node.worst,
        "hardware": node.hardware,
        "gpu_model": node.gpu_model,
        "gpu_count": node.gpu_count,
        "areas": dict(node.areas),
        "problems": [
            {
                "code": p.code,
                "area": p.area,
                "severity": p.severity,
                "message": p.message,
                "cause": p.cause,
                "fix": p.fix,
                "command": p.command,
            }
            for p in node.problems
        ],
        "config": dict(node.config),
        "measurements": [
            {"metric": m.metric, "value": _number(m.value), "unit": m.unit, "device": m.device}
            for m in node.measurements
        ],
    }


def fleet_to_dict(report: FleetReport, with_nodes: bool = True) -> dict[str, Any]:
    """The report as plain data; ``with_nodes=False`` leaves the nodes' list empty (the renderer writes it
    node by node)."""
    worst = dict.fromkeys(("ok", "warning", "problem", "crashed", "unknown"), 0)
    for node in report.nodes:
        worst[node.worst] = worst.get(node.worst, 0) + 1
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "kind": KIND,
        "tool": {"name": "gpudoctor", "version": gpudoctor.__version__},
        "summary": {
            "nodes": len(report.nodes),
            **worst,
            "missing": len(report.missing),
            "unreadable": len(report.unreadable),
            "outliers": len(report.outliers),
            "exit_code": report.exit_code,
        },
        "areas": list(report.areas),
        "nodes": [_node(n) for n in report.nodes] if with_nodes else [],
        "problem_groups": [
            {
                "code": g.code,
                "severity": g.severity,
                "message": g.message,
                "cause": g.cause,
                "fix": g.fix,
                "command": g.command,
                "count": len(g.nodes),
                "nodes": list(g.nodes),
            }
            for g in report.problem_groups
        ],
        "drift": [
            {
                "hardware": d.hardware,
                "key": d.key,
                "usual": d.usual,
                "usual_count": d.usual_count,
                "odd": [{"value": value, "nodes": list(nodes)} for value, nodes in d.odd.items()],
            }
            for d in report.drift
        ],
        "outliers": [
            {
                "node": o.node,
                "hardware": o.hardware,
                "metric": o.metric,
                "unit": o.unit,
                "value": _number(o.value),
                "median": _number(o.median),
                "mad": _number(o.mad),
                "robust_z": _number(o.robust_z),
                "peers": o.peers,
            }
            for o in report.outliers
        ],
        "outlier_rule": {
            "min_peers": MIN_PEERS,
            "robust_z_below": ROBUST_Z_LIMIT,
            "min_relative_drop": MIN_RELATIVE_DROP,
        },
        "missing": [{"node": node, "why": why} for node, why in report.missing],
        "unreadable": [{"source": u.source, "why": u.why} for u in report.unreadable],
    }


def render_fleet_json(report: FleetReport) -> str:
    """Indented like ``check --format json``, except that each node is one compact line: a 10,000-node
    report stays quick to write (the indenting encoder is pure Python) and greps a node per line."""
    top = fleet_to_dict(report, with_nodes=False)
    lines = ["{"]
    for position, (key, value) in enumerate(top.items()):
        comma = "," if position < len(top) - 1 else ""
        if key == "nodes":
            rows = [json.dumps(_node(n), allow_nan=False) for n in report.nodes]
            body = ",\n    ".join(rows)
            lines.append(f'  "nodes": [\n    {body}\n  ]{comma}' if rows else f'  "nodes": []{comma}')
            continue
        text = json.dumps(value, indent=2, allow_nan=False).replace("\n", "\n  ")
        lines.append(f"  {json.dumps(key)}: {text}{comma}")
    return "\n".join(lines) + "\n}\n"
