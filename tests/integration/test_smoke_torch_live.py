"""The PyTorch smoke workloads, run for real with torch 2.13.0+cpu on this CPU machine.

The same code runs on GPUs (the device layer differs, not the workloads); here it proves the CPU path,
the budget, Ctrl-C handling, the gloo all-reduce across two real processes and the runner's live
progress.  The framework venv comes from ``scripts/setup-framework-venv.sh`` through
``GPUDOCTOR_FRAMEWORK_PYTHON``; without it these tests skip.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import time
import uuid

import pytest

from gpudoctor.evidence.framework_probes import probe_env
from gpudoctor.evidence.smoke_runner import run_smoke, smoke_argv
from gpudoctor.facts.smoke_model import PROGRESS_PREFIX, SMOKE_FILE

pytestmark = pytest.mark.integration

STAGE_ORDER = ["import", "devices", "matmul", "cnn", "bandwidth", "p2p", "allreduce", "done"]


def _processes_marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``marker`` (the probe and its rank processes inherit it)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def _marked_env() -> tuple[dict[str, str], str]:
    marker = f"GPUDOCTOR_SMOKE_TEST={uuid.uuid4().hex}"
    env = dict(os.environ)
    key, _, value = marker.partition("=")
    env[key] = value
    return env, marker


@pytest.fixture(scope="module")
def quick_run(framework_python):
    """One real quick run through the runner, with the progress events it delivered and when."""
    env, marker = _marked_env()
    events: list[tuple[float, dict]] = []
    started = time.monotonic()
    item = run_smoke(
        framework_python,
        "torch",
        "quick",
        on_progress=lambda event: events.append((time.monotonic() - started, event)),
        base_env=env,
    )
    wall = time.monotonic() - started
    return item, events, wall, _processes_marked(marker)


def test_quick_run_is_one_valid_document(quick_run, framework_python):
    item, _, _, _ = quick_run
    assert item.name == SMOKE_FILE and item.kind == "json"
    assert item.error is None, (item.error, item.stderr[-3000:])
    assert item.exit_code == 0 and not item.timed_out
    doc = item.json()
    assert doc["probe"] == "smoke" and doc["probe_version"] == 1 and doc["framework"] == "torch"
    assert doc["framework_version"] == "2.13.0+cpu"
    assert doc["mode"] == "quick" and doc["budget_s"] == 25.0
    assert doc["python"]["executable"] == framework_python
    assert doc["stopped_by"] is None and doc["errors"] == {} and doc["probe_error"] is None
    assert PROGRESS_PREFIX not in item.stderr  # progress went to the callback, not into the log


def test_devices_are_the_cpu_only(quick_run):
    devices = quick_run[0].json()["devices"]
    assert [d["id"] for d in devices] == ["cpu"]
    assert devices[0]["kind"] == "cpu" and devices[0]["threads"] >= 1 and devices[0]["name"]


def test_matmul_fp32_on_the_cpu_has_a_real_rate(quick_run):
    matmul = {(r["device"], r["dtype"]): r for r in quick_run[0].json()["matmul"]}
    fp32 = matmul[("cpu", "fp32")]
    assert fp32["error"] is None and fp32["skipped"] is None
    assert fp32["tflops"] > 0 and fp32["n"] >= 256 and fp32["repeats"] >= 1
    assert fp32["tflops"] == pytest.approx(2 * fp32["n"] ** 3 / fp32["seconds"] / 1e12)
    # How it was measured: warm-up until stable (or capped), repetitions with their spread, the CPU's threads.
    threads = quick_run[0].json()["devices"][0]["threads"]
    assert fp32["warmup"] >= 1 and fp32["repeats"] >= 3 and fp32["spread"] >= 0 and fp32["ops_per_sample"] >= 1
    assert fp32["ended_by"] in ("target", "max", "time") and fp32["threads"] == threads
    assert 0 < fp32["cpu_share"] <= 1
    # tf32 and fp16 are not CPU dtypes: listed, with the reason
    assert "TF32" in matmul[("cpu", "tf32")]["skipped"] and matmul[("cpu", "tf32")]["tflops"] is None
    assert matmul[("cpu", "fp16")]["skipped"]
    bf16 = matmul[("cpu", "bf16")]
    assert (bf16["tflops"] or 0) > 0 or "bf16" in (bf16["skipped"] or "")


def test_cnn_trains_in_fp32_and_mixed_precision_on_the_cpu(quick_run):
    cnn = {(r["device"], r["precision"]): r for r in quick_run[0].json()["cnn"]}
    assert set(cnn) == {("cpu", "fp32"), ("cpu", "amp")}
    for record in cnn.values():
        assert record["error"] is None and record["skipped"] is None
        assert record["batch"] == 64 and record["steps"] >= 2
        assert record["seconds_per_step"] > 0
        assert record["steps_per_s"] == pytest.approx(1 / record["seconds_per_step"])
        assert record["loss_decreased"] is True and record["loss_last"] < record["loss_first"]
        assert 1.5 < record["loss_first"] < 3.5  # cross-entropy of 10 classes starts near ln 10 = 2.30
        assert record["repeats"] >= 3 and record["warmup"] >= 1 and record["spread"] >= 0
        assert record["steps"] >= record["repeats"] + record["warmup"]  # every step counted, warm-up too


def test_no_bandwidth_or_p2p_on_a_cpu_only_machine(quick_run):
    doc = quick_run[0].json()
    assert doc["bandwidth"] == [] and doc["p2p"] == []


def test_gloo_allreduce_and_ddp_step_across_two_processes(quick_run):
    allreduce = quick_run[0].json()["allreduce"]
    assert allreduce["error"] is None and allreduce["skipped"] is None
    assert allreduce["backend"] == "gloo" and allreduce["world_size"] == 2 and allreduce["device_kind"] == "cpu"
    assert allreduce["bytes"] > 0 and allreduce["repeats"] >= 1 and allreduce["seconds"] > 0
    assert allreduce["algbw_gbps"] == pytest.approx(allreduce["bytes"] / allreduce["seconds"] / 1e9)
    assert allreduce["busbw_gbps"] > 0
    assert allreduce["busbw_gbps"] == pytest.approx(allreduce["algbw_gbps"] * 2 * (2 - 1) / 2)
    assert allreduce["ddp_step_s"] > 0 and allreduce["ddp_loss_decreased"] is True


def test_progress_arrives_live_and_in_order(quick_run):
    _item, events, _, _ = quick_run
    stages = [event["stage"] for _, event in events]
    assert stages[0] == "import" and stages[-1] == "done"
    assert [STAGE_ORDER.index(s) for s in stages] == sorted(STAGE_ORDER.index(s) for s in stages)
    assert {"matmul", "cnn", "allreduce"} <= set(stages)
    counted = [event for _, event in events if event["total"] is not None]
    assert [e["done"] for e in counted] == sorted(e["done"] for e in counted)
    assert len({e["total"] for e in counted}) == 1 and counted[-1]["done"] == counted[-1]["total"]


def test_no_process_outlives_the_run(quick_run):
    assert quick_run[3] == []


def test_tiny_budget_skips_with_reason_and_still_reports(framework_python):
    item = run_smoke(framework_python, "torch", "quick", budget=3)
    assert item.error is None, (item.error, item.stderr[-2000:])
    doc = item.json()
    assert doc["stopped_by"] == "budget" and doc["budget_s"] == 3
    skipped = [r for r in doc["matmul"] + doc["cnn"] + [doc["allreduce"]] if (r["skipped"] or "").startswith("budget")]
    assert skipped, doc
    # How far 3 s goes depends on how fast torch imports here: the all-reduce is either never started (skipped
    # for the budget, nothing measured) or measured with only its data-parallel step cut short; never an error.
    allreduce = doc["allreduce"]
    never_started = (allreduce["skipped"] or "").startswith("budget") and allreduce["seconds"] is None
    cut_short = (
        allreduce["seconds"] is not None
        and allreduce["ddp_step_s"] is None
        and "time left" in (allreduce["error"] or "")
    )
    assert never_started or cut_short, allreduce


def _read_progress_until(proc: subprocess.Popen, stage: str, limit_s: float = 60.0) -> list[dict]:
    events = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if line.startswith(PROGRESS_PREFIX):
            events.append(json.loads(line[len(PROGRESS_PREFIX) :]))
            if events[-1]["stage"] == stage:
                return events
    raise AssertionError(f"no {stage} progress line: {events}")


@pytest.mark.parametrize("inherited", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_sigint_stops_the_probe_and_keeps_what_finished(framework_python, inherited):
    """Ctrl-C running the probe: the workload in progress is abandoned, the rest reported.

    Also when the probe inherits SIGINT ignored (a job a shell started in the background): SIGINT is the
    runner's way of asking it to stop and report, so the probe listens to it whatever it inherited.
    """
    env, marker = _marked_env()
    argv = smoke_argv(framework_python, "torch", "quick")
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=probe_env("smoke", env),
        preexec_fn=lambda: signal.signal(signal.SIGINT, inherited),
    ) as proc:
        _read_progress_until(proc, "cnn")  # the matmuls are done, the first CNN run has begun
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    doc = json.loads(stdout)
    assert doc["stopped_by"] == "interrupt"
    fp32 = next(r for r in doc["matmul"] if r["dtype"] == "fp32")
    assert fp32["tflops"] > 0 and fp32["skipped"] is None
    assert all(r["skipped"] == "interrupted" and r["seconds_per_step"] is None for r in doc["cnn"])
    assert doc["allreduce"]["skipped"] == "interrupted"
    assert _processes_marked(marker) == []


def test_ctrl_c_in_gpudoctor_is_passed_on_and_returns_what_finished(framework_python):
    """KeyboardInterrupt in the parent while the all-reduce's rank processes run: nothing raised, no strays."""
    env, marker = _marked_env()
    seen = []

    def on_progress(event):
        seen.append(event["stage"])
        if event["stage"] == "allreduce":
            time.sleep(1.0)  # the rank processes are starting up
            os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C: Python raises KeyboardInterrupt here

    item = run_smoke(framework_python, "torch", "quick", on_progress=on_progress, base_env=env)
    assert item.error is not None and "interrupted" in item.error, item.error
    doc = item.json()
    assert doc is not None, item.stderr[-2000:]
    assert doc["stopped_by"] == "interrupt"
    assert all(r["loss_decreased"] for r in doc["cnn"])  # finished before the interrupt: kept
    assert doc["allreduce"]["skipped"] == "interrupted" and doc["allreduce"]["busbw_gbps"] is None
    assert "allreduce" in seen and "done" not in seen
    time.sleep(0.2)
    assert _processes_marked(marker) == []


def test_hard_timeout_asks_then_kills_and_says_so(framework_python):
    item = run_smoke(framework_python, "torch", "quick", timeout=1.5)
    assert item.timed_out is True
    assert "did not finish within 1.5 s" in item.error
    # Asked with SIGINT first, the probe (still importing torch, or at its first workload) printed what it had.
    doc = item.json()
    assert doc is not None and doc["stopped_by"] == "interrupt", item.stderr[-2000:]
    assert doc["allreduce"] is None or doc["allreduce"]["skipped"] == "interrupted"


def test_python_without_torch_gives_a_clear_error_record(synthetic_venv):
    item = run_smoke(synthetic_venv.python, "torch", "quick")
    assert item.error is None and item.exit_code == 0
    doc = item.json()
    assert doc["probe"] == "smoke" and doc["framework"] == "torch" and doc["installed"] is False
    assert "torch is not installed" in doc["errors"]["import"]
    assert synthetic_venv.python in doc["errors"]["import"]
    assert doc["matmul"] == [] and doc["cnn"] == [] and doc["allreduce"] is None
    assert doc["framework_version"] is None and doc["probe_error"] is None


def test_a_torch_whose_import_raises_is_reported_not_a_traceback(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a torch whose import fails the way a broken CUDA install does
        raise OSError("libcudnn.so.9: cannot open shared object file: No such file or directory")
    """,
    )
    item = run_smoke(synthetic_venv.python, "torch", "quick")
    assert item.error is None
    doc = item.json()
    assert doc["installed"] is True and doc["import_ok"] is False
    assert "OSError" in doc["errors"]["import"] and "libcudnn.so.9" in doc["errors"]["import"]
    assert doc["probe_error"] is None


def test_cuda_only_on_a_machine_without_gpus_says_why_nothing_ran(framework_python):
    item = run_smoke(framework_python, "torch", "quick", devices="cuda")
    assert item.error is None
    doc = item.json()
    assert doc["devices"] == [] and doc["matmul"] == [] and doc["cnn"] == []
    assert "no CUDA or ROCm support" in doc["errors"]["cuda"]
    assert "2+ GPUs" in doc["allreduce"]["skipped"] and doc["stopped_by"] is None


def test_missing_python_is_an_item_error():
    item = run_smoke("/nonexistent/bin/python", "torch", "quick")
    assert item.name == SMOKE_FILE and item.text is None
    assert "was not found" in item.error
