"""One node report (the parsed JSON of ``check --format json``) boiled down to a :class:`NodeSummary`.

A report copied by hand may hold anything: every value is looked at with its type checked first, and what
is not a gpudoctor report of this schema version becomes an :class:`Unreadable` with why.  Nothing here
raises on any JSON value (a hypothesis test feeds it arbitrary ones).  Strings kept are shortened
(:data:`MAX_TEXT`) and the few repeated ones (statuses, areas, config keys) interned, so that ten thousand
summaries stay small.
"""

from __future__ import annotations

import sys
from typing import Any

from gpudoctor.fleet.report_config import node_config
from gpudoctor.fleet.report_model import NodeProblem, NodeSummary, Unreadable
from gpudoctor.fleet.report_smoke import node_measurements
from gpudoctor.report_json import SCHEMA_VERSION

MAX_TEXT = 500  # a finding's message or fix as kept for grouping and display
# The worst status of an area: a problem outranks a crash (as in gpudoctor's exit code); a check whose
# findings follow from another area's root cause is not "ok" there either.
_AREA_RANK = {"not_applicable": 0, "ok": 1, "consequence": 2, "warning": 3, "crashed": 4, "problem": 5}
_NODE_WORST = {"ok": "ok", "not_applicable": "ok", "warning": "warning", "problem": "problem", "crashed": "crashed"}


def text(value: object, limit: int = MAX_TEXT) -> str | None:
    """A non-empty string, shortened to ``limit`` characters; anything else is None."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value if len(value) <= limit else value[: limit - 1] + "…"


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def not_a_report(data: object) -> str | None:
    """Why ``data`` is not a gpudoctor node report of the schema this gpudoctor reads, or None."""
    if not isinstance(data, dict):
        return f"not a gpudoctor report (the JSON is a {type(data).__name__}, not an object)"
    tool = data.get("tool")
    if not (isinstance(tool, dict) and tool.get("name") == "gpudoctor") or "results" not in data:
        return "not a gpudoctor report (no tool 'gpudoctor' and results)"
    version = data.get("schema_version")
    if type(version) is not int:
        return "not a gpudoctor report (no schema_version)"
    if version != SCHEMA_VERSION:
        age = "an older" if version < SCHEMA_VERSION else "a newer"
        return (
            f"report schema_version {version}, made by {age} gpudoctor; this one reads {SCHEMA_VERSION} "
            "(run the check again with this gpudoctor)"
        )
    if not isinstance(data.get("results"), list):
        return "not a gpudoctor report (results is not a list)"
    return None


def summarize(node: str, source: str, data: object) -> NodeSummary | Unreadable:
    """The summary of one parsed report, or why it is not one.  Never raises on any JSON value."""
    why = not_a_report(data)
    if why is not None:
        return Unreadable(source, why)
    assert isinstance(data, dict)
    machine = mapping(data.get("machine"))
    summary = mapping(data.get("summary"))
    by_code: dict[str, dict[str, Any]] = {}  # each check's first result: the few whose data is read
    areas: dict[str, str] = {}
    problems: list[NodeProblem] = []
    for result in items(data.get("results")):
        if not isinstance(result, dict):
            continue
        code, status = result.get("code"), result.get("status")
        if isinstance(code, str) and code not in by_code:
            by_code[code] = result
        if not isinstance(status, str) or status not in _AREA_RANK or status == "not_applicable":
            continue
        _note_area(areas, result.get("area"), status)
        if status in ("problem", "warning", "crashed"):
            problems.append(_problem(result, status))
    exit_code = summary.get("exit_code")
    gpu_model, gpu_count = _gpus(machine)
    return NodeSummary(
        node=node,
        source=source,
        exit_code=exit_code if type(exit_code) is int else None,
        worst=_node_worst(summary.get("worst"), areas),
        areas=areas,
        problems=problems,
        config=node_config(data, by_code),
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        measurements=node_measurements(by_code),
    )


def _node_worst(reported: object, areas: dict[str, str]) -> str:
    """The report's own worst status, else the worst of its areas; "unknown" when neither says."""
    if isinstance(reported, str) and reported in _NODE_WORST:
        return _NODE_WORST[reported]
    if not areas:
        return "unknown"
    worst = max(areas.values(), key=lambda s: _AREA_RANK[s])
    return _NODE_WORST.get(worst, "warning")


def _note_area(areas: dict[str, str], value: object, status: str) -> None:
    """Keep the worst status of each area (checks whose areas all did not apply leave it out)."""
    area = text(value, 40)
    if area is None:
        return
    area = sys.intern(area)
    if area not in areas or _AREA_RANK[status] > _AREA_RANK[areas[area]]:
        areas[area] = sys.intern(status)


def _problem(result: dict[str, Any], status: str) -> NodeProblem:
    """The first finding of a check that found a problem or warning (or crashed), in its words."""
    code = text(result.get("code"), 40) or "?"
    findings = [f for f in items(result.get("findings")) if isinstance(f, dict)]
    first = next((f for f in findings if f.get("severity") == status), findings[0] if findings else {})
    message = text(first.get("message")) or text(result.get("summary")) or text(result.get("title")) or ""
    if status == "crashed":
        message = f"the check crashed: {message}" if message else "the check crashed"
    fix = mapping(first.get("fix"))
    commands = [c for c in items(fix.get("commands")) if isinstance(c, str) and c.strip()]
    return NodeProblem(
        code=code,
        area=sys.intern(text(result.get("area"), 40) or "?"),
        severity=sys.intern(status),
        message=message,
        cause=text(first.get("cause"), 100),
        fix=text(fix.get("summary")),
        command=text(commands[0]) if commands else None,
    )


def _gpus(machine: dict[str, Any]) -> tuple[str | None, int]:
    """The GPU model ("NVIDIA H100 80GB HBM3"; mixed models joined with " + ") and how many GPUs."""
    gpus = [g for g in items(machine.get("gpus")) if isinstance(g, dict)]
    names: dict[str, int] = {}
    for gpu in gpus:
        name = text(gpu.get("name"), 100) or "unnamed GPU"
        names[name] = names.get(name, 0) + 1
    if not names:
        return None, 0
    return sys.intern(" + ".join(sorted(names))), len(gpus)
