"""The machine-readable report: a versioned JSON image of the result model.

Like pip's ``--report``, the human output may change between releases while
this shape does not: keys are only ever added, and ``schema_version`` changes
when anything is renamed or removed.  The shape is :class:`gpudoctor.report_json.ReportJson`;
the schema (``gpudoctor schema``, :mod:`gpudoctor.render.report_schema`) is generated from the same types.
"""

from __future__ import annotations

import json

import gpudoctor
from gpudoctor.render.common import worst_status
from gpudoctor.report_json import SCHEMA_VERSION, CountsJson, ReportJson
from gpudoctor.results import Report

__all__ = ["SCHEMA_VERSION", "render_json", "report_to_dict"]


def _counts(report: Report) -> CountsJson:
    # Spelled out, not a comprehension over the statuses, so mypy proves every count is there.
    counts = report.counts()
    return {
        "ok": counts["ok"],
        "warning": counts["warning"],
        "problem": counts["problem"],
        "not_applicable": counts["not_applicable"],
        "crashed": counts["crashed"],
        "consequence": counts["consequence"],
    }


def report_to_dict(report: Report, exit_code: int) -> ReportJson:
    step = report.next_step()
    return {
        "schema_version": SCHEMA_VERSION,
        # Read at call time (not imported once) so tests can pin the version.
        "tool": {"name": "gpudoctor", "version": gpudoctor.__version__},
        "source": report.source.copy(),
        "machine": report.machine.copy(),
        "summary": {
            "counts": _counts(report),
            "exit_code": int(exit_code),
            "worst": worst_status(report.results).value,
        },
        "next_step": step.to_dict() if step is not None else None,
        "internal_errors": list(report.internal_errors),
        "results": [result.to_dict() for result in report.results],
        "sections": dict(report.sections),
    }


def render_json(report: Report, exit_code: int) -> str:
    # default=str: a check that left a Path or similar in its data still yields a
    # valid document instead of crashing the whole report at the very end.
    return json.dumps(report_to_dict(report, exit_code), indent=2, ensure_ascii=False, default=str) + "\n"
