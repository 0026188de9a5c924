"""Hostile tools on PATH: a synthetic ``nvidia-smi`` that hangs, spews without end, double-forks away with
``setsid`` keeping stdout open, or crashes; a synthetic framework that prints without end while imported;
a synthetic ``--python`` that never starts.  ``gpudoctor check`` runs as a real subprocess with a private
TMPDIR and a marker in its environment; after it no process carries the marker and TMPDIR is empty.

No tight timing asserts: each run must finish (the subprocess limit is generous), bounds are loose.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid

import psutil
import pytest

from gpudoctor.evidence.collect import collect
from gpudoctor.evidence.framework_probes import MAX_CAPTURE_BYTES, run_probe
from gpudoctor.evidence.run_command import run_command
from gpudoctor.evidence.sources import SOURCES
from gpudoctor.evidence.target_python import TargetPython
from tests.helpers.hostile import processes_carrying, write_fake_tool

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups, setsid and prlimit as on Linux")

MARKER_VARIABLE = "GPUDOCTOR_HOSTILE_TEST_MARKER"

SYNTHETIC_SPEWING_SMI = 'exec yes "synthetic spew line from a fake nvidia-smi"\n'
SYNTHETIC_HANGING_SMI = "exec sleep 300\n"
SYNTHETIC_CRASHING_SMI = 'echo "synthetic: about to crash"\nkill -SEGV $$\n'
# The grandchild leaves our session and keeps the inherited stdout (our pipe) open for 300 s.
SYNTHETIC_DAEMONIZING_SMI = "setsid sleep 300 &\necho synthetic-started\nexit 0\n"


# Runs the command given after the file name, then writes the largest resident size of its children (the command)
# to that file and exits with the command's status.
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code if code >= 0 else 128 - code)\n"
)


def _fake_tool(folder: pathlib.Path, name: str, body: str) -> None:
    write_fake_tool(folder / name, body)


def _carrying_marker(marker: str) -> list[psutil.Process]:
    return processes_carrying(MARKER_VARIABLE, marker)


def _run_check(tmp_path: pathlib.Path, fake_bin: pathlib.Path, *args: str) -> tuple[int, dict[str, object], int]:
    """``gpudoctor check --format json`` with ``fake_bin`` first on PATH: (exit code, report, peak RSS in KB).

    The peak is gpudoctor's own, measured by a small Python in between: a child's ru_maxrss starts from the
    memory of the process it was forked from, so a child of pytest itself (hundreds of MB after thousands of
    tests) would report pytest's size, not gpudoctor's.
    """
    marker = uuid.uuid4().hex
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}", TMPDIR=str(private_tmp))
    env[MARKER_VARIABLE] = marker
    peak_file = tmp_path / "peak-rss-kb"
    proc = subprocess.Popen(
        [sys.executable, "-c", _MEASURE, str(peak_file), sys.executable, "-m", "gpudoctor", "check", "--format", "json"]
        + list(args),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    output = proc.stdout.read()  # ends when gpudoctor (and all that holds its stdout) is gone
    proc.wait()
    time.sleep(0.2)  # a process killed a moment ago may still be listed while the kernel tears it down
    assert _carrying_marker(marker) == [], "a process of the run outlived it"
    assert list(private_tmp.iterdir()) == [], "the run left files in TMPDIR"
    return proc.returncode, json.loads(output), int(peak_file.read_text(encoding="utf-8"))


def _result(report: dict[str, object], code: str) -> dict[str, object]:
    results = report["results"]
    assert isinstance(results, list)
    return next(r for r in results if r["code"] == code)


def test_a_spewing_nvidia_smi_is_cut_off_with_bounded_memory_and_time(tmp_path):
    _fake_tool(tmp_path / "bin", "nvidia-smi", SYNTHETIC_SPEWING_SMI)
    # No wall-clock bound here (timings belong to benchmarks; the note gives them): the run ends, by the
    # timeout, with the memory bounded and the spewing source cut and named.
    exit_code, report, peak_kb = _run_check(tmp_path, tmp_path / "bin", "--timeout", "2", "--frameworks", "none")
    assert exit_code in (0, 1)
    assert peak_kb < 200 * 1024, f"peak RSS {peak_kb / 1024:.0f} MB"
    assert "nvidia-smi" in json.dumps(_result(report, "COL001"))


def test_a_grandchild_that_calls_setsid_and_keeps_stdout_open_does_not_hang_check(tmp_path):
    _fake_tool(tmp_path / "bin", "nvidia-smi", SYNTHETIC_DAEMONIZING_SMI)
    exit_code, _report, _peak = _run_check(tmp_path, tmp_path / "bin", "--timeout", "30", "--frameworks", "none")
    assert exit_code in (0, 1)  # and _run_check found no sleep of the run left


def test_a_hanging_nvidia_smi_is_stopped_and_reported(tmp_path):
    _fake_tool(tmp_path / "bin", "nvidia-smi", SYNTHETIC_HANGING_SMI)
    exit_code, report, _peak = _run_check(tmp_path, tmp_path / "bin", "--timeout", "2", "--frameworks", "none")
    assert exit_code in (0, 1)
    assert "nvidia-smi.txt" in json.dumps(_result(report, "COL001")["data"])


def test_a_crashing_nvidia_smi_is_a_finding_not_a_crash_of_gpudoctor(tmp_path):
    _fake_tool(tmp_path / "bin", "nvidia-smi", SYNTHETIC_CRASHING_SMI)
    exit_code, report, _peak = _run_check(tmp_path, tmp_path / "bin", "--timeout", "5", "--frameworks", "none")
    assert exit_code in (0, 1)
    assert f"signal {int(signal.SIGSEGV)}" in json.dumps(_result(report, "COL001"))


def test_output_past_the_cap_is_dropped_and_the_item_says_so():
    item = run_command("synthetic-spew", ["yes", "synthetic"], timeout=1, max_output=1000)
    assert len(item.text or "") == 1000
    assert "stdout cut at 1000 bytes" in item.stderr


def test_a_framework_import_that_prints_without_end_cannot_fill_tmpdir(tmp_path, monkeypatch):
    """A synthetic ``torch`` whose import writes to fd 1 forever: the probe's capture file stops at its cap."""
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(
        "import os\nwhile True:\n    os.write(1, b'synthetic spew from a fake torch import\\n' * 1000)\n"
    )
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(private_tmp))
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    item = run_probe("torch", sys.executable, timeout=60, base_env=env)
    record = item.json()
    assert isinstance(record, dict)
    assert not item.timed_out
    assert record["import_ok"] is False
    assert "File too large" in record["import_error"]["message"]  # the write past MAX_CAPTURE_BYTES failed
    assert MAX_CAPTURE_BYTES <= 64_000_000
    assert list(private_tmp.iterdir()) == []


def test_a_python_that_never_starts_costs_the_timeout_not_the_probe_timeout(tmp_path):
    """A synthetic venv whose interpreter hangs, with a torch folder (so torch is probed at once, as heavy)."""
    venv = tmp_path / "venv"
    (venv / "lib" / "python3.11" / "site-packages" / "torch").mkdir(parents=True)
    _fake_tool(venv / "bin", "python", "exec sleep 300\n")
    probe_sources = [s for s in SOURCES if s.probe in ("torch", "jax")]
    evidence = collect(
        timeout=1,
        sources=probe_sources,
        target=TargetPython(str(venv / "bin" / "python"), "--python"),
        frameworks=["torch", "jax"],
        probe_timeout=120,
    )
    # Stopped at the interpreter's 1 s start-up limit, not the 120 s probe timeout: the error says which.
    for name in ("framework-torch.json", "framework-jax.json"):
        item = evidence.items[name]
        assert item.timed_out
        assert item.error is not None and "did not start within 1 s" in item.error, item.error
        assert "import" not in item.error.split(";")[0]  # the interpreter is to blame, not an import
