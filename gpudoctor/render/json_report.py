"""The machine-readable report: a versioned JSON image of the result model.

Like pip's ``--report``, the human output may change between releases while
this shape does not: keys are only ever added, and ``schema_version`` changes
when anything is renamed or removed.  ``report.schema.json`` (shipped as package
data) describes exactly this output, and the tests hold the two together.
"""

from __future__ import annotations

import json
from typing import Any

import gpudoctor
from gpudoctor.render.common import STATUS_ORDER, worst_status
from gpudoctor.results import Report

# 2: "next_step" (the fix to do first, or null) and "internal_errors" (gpudoctor's own failures
# outside the checks, such as a plugin that failed to import) were added.
SCHEMA_VERSION = 2
SCHEMA_RESOURCE = "report.schema.json"


def report_to_dict(report: Report, exit_code: int) -> dict[str, Any]:
    counts = report.counts()
    step = report.next_step()
    return {
        "schema_version": SCHEMA_VERSION,
        # Read at call time (not imported once) so tests can pin the version.
        "tool": {"name": "gpudoctor", "version": gpudoctor.__version__},
        "source": dict(report.source),
        "machine": dict(report.machine),
        "summary": {
            "counts": {status.value: counts[status.value] for status in STATUS_ORDER},
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


def load_schema() -> dict[str, Any]:
    """The JSON Schema of :func:`render_json`'s output (package data of gpudoctor.render)."""
    from importlib import resources

    text = resources.files("gpudoctor.render").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)  # JSON: a document of our own, shaped as its tests hold it
    return schema
