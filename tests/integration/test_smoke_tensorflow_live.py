"""The TensorFlow smoke workloads, run for real with tensorflow-cpu 2.21 on this CPU machine.

``gpudoctor/probes/smoke_tensorflow.py`` runs as a subprocess of the real framework venv (from
``scripts/setup-framework-venv.sh`` through ``GPUDOCTOR_FRAMEWORK_PYTHON``; without it those tests skip):
the quick suite, the budget, Ctrl-C, a GPU-only run on a CPU build.  The GPU parts share the workload
code with the CPU (only the TensorFlow device name differs); the cross-device copy they use is exercised
here between two logical CPU devices.  A TensorFlow that is absent or whose import fails is reproduced
in a real empty venv with a hand-written synthetic package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from gpudoctor.evidence.framework_probes import probe_env
from gpudoctor.facts.smoke_model import PROGRESS_PREFIX

pytestmark = pytest.mark.integration

PROBES_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "gpudoctor", "probes"
)
PROBE = os.path.join(PROBES_DIR, "smoke_tensorflow.py")
CONTRACT_KEYS = {
    "probe",
    "probe_version",
    "framework",
    "framework_version",
    "python",
    "mode",
    "budget_s",
    "elapsed_s",
    "stopped_by",
    "devices",
    "matmul",
    "cnn",
    "bandwidth",
    "p2p",
    "allreduce",
    "errors",
    "probe_error",
}


class Run:
    """One finished probe process: its JSON, its progress events, the other stderr lines, the wall time."""

    def __init__(self, proc: subprocess.Popen, stdout: str, stderr_lines: list[str], wall_s: float) -> None:
        self.returncode = proc.returncode
        self.stdout = stdout
        self.doc = json.loads(stdout)
        self.events = [
            json.loads(line[len(PROGRESS_PREFIX) :]) for line in stderr_lines if line.startswith(PROGRESS_PREFIX)
        ]
        self.other_stderr = [line for line in stderr_lines if line.strip() and not line.startswith(PROGRESS_PREFIX)]
        self.wall_s = wall_s

    def entry(self, stage: str, **match: str) -> dict:
        found = [e for e in self.doc[stage] if all(e.get(key) == value for key, value in match.items())]
        assert len(found) == 1, (stage, match, self.doc[stage])
        return found[0]


def run_probe(python: str, *args: str, interrupt_when=None, timeout: float = 120.0) -> Run:
    """Run the probe, reading stderr live; ``interrupt_when(event)`` true → SIGINT to the probe, once."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [python, PROBE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=probe_env("tensorflow", os.environ),
    )
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if interrupt_when is not None and line.startswith(PROGRESS_PREFIX):
                if interrupt_when(json.loads(line[len(PROGRESS_PREFIX) :])):
                    proc.send_signal(signal.SIGINT)
                    interrupt_when = None
        stdout = proc.stdout.read()
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Run(proc, stdout, lines, time.monotonic() - started)


@pytest.fixture(scope="module")
def quick(framework_python) -> Run:
    return run_probe(framework_python, "--mode", "quick", "--budget", "25")


# --- the quick suite on the CPU ----------------------------------------------------------------------------------


def test_quick_prints_one_json_document_of_the_contract(quick, framework_python):
    assert quick.returncode == 0
    assert quick.stdout.count("\n") == 1 and quick.stdout.endswith("\n")  # one line: the document, nothing else
    doc = quick.doc
    assert set(doc) >= CONTRACT_KEYS
    assert doc["probe"] == "smoke" and doc["probe_version"] == 1 and doc["framework"] == "tensorflow"
    assert doc["framework_version"] == "2.21.0" and doc["keras_version"].startswith("3.")
    assert doc["mode"] == "quick" and doc["budget_s"] == 25.0
    assert doc["python"]["executable"] == framework_python
    assert doc["stopped_by"] is None and doc["probe_error"] is None and doc["errors"] == {}
    assert doc["installed"] is True and doc["import_ok"] is True and 0 < doc["import_s"] < doc["elapsed_s"]
    assert not any("ResourceWarning" in text for text in doc["warnings"])  # the probe's own files are closed


def test_quick_measures_the_cpu_only(quick):
    assert [d["id"] for d in quick.doc["devices"]] == ["cpu"]
    cpu = quick.doc["devices"][0]
    assert cpu["kind"] == "cpu" and cpu["threads"] >= 1 and cpu["name"]
    assert {e["device"] for e in quick.doc["matmul"] + quick.doc["cnn"]} == {"cpu"}
    # No GPU: no copies to measure, and the all-reduce is the torch smoke's job.
    assert quick.doc["bandwidth"] == [] and quick.doc["p2p"] == []
    assert quick.doc["allreduce"]["skipped"] == "not measured with TensorFlow; use the torch smoke"
    assert quick.doc["allreduce"]["busbw_gbps"] is None


def test_quick_matmul_fp32_on_cpu(quick):
    fp32 = quick.entry("matmul", device="cpu", dtype="fp32")
    assert fp32["error"] is None and fp32["skipped"] is None
    assert fp32["tflops"] > 0 and fp32["seconds"] > 0 and fp32["repeats"] >= 3 and fp32["n"] >= 1024
    # The rate is the median matmul's own: 2·n³ operations in that many seconds.
    assert fp32["tflops"] == pytest.approx(2 * fp32["n"] ** 3 / fp32["seconds"] / 1e12, rel=1e-3)
    # How it was measured, as the torch smoke says it: warm-up until stable, spread, the CPU's threads.
    assert fp32["warmup"] >= 1 and fp32["spread"] >= 0 and fp32["ended_by"] in ("target", "max", "time")
    assert fp32["threads"] == quick.doc["devices"][0]["threads"] and 0 < fp32["cpu_share"] <= 1
    # No tf32 on a CPU; fp16 and bf16 run (TensorFlow has CPU kernels for both).
    assert sorted(e["dtype"] for e in quick.doc["matmul"]) == ["bf16", "fp16", "fp32"]
    for entry in quick.doc["matmul"]:
        assert entry["error"] is None and entry["tflops"] > 0, entry


def test_quick_cnn_trains_in_fp32_and_mixed_bfloat16(quick):
    fp32 = quick.entry("cnn", device="cpu", precision="fp32")
    assert fp32["error"] is None and fp32["skipped"] is None and fp32["policy"] is None
    assert fp32["loss_decreased"] is True and fp32["loss_last"] < fp32["loss_first"]
    # ln(10) at the start (ten classes, untrained); well below it after the steps: it learned.
    assert 2.0 < fp32["loss_first"] < 2.7 and fp32["loss_last"] < 1.5
    assert fp32["seconds_per_step"] > 0 and fp32["steps_per_s"] == pytest.approx(1 / fp32["seconds_per_step"], rel=1e-3)
    assert fp32["steps"] >= 3 and fp32["batch"] == 64
    amp = quick.entry("cnn", device="cpu", precision="amp")
    assert amp["policy"] == "mixed_bfloat16" and amp["error"] is None
    assert amp["loss_decreased"] is True and amp["seconds_per_step"] > 0


def test_quick_progress_lines_parse_and_are_the_only_stderr(quick):
    assert quick.events, "no progress line"
    for event in quick.events:
        assert set(event) == {"stage", "detail", "done", "total"}
    stages = [e["stage"] for e in quick.events]
    assert stages[0] == "import" and stages[-1] == "done"
    assert "matmul" in stages and "cnn" in stages
    counted = [e for e in quick.events if e["total"] is not None]
    assert [e["done"] for e in counted] == sorted(e["done"] for e in counted)
    assert counted[-1]["done"] == counted[-1]["total"] == len(quick.doc["matmul"]) + len(quick.doc["cnn"])
    # TensorFlow's C++ logs went to the captured fd 2 (and so into log_lines), not to the real stderr.
    assert quick.other_stderr == []
    assert any("oneDNN" in line or "cpu_feature_guard" in line for line in quick.doc["log_lines"])


# --- the budget and Ctrl-C --------------------------------------------------------------------------------------


def test_tiny_budget_skips_the_workloads(framework_python):
    run = run_probe(framework_python, "--mode", "quick", "--budget", "0.5")
    doc = run.doc
    assert run.returncode == 0 and doc["stopped_by"] == "budget" and doc["budget_s"] == 0.5
    assert doc["framework_version"] == "2.21.0" and doc["devices"]  # the import is not skipped: it says what is there
    entries = doc["matmul"] + doc["cnn"]
    assert entries
    for entry in entries:
        assert entry["skipped"].startswith("budget") and entry["error"] is None, entry
        assert entry.get("tflops") is None and entry.get("seconds_per_step") is None
    # Nothing started: no workload's progress line, and the run still ends with "done".
    assert [e["stage"] for e in run.events] == ["import", "devices", "done"]


def test_sigint_after_the_first_progress_line(framework_python):
    run = run_probe(framework_python, "--mode", "quick", interrupt_when=lambda event: True)
    assert run.returncode == 0
    assert run.doc["stopped_by"] == "interrupt" and run.doc["probe_error"] is None
    assert run.doc["framework"] == "tensorflow"
    assert all(e["stage"] != "done" for e in run.events)


def test_sigint_keeps_what_finished(framework_python):
    # The second matmul starting means the first one finished.
    run = run_probe(
        framework_python,
        "--mode",
        "quick",
        interrupt_when=lambda event: event["stage"] == "matmul" and event["done"] == 1,
    )
    doc = run.doc
    assert run.returncode == 0 and doc["stopped_by"] == "interrupt" and doc["probe_error"] is None
    first, *rest = doc["matmul"]
    assert first["tflops"] > 0 and first["skipped"] is None
    for entry in rest + doc["cnn"]:
        assert entry["skipped"] == "interrupted", entry
        assert entry.get("tflops") is None and entry.get("loss_decreased") is None
    assert all(e["stage"] != "cnn" for e in run.events)


# --- devices ------------------------------------------------------------------------------------------------------


def test_gpus_only_on_a_cpu_build_says_why_nothing_ran(framework_python):
    run = run_probe(framework_python, "--mode", "quick", "--devices", "cuda")
    doc = run.doc
    assert run.returncode == 0 and doc["probe_error"] is None
    assert doc["devices"] == [] and doc["matmul"] == [] and doc["cnn"] == []
    assert "no CUDA or ROCm support" in doc["errors"]["cuda"]


def test_the_gpu_copy_code_between_two_logical_cpus(framework_python):
    """The bandwidth/p2p timing code (``copy_gbps``) run for real, with two logical CPUs standing for two devices."""
    script = f"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
sys.path.insert(0, {PROBES_DIR!r})
import _smoke_engine as engine
import _smoke_tf_devices as devices
import _smoke_tf_workloads as smoke
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
gbps, fields = smoke.copy_gbps(
    tf, devices.cpu_device(), "/CPU:0", "/CPU:1", 8 << 20, smoke.MODES["quick"], engine.Clock(60)
)
print(json.dumps({{"gbps": gbps, "repeats": fields["repeats"], "spread": fields["spread"],
                  "same": smoke.same_device(tf, "/job:localhost/replica:0/task:0/device:CPU:1", "/CPU:1"),
                  "other": smoke.same_device(tf, "/job:localhost/replica:0/task:0/device:CPU:0", "/GPU:0")}}))
"""
    out = subprocess.run([framework_python, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["gbps"] > 0 and result["repeats"] >= 3 and result["spread"] >= 0
    assert result["same"] is True and result["other"] is False


# --- no TensorFlow, a broken TensorFlow, bad arguments (real empty venvs, synthetic packages) ----------------------


def test_without_tensorflow(synthetic_venv):
    run = run_probe(synthetic_venv.python, "--mode", "quick")
    doc = run.doc
    assert run.returncode == 0 and doc["probe_error"] is None
    assert doc["installed"] is False and doc["framework_version"] is None
    assert doc["errors"]["import"] == f"tensorflow is not installed in {synthetic_venv.python}"
    assert doc["devices"] == [] and doc["matmul"] == [] and doc["stopped_by"] is None
    assert [e["stage"] for e in run.events] == ["import"]


def test_import_error_is_a_json_answer(synthetic_venv):
    synthetic_venv.add_package(
        "tensorflow",
        """
        # synthetic: a tensorflow whose import prints, then fails the way a missing CUDA library makes it fail
        import os
        print("synthetic banner on stdout")
        os.write(2, b"synthetic: dlopen libcudart.so.12\\n")
        raise ImportError("synthetic: libcudart.so.12: cannot open shared object file: No such file or directory")
    """,
    )
    run = run_probe(synthetic_venv.python, "--mode", "quick")
    doc = run.doc  # the banner did not spoil stdout: it parsed as one document
    assert run.returncode == 0 and doc["probe_error"] is None
    assert doc["installed"] is True and doc["import_ok"] is False
    assert doc["errors"]["import"].startswith("import tensorflow failed: ImportError: synthetic: libcudart.so.12")
    assert "tensorflow/__init__.py" in doc["import_error"]["traceback_tail"]
    assert "synthetic banner on stdout" in doc["log_lines"] and "synthetic: dlopen libcudart.so.12" in doc["log_lines"]
    assert run.other_stderr == []
    assert doc["devices"] == [] and doc["matmul"] == [] and doc["cnn"] == []


def test_runs_under_the_oldest_supported_python():
    import glob

    pythons = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8.*/bin/python3.8")))
    working = [p for p in pythons if subprocess.run([p, "-c", "pass"], capture_output=True, timeout=30).returncode == 0]
    if not working:
        pytest.skip("no working python3.8 here")
    run = run_probe(working[0], "--mode", "quick")
    assert run.doc["python"]["version"].startswith("3.8.") and run.doc["probe_error"] is None
    assert run.doc["installed"] is False


def test_bad_arguments_are_a_json_answer():
    run = run_probe(sys.executable, "--mode", "slow")
    assert run.returncode == 0
    assert run.doc["probe_error"].startswith("bad arguments: argument --mode: invalid choice: 'slow'")
    assert run.doc["framework"] == "tensorflow" and run.events == []
