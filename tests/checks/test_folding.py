"""One root cause, one problem: consequences are folded under the finding that names their cause.

The results are synthetic; the causes and their "leads to" links are the real table's.
"""

from __future__ import annotations

from gpudoctor.kb.causes import all_causes, consequences
from gpudoctor.results import CheckResult, Finding, Severity, Status
from gpudoctor.runner_folding import fold_consequences


def _result(code: str, area: str, severity: Severity, cause: str) -> CheckResult:
    finding = Finding(severity, f"{code} says {cause}", cause=cause, code=code)
    status = Status.PROBLEM if severity is Severity.PROBLEM else Status.WARNING
    return CheckResult(code=code, area=area, title=code, status=status, summary=finding.message, findings=[finding])


def _by_code(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.code: r for r in results}


def test_what_follows_from_the_root_is_shown_under_it() -> None:
    results = [
        _result("COL002", "collection", Severity.WARNING, "gpu-stack-unverified"),
        _result("DRV001", "driver", Severity.WARNING, "driver-not-loaded"),
        _result("TORCH005", "pytorch", Severity.PROBLEM, "cuda-unavailable"),
        _result("DRV006", "driver", Severity.WARNING, "driver-not-loaded"),
    ]
    folded = _by_code(fold_consequences(results))
    # The root keeps the worst severity of what it explains: folding never hides a problem.
    assert folded["DRV001"].status is Status.PROBLEM
    assert folded["DRV001"].findings[0].severity is Severity.PROBLEM
    for code in ("TORCH005", "DRV006", "COL002"):
        assert folded[code].status is Status.CONSEQUENCE
        assert folded[code].findings[0].consequence_of == "DRV001"
        assert folded[code].findings[0].severity is Severity.INFO


def test_a_consequence_met_first_in_the_areas_order_still_folds_under_its_root() -> None:
    # "cuda-unavailable" (frameworks) comes before "torch-cpu-build" (pytorch) in the areas' order.
    results = [
        _result("FW003", "frameworks", Severity.PROBLEM, "cuda-unavailable"),
        _result("TORCH002", "pytorch", Severity.PROBLEM, "torch-cpu-build"),
    ]
    folded = _by_code(fold_consequences(results))
    assert folded["TORCH002"].status is Status.PROBLEM
    assert folded["FW003"].findings[0].consequence_of == "TORCH002"


def test_independent_causes_stay_independent() -> None:
    results = [
        _result("TOPO001", "topology", Severity.WARNING, "pcie-link-degraded"),
        _result("TORCH002", "pytorch", Severity.PROBLEM, "torch-cpu-build"),
    ]
    assert fold_consequences(results) == results


def test_the_unverified_stack_stands_only_alone() -> None:
    alone = [_result("COL002", "collection", Severity.WARNING, "gpu-stack-unverified")]
    assert fold_consequences(alone) == alone


def test_leads_to_names_only_known_causes_and_has_no_cycle() -> None:
    table = all_causes()
    for cause in table.values():
        assert set(cause.leads_to) <= set(table), cause.id
        assert cause.id not in consequences(cause.id)
