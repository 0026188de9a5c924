"""`gpudoctor check --python` and `collect --python` end to end, against the real torch / TensorFlow / JAX venv.

The probe JSON is evidence: a snapshot taken with `collect --python` replays to the same
framework verdicts with `check --from`, on any machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]
FRAMEWORK_CODES = ("FW001", "TORCH001", "TORCH002", "TF001", "TF002", "JAX001", "CUPY001")


def _gpudoctor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*GPUDOCTOR, *args], capture_output=True, text=True, timeout=300, env=env)


def _by_code(report: dict) -> dict[str, dict]:
    return {r["code"]: r for r in report["results"]}


def test_check_python_probes_that_environment(framework_python):
    proc = _gpudoctor("check", "--python", framework_python, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    results = _by_code(report)
    assert report["machine"]["python"]["executable"] == framework_python
    assert report["machine"]["python"]["how"] == "--python"
    assert results["TORCH001"]["status"] == "ok"
    assert results["TORCH001"]["data"]["version"] == "2.13.0+cpu"
    assert results["TORCH001"]["data"]["import_s"] > 0
    # No GPU here: a CPU build is what this machine can use, not a problem.
    assert results["TORCH002"]["status"] == "ok" and "no NVIDIA GPU" in results["TORCH002"]["summary"]
    assert results["TF001"]["data"]["built_with_cuda"] is False
    assert results["JAX001"]["data"]["default_backend"] == "cpu"
    assert results["CUPY001"]["status"] == "not_applicable" and "not installed" in results["CUPY001"]["summary"]
    assert "PyTorch 2.13.0+cpu" in results["FW001"]["summary"]


def test_the_active_virtual_env_is_probed_by_default(framework_python):
    env = dict(os.environ, VIRTUAL_ENV=os.path.dirname(os.path.dirname(framework_python)))
    env.pop("CONDA_PREFIX", None)
    proc = _gpudoctor("check", "--select", "FW,TORCH001", "--frameworks", "torch", "--format", "json", env=env)
    report = json.loads(proc.stdout)
    assert report["machine"]["python"]["how"] == "VIRTUAL_ENV"
    assert _by_code(report)["TORCH001"]["data"]["version"] == "2.13.0+cpu"


def test_collected_probes_replay_from_a_snapshot(framework_python, tmp_path):
    snapshot = tmp_path / "snap.tar.gz"
    proc = _gpudoctor("collect", "-o", str(snapshot), "--python", framework_python)
    assert proc.returncode == 0, proc.stderr
    live = json.loads(_gpudoctor("check", "--python", framework_python, "--format", "json").stdout)
    replayed = json.loads(_gpudoctor("check", "--from", str(snapshot), "--format", "json").stdout)
    live_results, replayed_results = _by_code(live), _by_code(replayed)
    for code in FRAMEWORK_CODES:
        assert replayed_results[code]["status"] == live_results[code]["status"], code
        assert replayed_results[code]["summary"] == live_results[code]["summary"], code


def test_frameworks_none_probes_nothing():
    proc = _gpudoctor("check", "--frameworks", "none", "--select", "FW001,TORCH001", "--format", "json")
    results = _by_code(json.loads(proc.stdout))
    assert results["FW001"]["status"] == "not_applicable"
    assert results["TORCH001"]["status"] == "not_applicable"


def test_a_python_without_frameworks_is_named(tmp_path):
    # gpudoctor's own interpreter has none of the frameworks: the report says so and suggests --python.
    proc = _gpudoctor("check", "--python", sys.executable, "--select", "FW001", "-v")
    assert "not installed: PyTorch, TensorFlow, JAX, CuPy" in proc.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (("check", "--python", "/nonexistent/python"), "--python /nonexistent/python"),
        (("check", "--frameworks", "torch,mxnet"), "'mxnet' is not one of"),
        (("check", "--probe-timeout", "0"), "must be greater than 0"),
    ],
)
def test_bad_probe_options_are_one_line_and_exit_2(args, needle):
    proc = _gpudoctor(*args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr


def test_the_locator_answers_only_for_absent_frameworks(framework_python):
    from gpudoctor.evidence.framework_probes import locate_absent

    located = locate_absent(["torch", "cupy", "jax"], framework_python, timeout=60)
    # torch and jax are in that venv: their own probes must run; cupy is not: one record, same shape.
    assert sorted(located) == ["cupy"]
    record = json.loads(located["cupy"].text)
    assert record["installed"] is False and record["python"]["executable"] == framework_python


def test_absent_frameworks_in_gpudoctors_own_python_need_no_process():
    from gpudoctor.evidence.framework_probes import absent_here

    item = absent_here("cupy", sys.executable)
    assert item is not None and json.loads(item.text)["installed"] is False
    assert absent_here("cupy", "/some/other/python") is None
