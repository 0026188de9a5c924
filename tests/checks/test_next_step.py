"""The report's "Next step": the first fixable problem, reading the stack from the bus upwards."""

from __future__ import annotations

from gpudoctor.areas import AREAS
from gpudoctor.results import CheckResult, Finding, Fix, Report, Severity, Status


def _result(code: str, area: str, severity: Severity | None, fix: bool = True) -> CheckResult:
    findings = [Finding(severity, f"{code} finding", Fix(f"fix {code}") if fix else None, (), code)] if severity else []
    status = {Severity.PROBLEM: Status.PROBLEM, Severity.WARNING: Status.WARNING, None: Status.OK}[severity]
    return CheckResult(code, area, code, status, "summary", findings)


def test_first_problem_in_stack_order_wins_over_earlier_warnings():
    report = Report(
        [
            _result("ENV001", "environment", Severity.PROBLEM),
            _result("PCI001", "pci", Severity.WARNING),
            _result("DRV001", "driver", Severity.PROBLEM),
        ],
        {"kind": "live"},
    )
    step = report.next_step()
    assert step is not None
    assert (step.code, step.message, step.fix.summary) == ("DRV001", "DRV001 finding", "fix DRV001")


def test_warning_when_no_problem_and_none_without_fixes():
    report = Report(
        [_result("ENV001", "environment", Severity.WARNING), _result("GPU001", "gpus", None)], {"kind": "live"}
    )
    step = report.next_step()
    assert step is not None and step.code == "ENV001"
    assert Report([_result("DRV001", "driver", Severity.PROBLEM, fix=False)], {"kind": "live"}).next_step() is None


def test_health_and_topology_come_right_after_the_gpus():
    """Before the areas table, health and topology had no place and were read last."""
    report = Report(
        [
            _result("CUDA002", "cuda", Severity.PROBLEM),
            _result("TOPO001", "topology", Severity.PROBLEM),
            _result("HEALTH001", "health", Severity.PROBLEM),
        ],
        {"kind": "live"},
    )
    step = report.next_step()
    assert step is not None and step.code == "HEALTH001"
    keys = [area.key for area in AREAS]
    assert keys.index("gpus") < keys.index("health") < keys.index("topology") < keys.index("cuda")


def test_a_plugin_area_is_read_after_every_known_one():
    report = Report(
        [_result("XMPL001", "example", Severity.PROBLEM), _result("COL001", "collection", Severity.PROBLEM)],
        {"kind": "live"},
    )
    step = report.next_step()
    assert step is not None and step.code == "COL001"
