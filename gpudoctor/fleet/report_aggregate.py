"""``fleet report``: node reports read one at a time into summaries, then grouped.

* Problem groups: nodes whose check found the same thing.  The key is the check's code, severity, root
  cause and the finding's message text, compared exactly: a message carries the node's details ("kernel
  module 550.54.14, user space 555.42.02"), so nodes grouped together have the very same fault, and the
  same fault with other versions is a group of its own.  Largest groups first, problems before warnings.
* Drift: within each group of identical nodes (GPU model × count, at least two nodes), each configuration
  value (:data:`gpudoctor.fleet.report_config.CONFIG_KEYS`) that differs: the usual value and the nodes
  with each other one.  A node that does not report a value (a quick check has no framework probe) is
  not counted as differing.
* Slow outliers: within each group of identical nodes, per smoke metric, by the rule of
  :mod:`gpudoctor.fleet.report_stats`.

Nodes whose report names no GPU (a broken driver hides them) are not "identical" to anything: they are
in the table and the problem groups, not in drift or outliers.  A second report of a node already read
(the same file stem in two folders) is listed as unreadable rather than counted twice.
"""

from __future__ import annotations

from collections import Counter

from gpudoctor.areas import ordered_keys
from gpudoctor.fleet.report_config import CONFIG_KEYS
from gpudoctor.fleet.report_model import (
    Drift,
    FleetReport,
    NodeProblem,
    NodeSummary,
    Outlier,
    ProblemGroup,
    Unreadable,
)
from gpudoctor.fleet.report_read import find_inputs, read_missing_list, read_reports
from gpudoctor.fleet.report_stats import robust_z, slow_ones

NO_GPU = "no GPU"
_SEVERITY_ORDER = {"problem": 0, "crashed": 1, "warning": 2}


def aggregate(paths: list[str], workers: int | None = None) -> FleetReport:
    """The fleet report of the node reports in ``paths`` (folders and files)."""
    inputs = find_inputs(paths)
    unreadable = list(inputs.unreadable)
    nodes: list[NodeSummary] = []
    first_source: dict[str, str] = {}
    for read in read_reports(inputs.reports, workers):
        if isinstance(read, Unreadable):
            unreadable.append(read)
        elif read.node in first_source:
            why = f"a second report of node {read.node!r} (the first read: {first_source[read.node]}); not counted"
            unreadable.append(Unreadable(read.source, why))
        else:
            first_source[read.node] = read.source
            nodes.append(read)
    missing: dict[str, str] = {}
    for path in inputs.missing_lists:
        listed = read_missing_list(path)
        if isinstance(listed, Unreadable):
            unreadable.append(listed)
            continue
        for node, why in listed:
            if node not in first_source:  # a later run's report of it supersedes the note
                missing.setdefault(node, why)
    return build_report(nodes, unreadable, sorted(missing.items()))


def build_report(
    nodes: list[NodeSummary], unreadable: list[Unreadable], missing: list[tuple[str, str]] | None = None
) -> FleetReport:
    """The aggregate of summaries already read (the part of :func:`aggregate` that reads nothing)."""
    areas = ordered_keys([area for node in nodes for area in node.areas])
    return FleetReport(
        nodes=nodes,
        unreadable=unreadable,
        problem_groups=problem_groups(nodes),
        drift=drift(nodes),
        outliers=outliers(nodes),
        areas=areas,
        missing=list(missing or []),
    )


def problem_groups(nodes: list[NodeSummary]) -> list[ProblemGroup]:
    groups: dict[tuple[str, str, str, str | None], tuple[NodeProblem, list[str]]] = {}
    for node in nodes:
        for problem in node.problems:
            key = (problem.code, problem.severity, problem.message, problem.cause)
            if key not in groups:
                groups[key] = (problem, [])
            members = groups[key][1]
            if not members or members[-1] != node.node:  # a node counts once per group
                members.append(node.node)
    ordered = sorted(
        groups.values(),
        key=lambda g: (_SEVERITY_ORDER.get(g[0].severity, 3), -len(g[1]), g[0].code, g[0].message),
    )
    return [
        ProblemGroup(
            code=p.code,
            severity=p.severity,
            message=p.message,
            cause=p.cause,
            fix=p.fix,
            command=p.command,
            nodes=members,
        )
        for p, members in ordered
    ]


def hardware_groups(nodes: list[NodeSummary]) -> dict[str, list[NodeSummary]]:
    """Identical nodes by GPU model × count (nodes without a known GPU left out), in first-seen order."""
    groups: dict[str, list[NodeSummary]] = {}
    for node in nodes:
        if node.gpu_model:
            groups.setdefault(node.hardware, []).append(node)
    return groups


def _config_keys(members: list[NodeSummary]) -> list[str]:
    seen = {key for node in members for key in node.config}
    return [k for k in CONFIG_KEYS if k in seen] + sorted(seen.difference(CONFIG_KEYS))


def drift(nodes: list[NodeSummary]) -> list[Drift]:
    found: list[Drift] = []
    for hardware, members in hardware_groups(nodes).items():
        if len(members) < 2:
            continue
        for key in _config_keys(members):
            by_value: dict[str, list[str]] = {}
            for node in members:
                if key in node.config:
                    by_value.setdefault(node.config[key], []).append(node.node)
            if len(by_value) < 2:
                continue
            # The usual value: the most nodes have it (a tie goes to the value sorting first, so runs agree).
            usual = min(by_value, key=lambda v: (-len(by_value[v]), v))
            odd = {v: by_value[v] for v in sorted(by_value, key=lambda v: (-len(by_value[v]), v)) if v != usual}
            found.append(Drift(hardware=hardware, key=key, usual=usual, usual_count=len(by_value[usual]), odd=odd))
    return found


def outliers(nodes: list[NodeSummary]) -> list[Outlier]:
    found: list[Outlier] = []
    for hardware, members in hardware_groups(nodes).items():
        figures: dict[tuple[str, str], list[tuple[str, float]]] = {}
        for node in members:
            for measurement in node.measurements:
                figures.setdefault((measurement.metric, measurement.unit), []).append((node.node, measurement.value))
        for (metric, unit), values in figures.items():
            verdict = slow_ones([value for _, value in values])
            if verdict is None:
                continue
            centre, spread, slow = verdict
            for position in slow:
                name, value = values[position]
                found.append(
                    Outlier(
                        node=name,
                        hardware=hardware,
                        metric=metric,
                        unit=unit,
                        value=value,
                        median=centre,
                        mad=spread,
                        robust_z=robust_z(value, centre, spread),
                        peers=len(values),
                    )
                )
    found.sort(key=lambda o: (o.hardware, o.metric, o.value / o.median if o.median else 0.0, o.node))
    return found


def node_counts(nodes: list[NodeSummary]) -> Counter[str]:
    """How many nodes are ok, warning, problem, crashed, unknown."""
    return Counter(node.worst for node in nodes)
