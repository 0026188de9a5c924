"""``gpudoctor check`` as a scheduler hook runs it, through the real CLI in a subprocess: the one-line verdict,
``-q``, the exit codes of node-problem-detector and Nagios (bad usage included), ``--level quick`` (no framework
probe: a synthetic target Python that would leave a file when run is never started), and ``--budget`` against
a synthetic target Python that hangs: the run ends near the budget, not the hang, judged "unknown", with its
report, and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time
import uuid
from typing import Any

import pytest

from tests.helpers.fixtures import fixture_text
from tests.helpers.hostile import processes_carrying, write_fake_tool

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "recorded"
HEALTHY_H100 = RECORDED / "h100-80gb-hbm3-vm"
CPU_CONTAINER = RECORDED / "cpu-container-debian"  # a real snapshot whose verdict is a warning
VERSION_MISMATCH = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"
MARKER_VARIABLE = "GPUDOCTOR_NODE_MODES_TEST_MARKER"
# What the synthetic hanging programs sleep: a run that waited for them would far outlive the hang guards.
HANG_S = 600
# A hang guard, not a timing: every run here ends in seconds, or in about its budget.
GUARD_S = 180

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="process groups and signals as on Linux")


def gpudoctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=False,
        env=env,
    )


@pytest.fixture
def mismatch_snapshot(tmp_path: pathlib.Path) -> pathlib.Path:
    """A snapshot folder holding a real nvidia-smi output: "Driver/library version mismatch"."""
    folder = tmp_path / "mismatch"
    folder.mkdir()
    (folder / "nvidia-smi.txt").write_text(fixture_text(VERSION_MISMATCH), encoding="utf-8")
    return folder


def synthetic_python(path: pathlib.Path, ran_file: pathlib.Path, hang: bool) -> pathlib.Path:
    """A SYNTHETIC target Python (a script: gpudoctor takes any #! script for a wrapper) that leaves
    ``ran_file`` when anything runs it, then hangs or exits."""
    write_fake_tool(path, f"touch '{ran_file}'\n" + (f"exec sleep {HANG_S}\n" if hang else "exit 1\n"))
    return path


def marked_env(tmp_path: pathlib.Path) -> tuple[dict[str, str], str, pathlib.Path]:
    """An environment whose processes carry a marker, and a private TMPDIR (the probes' folders go there)."""
    marker = uuid.uuid4().hex
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(private_tmp), NO_COLOR="1")
    env[MARKER_VARIABLE] = marker
    return env, marker, private_tmp


def leftovers(marker: str) -> list[Any]:
    """The processes still carrying the run's marker, once those killed a moment ago are gone (a hang guard)."""
    deadline = time.monotonic() + 30
    while (alive := processes_carrying(MARKER_VARIABLE, marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def by_code(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["code"]: r for r in report["results"]}


# ---------------------------------------------------------------- the line, -q and the exit codes


def test_format_line_prints_the_verdict_in_one_line() -> None:
    result = gpudoctor("check", "--from", str(HEALTHY_H100), "--format", "line")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("gpudoctor: ok: ")
    assert result.stdout.count("\n") == 1


def test_format_line_names_the_problem_and_exits_1(mismatch_snapshot: pathlib.Path) -> None:
    result = gpudoctor("check", "--from", str(mismatch_snapshot), "--format", "line")
    assert result.returncode == 1
    assert result.stdout.startswith("gpudoctor: DRV002 Driver/library version mismatch")
    assert result.stdout.rstrip("\n").endswith("-> Reboot")


def test_quiet_prints_nothing_and_the_exit_code_says_it(
    mismatch_snapshot: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    junit = tmp_path / "report.xml"
    result = gpudoctor("check", "--from", str(mismatch_snapshot), "-q", "--format", "json", "--junit-xml", str(junit))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "DRV002" in junit.read_text(encoding="utf-8")  # what a CI keeps is still written
    healthy = gpudoctor("check", "--from", str(HEALTHY_H100), "-q")
    assert (healthy.returncode, healthy.stdout) == (0, "")


@pytest.mark.parametrize(
    ("convention", "expected"), [("gpudoctor", (0, 0, 1)), ("npd", (0, 0, 1)), ("nagios", (0, 1, 2))]
)
def test_each_host_reads_its_own_exit_codes(
    convention: str, expected: tuple[int, int, int], mismatch_snapshot: pathlib.Path
) -> None:
    """ok, warning, problem: the healthy H100, the CPU container (a warning), the real version mismatch."""
    codes = tuple(
        gpudoctor("check", "--from", str(snapshot), "-q", "--exit-codes", convention).returncode
        for snapshot in (HEALTHY_H100, CPU_CONTAINER, mismatch_snapshot)
    )
    assert codes == expected


def test_warnings_fail_with_fail_on_warning_in_every_convention() -> None:
    codes = [
        gpudoctor("check", "--from", str(CPU_CONTAINER), "-q", "--fail-on", "warning", "--exit-codes", c).returncode
        for c in ("gpudoctor", "npd", "nagios")
    ]
    assert codes == [1, 1, 2]


def test_the_exit_codes_option_keeps_the_report_on_stdout() -> None:
    result = gpudoctor("check", "--from", str(CPU_CONTAINER), "--format", "json", "--exit-codes", "nagios")
    assert result.returncode == 1
    assert json.loads(result.stdout)["summary"]["worst"] == "warning"


def test_bad_usage_is_unknown_for_nagios_not_critical() -> None:
    for argv in (
        ["check", "--exit-codes", "nagios", "--level", "deep"],  # refused by argparse
        ["check", "--exit-codes=nagios", "--no-such-option"],  # refused by the top parser
        ["check", "--from", str(HEALTHY_H100), "--select", "NOPE999", "--exit-codes", "nagios"],  # by the command
    ):
        result = gpudoctor(*argv)
        assert result.returncode == 3, (argv, result.stderr)
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    plain = gpudoctor("check", "--level", "deep")
    assert plain.returncode == 2
    npd = gpudoctor("check", "--from", str(HEALTHY_H100), "--select", "NOPE999", "--exit-codes", "npd")
    assert npd.returncode == 2


def test_quick_refuses_the_smoke_workloads() -> None:
    result = gpudoctor("check", "--level", "quick", "--smoke", "--frameworks", "none")
    assert result.returncode == 2
    assert "--level full" in result.stderr


def test_a_budget_does_not_touch_a_snapshot() -> None:
    result = gpudoctor("check", "--from", str(HEALTHY_H100), "--budget", "0.5", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "collection" not in json.loads(result.stdout)["sections"]


# ---------------------------------------------------------------- live: the level and the budget


@linux_only
def test_quick_runs_no_framework_probe_unless_frameworks_names_one(tmp_path: pathlib.Path) -> None:
    ran = tmp_path / "python-ran"
    python = synthetic_python(tmp_path / "venv" / "bin" / "python", ran, hang=False)
    result = gpudoctor("check", "--level", "quick", "--python", str(python), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert not ran.exists(), "--level quick started the target Python"
    assert report["sections"]["collection"]["level"] == "quick"
    assert report["machine"]["python"] is None  # no interpreter was examined
    assert by_code(report)["FW001"]["status"] == "not_applicable"
    named = gpudoctor("check", "--level", "quick", "--frameworks", "torch", "--python", str(python), "--format", "json")
    assert ran.exists(), "--frameworks torch names a probe, which --level quick keeps"
    assert by_code(json.loads(named.stdout))["TORCH001"]["status"] != "not_applicable"


@linux_only
def test_the_budget_stops_hanging_smoke_workloads_and_leaves_nothing(tmp_path: pathlib.Path) -> None:
    """--level full with a synthetic target Python that hangs as the smoke probe: the watchdog stops it at the
    budget (its own limit would be the smoke budget + 20 s, the hang 600 s)."""
    started = tmp_path / "smoke-started"
    python = synthetic_python(tmp_path / "venv" / "bin" / "python", started, hang=True)
    env, marker, private_tmp = marked_env(tmp_path)
    argv = ["check", "--level", "full", "--frameworks", "none", "--python", str(python), "--budget", "8"]
    result = gpudoctor(*argv, "--format", "json", "--exit-codes", "npd", env=env)
    assert result.returncode == 2, result.stderr  # npd: unknown
    assert started.exists(), "the smoke workloads never started"
    report = json.loads(result.stdout)
    collection = report["sections"]["collection"]
    assert collection["level"] == "full" and collection["budget_s"] == 8
    assert collection["stopped"] == "the 8 s budget ran out"
    assert collection["not_finished"] == ["smoke.json"]
    assert by_code(report)["SMOKE001"]["status"] == "not_applicable"  # stopped is not "crashed"
    assert "the 8 s budget ran out" in result.stderr
    assert leftovers(marker) == []
    assert list(private_tmp.iterdir()) == []


@linux_only
def test_the_budget_stops_a_hanging_framework_probe_and_the_node_is_unknown(tmp_path: pathlib.Path) -> None:
    started = tmp_path / "probe-started"
    venv = tmp_path / "venv"  # synthetic: a torch folder makes the torch probe start at once
    (venv / "lib" / "python3.11" / "site-packages" / "torch").mkdir(parents=True)
    python = synthetic_python(venv / "bin" / "python", started, hang=True)
    env, marker, private_tmp = marked_env(tmp_path)
    argv = ["check", "--frameworks", "torch", "--python", str(python), "--timeout", "300", "--probe-timeout", "300"]
    result = gpudoctor(*argv, "--budget", "5", "--format", "line", "--exit-codes", "nagios", env=env)
    assert result.returncode == 3, result.stderr  # nagios: UNKNOWN
    assert started.exists()
    assert result.stdout == "gpudoctor: not judged: the 5 s budget ran out\n"
    assert leftovers(marker) == []
    assert list(private_tmp.iterdir()) == []
