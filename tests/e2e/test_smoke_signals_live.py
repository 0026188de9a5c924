"""Ctrl-C and SIGTERM sent to a real `gpudoctor smoke` running the real torch CPU build, in each phase.

The target Python is the real framework venv (``GPUDOCTOR_FRAMEWORK_PYTHON``, torch CPU); without it the
tests skip, saying why.  The signal is sent while the probe imports torch (as soon as the probe process
exists, before torch's libraries are mapped) or while it measures (once it has used seconds of CPU time,
far more than the import takes).  Those are triggers only: nothing is asserted about time.  gpudoctor must
exit 130 (SIGINT) or 143 (SIGTERM) with the JSON report of what finished, marked interrupted, and leave no
probe process behind.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc as on Linux")


def _probe_of(proc: subprocess.Popen[str]) -> psutil.Process | None:
    """The smoke probe started by ``proc`` (not a rank process of its distributed part), if it runs yet."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return None
    for child in children:
        try:
            argv = child.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if any(arg.endswith("smoke_torch.py") for arg in argv) and "--rank" not in argv:
            return child
    return None


def _torch_loaded(probe: psutil.Process) -> bool:
    try:
        return "libtorch" in pathlib.Path(f"/proc/{probe.pid}/maps").read_text(errors="replace")
    except OSError:
        return True  # gone: let the caller go on to the signal and the checks


def _cpu_seconds(probe: psutil.Process) -> float:
    try:
        times = probe.cpu_times()
    except psutil.NoSuchProcess:
        return float("inf")
    return float(times.user + times.system)


def _wait_until(condition, what: str, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("phase", ["import", "workloads"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_in_each_phase_exits_with_its_code_and_the_partial_report(framework_python, phase, signum):
    argv = [sys.executable, "-m", "gpudoctor", "smoke", "--quick", "--format", "json"]
    argv += ["--python", framework_python, "--timeout", "120"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    probe: psutil.Process | None = None
    try:
        _wait_until(lambda: _probe_of(proc) is not None or proc.poll() is not None, "the smoke probe start")
        probe = _probe_of(proc)
        assert probe is not None, "gpudoctor ended before its probe started"
        if phase == "import":
            # Sent before torch's libraries are in the probe: the import is what is interrupted.
            if _torch_loaded(probe):
                pytest.skip("torch was already loaded when the probe was first seen (a very fast import)")
        else:
            # Several CPU seconds: the import (about one) is long done, the workloads are running.
            _wait_until(lambda: _cpu_seconds(probe) > 4.0 or proc.poll() is not None, "the workloads run")
            assert proc.poll() is None, "the smoke run ended before it could be interrupted"
        os.kill(proc.pid, signum)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + int(signum), stderr[-2000:]
    report = json.loads(stdout)
    assert report["sections"]["collection"]["signal"] == signum.name
    codes = {result["id"] for result in report["results"] if result.get("id")} or None
    assert len(report["results"]) == 6, codes  # every SMOKE check still judged what finished
    assert f"interrupted by {signum.name}" in stderr
    if probe is not None:
        probe_gone = not probe.is_running() or probe.status() == psutil.STATUS_ZOMBIE
        assert probe_gone, "the smoke probe outlived gpudoctor"
