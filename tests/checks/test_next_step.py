"""The report's "Next step": the first fixable problem, reading the stack from the bus upwards."""

from __future__ import annotations

from gpudoctor.render.common import next_step
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
    result, finding = next_step(report)
    assert result.code == "DRV001" and finding.fix.summary == "fix DRV001"


def test_warning_when_no_problem_and_none_without_fixes():
    report = Report(
        [_result("ENV001", "environment", Severity.WARNING), _result("GPU001", "gpus", None)], {"kind": "live"}
    )
    assert next_step(report)[0].code == "ENV001"
    assert next_step(Report([_result("DRV001", "driver", Severity.PROBLEM, fix=False)], {"kind": "live"})) is None
