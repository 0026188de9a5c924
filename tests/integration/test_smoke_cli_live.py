"""`gpudoctor smoke`, `check --smoke` and `collect --smoke` end to end, with the real torch CPU venv.

On this machine (no GPU) the smoke is a CPU baseline: the verdict must say so and not fail, and
its results must travel in a snapshot like any other evidence.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


def _gpudoctor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GPUDOCTOR, *args], capture_output=True, text=True, timeout=300)


def _by_code(report: dict) -> dict[str, dict]:
    return {r["code"]: r for r in report["results"]}


@pytest.fixture(scope="module")
def smoke_report(framework_python) -> dict:
    proc = _gpudoctor("smoke", "--python", framework_python, "--format", "json")
    report = json.loads(proc.stdout)
    failed = [(r["code"], r["summary"], r["data"]) for r in report["results"] if r["status"] == "problem"]
    assert proc.returncode == 0, (failed, proc.stderr)
    assert "@@gpudoctor-progress" not in proc.stderr  # JSON mode: progress is drawn, never echoed
    return report


def test_smoke_on_a_cpu_machine_is_a_baseline_not_a_failure(smoke_report):
    results = _by_code(smoke_report)
    assert {code[:5] for code in results} == {"SMOKE"}
    assert results["SMOKE001"]["status"] == "ok"
    assert "CPU baseline" in results["SMOKE001"]["summary"]
    assert results["SMOKE003"]["status"] == "ok"  # the CNN step really trained


def test_smoke_text_shows_the_numbers(framework_python):
    proc = _gpudoctor("smoke", "--python", framework_python, "--budget", "20")
    assert proc.returncode == 0, proc.stderr
    assert "Matmul" in proc.stdout and "TFLOP/s" in proc.stdout
    assert "CNN training step" in proc.stdout
    assert "SMOKE001" in proc.stdout


def test_collect_smoke_travels_in_a_snapshot(framework_python, tmp_path):
    snapshot = tmp_path / "snap"
    proc = _gpudoctor(
        "collect",
        "-o",
        str(snapshot),
        "--python",
        framework_python,
        "--frameworks",
        "torch",
        "--smoke",
        "--smoke-budget",
        "20",
    )
    assert proc.returncode == 0, proc.stderr
    assert (snapshot / "smoke.json").is_file()
    replayed = _by_code(json.loads(_gpudoctor("check", "--from", str(snapshot), "--format", "json").stdout))
    assert replayed["SMOKE001"]["status"] == "ok"


def test_check_without_smoke_says_how_to_run_it():
    proc = _gpudoctor("check", "--frameworks", "none", "--select", "SMOKE001", "--format", "json")
    result = _by_code(json.loads(proc.stdout))["SMOKE001"]
    assert result["status"] == "not_applicable"
    assert "smoke" in result["summary"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (("smoke", "--budget", "-1"), "must be greater than 0"),
        (("smoke", "--framework", "mxnet"), "invalid choice"),
        (("smoke", "--quick", "--full"), "not allowed with"),
        (("smoke", "--python", "/nonexistent/python"), "--python /nonexistent/python"),
    ],
)
def test_bad_smoke_options_are_one_line_and_exit_2(args, needle):
    proc = _gpudoctor(*args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr


def test_check_smoke_folds_the_verdicts_into_the_report(framework_python):
    proc = _gpudoctor(
        "check",
        "--python",
        framework_python,
        "--frameworks",
        "torch",
        "--smoke",
        "--smoke-budget",
        "20",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    results = _by_code(json.loads(proc.stdout))
    assert results["SMOKE001"]["status"] == "ok" and "CPU baseline" in results["SMOKE001"]["summary"]
    assert results["TORCH001"]["status"] == "ok"  # the rest of the report is still there
