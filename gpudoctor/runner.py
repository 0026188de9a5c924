"""Run the checks over the facts and collect their results.

A check that raises is recorded as crashed with its traceback; the others go
on.  Selection (``--select``/``--ignore``) happens here, before anything runs.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from typing import TYPE_CHECKING

from gpudoctor.api import CheckContext, CheckSpec
from gpudoctor.registry import Registry, matches
from gpudoctor.results import CheckResult, Finding, Outcome, Status, not_applicable

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def selected_checks(registry: Registry, select: list[str] | None, ignore: list[str] | None) -> list[CheckSpec]:
    checks = registry.checks
    if select:
        checks = [c for c in checks if matches(c.code, select)]
    if ignore:
        checks = [c for c in checks if not matches(c.code, ignore)]
    return checks


# What a vendor's check says where nothing in the evidence names the vendor.
_NO_VENDOR = {
    "amd": "nothing in the evidence names an AMD GPU or ROCm",
    "intel": "nothing in the evidence names an Intel GPU",
    "apple": "nothing says this is a Mac",
    "google": "nothing in the evidence names a TPU",
}


def _vendor_absent(spec: CheckSpec, facts: Facts) -> Outcome | None:
    if spec.vendor is None or spec.vendor in facts.vendors_in_evidence:
        return None
    return not_applicable(_NO_VENDOR.get(spec.vendor, f"nothing in the evidence names {spec.vendor}"))


def run_check(spec: CheckSpec, facts: Facts, ctx: CheckContext) -> CheckResult:
    started = time.perf_counter()
    try:
        absent = _vendor_absent(spec, facts)
        outcome: object = absent if absent is not None else spec.func(facts, ctx)
        if not isinstance(outcome, Outcome):  # a plugin's bug: its annotations are not checked at run time
            raise TypeError(f"check {spec.code} returned {type(outcome).__name__}, not an Outcome")
    except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
        return CheckResult(
            code=spec.code,
            area=spec.area,
            title=spec.title,
            status=Status.CRASHED,
            summary=f"the check itself failed: {type(exc).__name__}: {exc}",
            duration_s=time.perf_counter() - started,
            traceback=traceback.format_exc(),
        )
    findings = [f if f.code else dataclasses.replace(f, code=spec.code) for f in outcome.findings]
    if findings:
        from gpudoctor.runner_notebook import without_root

        findings = without_root(findings, facts)
    return CheckResult(
        code=spec.code,
        area=spec.area,
        title=spec.title,
        status=outcome.status,
        summary=outcome.summary,
        findings=findings,
        data=outcome.data,
        duration_s=time.perf_counter() - started,
    )


def run_checks(checks: list[CheckSpec], facts: Facts, ctx: CheckContext) -> list[CheckResult]:
    """Every check's result, with the findings that follow from another's root cause folded under it."""
    from gpudoctor.runner_folding import fold_consequences

    return fold_consequences([run_check(spec, facts, ctx) for spec in checks])


__all__ = ["Finding", "run_check", "run_checks", "selected_checks"]
