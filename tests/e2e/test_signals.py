"""Ctrl-C and SIGTERM sent to a real ``gpudoctor check`` in the middle of collecting.

A synthetic ``nvidia-smi`` and a synthetic ``--python`` both hang (each first leaves a file saying it
started, so the signal comes mid-run); the timeouts are far away.  gpudoctor must stop at once, kill
what it started, still print (and write, for --junit-xml) the report of what finished, marked
interrupted, and exit 128 + the signal's number.  Afterwards no process carrying the run's marker
and nothing in its private TMPDIR remains.
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

from tests.helpers.hostile import processes_carrying, write_fake_tool

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="process groups and signals as on Linux")

MARKER_VARIABLE = "GPUDOCTOR_SIGNAL_TEST_MARKER"


def _fake_tool(path: pathlib.Path, started_file: pathlib.Path) -> None:
    """A synthetic program that says it started, then hangs."""
    write_fake_tool(path, f"touch '{started_file}'\nexec sleep 300\n")


def _carrying_marker(marker: str) -> list[psutil.Process]:
    return processes_carrying(MARKER_VARIABLE, marker)


def _wait_for(paths: list[pathlib.Path], limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not all(path.exists() for path in paths):
        assert time.monotonic() < deadline, "the synthetic tools never started"
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_mid_check_stops_at_once_and_reports_what_finished(tmp_path, signum):
    smi_started, python_started = tmp_path / "smi-started", tmp_path / "python-started"
    _fake_tool(tmp_path / "bin" / "nvidia-smi", smi_started)
    venv = tmp_path / "venv"  # synthetic: a torch folder makes the torch probe start at once
    (venv / "lib" / "python3.11" / "site-packages" / "torch").mkdir(parents=True)
    _fake_tool(venv / "bin" / "python", python_started)
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    junit = tmp_path / "report.xml"
    marker = uuid.uuid4().hex
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", TMPDIR=str(private_tmp))
    env[MARKER_VARIABLE] = marker
    argv = [sys.executable, "-m", "gpudoctor", "check", "--format", "json", "--junit-xml", str(junit)]
    argv += ["--timeout", "120", "--probe-timeout", "120", "--python", str(venv / "bin" / "python")]
    argv += ["--frameworks", "torch"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        _wait_for([smi_started, python_started])
        assert any(entry.name.startswith("gpudoctor-probe-") for entry in private_tmp.iterdir())
        os.kill(proc.pid, signum)
        # A hang guard, not a timing: unhandled, the signal would leave it waiting out 120 s timeouts.
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + int(signum), stderr
    report = json.loads(stdout)
    assert report["sections"]["collection"]["interrupted"] is True
    assert report["sections"]["collection"]["signal"] == signum.name
    assert "interrupted" in stderr
    assert 'testsuites name="gpudoctor"' in junit.read_text()
    time.sleep(0.2)  # a process killed a moment ago may still be listed while the kernel tears it down
    assert _carrying_marker(marker) == []
    assert list(private_tmp.iterdir()) == []


def test_the_text_report_is_printed_after_ctrl_c(tmp_path):
    smi_started = tmp_path / "smi-started"
    _fake_tool(tmp_path / "bin" / "nvidia-smi", smi_started)
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1")
    argv = [sys.executable, "-m", "gpudoctor", "check", "--timeout", "120", "--frameworks", "none"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        _wait_for([smi_started])
        os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert "COL001" in stdout
    assert "interrupted by SIGINT" in stderr


def test_sigterm_during_the_smoke_run_stops_it_and_leaves_nothing_behind(tmp_path):
    """The synthetic target Python hangs as the smoke probe: SIGTERM is handled as Ctrl-C is, then exit 143."""
    python_started = tmp_path / "python-started"
    _fake_tool(tmp_path / "venv" / "bin" / "python", python_started)
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    marker = uuid.uuid4().hex
    env = dict(os.environ, TMPDIR=str(private_tmp))
    env[MARKER_VARIABLE] = marker
    argv = [sys.executable, "-m", "gpudoctor", "check", "--smoke", "--format", "json", "--frameworks", "none"]
    argv += ["--timeout", "5", "--python", str(tmp_path / "venv" / "bin" / "python")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        _wait_for([python_started])
        os.kill(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, stderr
    assert json.loads(stdout)["sections"]["collection"]["signal"] == "SIGTERM"
    time.sleep(0.2)
    assert _carrying_marker(marker) == []
    assert list(private_tmp.iterdir()) == []


def test_sigterm_during_gpudoctor_smoke_stops_it_with_its_report(tmp_path):
    """`gpudoctor smoke` itself (not `check --smoke`): the synthetic target Python hangs; SIGTERM → the report, 143."""
    python_started = tmp_path / "python-started"
    _fake_tool(tmp_path / "venv" / "bin" / "python", python_started)
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    marker = uuid.uuid4().hex
    env = dict(os.environ, TMPDIR=str(private_tmp))
    env[MARKER_VARIABLE] = marker
    argv = [sys.executable, "-m", "gpudoctor", "smoke", "--format", "json", "--timeout", "5"]
    argv += ["--python", str(tmp_path / "venv" / "bin" / "python")]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        _wait_for([python_started])
        os.kill(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, stderr
    assert json.loads(stdout)["sections"]["collection"]["signal"] == "SIGTERM"
    time.sleep(0.2)
    assert _carrying_marker(marker) == []
    assert list(private_tmp.iterdir()) == []
