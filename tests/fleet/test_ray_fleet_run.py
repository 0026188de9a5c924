"""``gpudoctor fleet run --ray`` against the real local Ray cluster (3 nodes): reports gathered per node, a node
that does not answer in the budget reported as such, a bad address one line."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fleet.ray_cluster import GPUDOCTOR_CLI, RayCluster, make_ray_snapshots, ray_cluster

__all__ = ["ray_cluster"]  # the session fixture, imported for pytest


@pytest.fixture(scope="module")
def snaps(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return make_ray_snapshots(tmp_path_factory.mktemp("ray-snaps"))


def synthetic_hang_wrapper(folder: pathlib.Path, hang_on: str) -> tuple[pathlib.Path, pathlib.Path]:
    """A synthetic ``--gpudoctor`` stand-in: on ``hang_on`` it never answers (it records its PID and sleeps),
    on every other node it is gpudoctor.  Returns the script and its PID file."""
    pid_file = folder / f"synthetic-hang-{hang_on}.pid"
    script = folder / "synthetic-hang-wrapper"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$(hostname)" = {hang_on} ]; then echo $$ > {pid_file}; exec sleep 600; fi\n'
        f'exec {sys.executable} -m gpudoctor "$@"\n'
    )
    script.chmod(0o755)
    return script, pid_file


def without_durations(value: Any) -> Any:
    """A report with its timings blanked (the one thing two runs of the same check never share)."""
    if isinstance(value, dict):
        return {k: None if k == "duration_s" else without_durations(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_durations(v) for v in value]
    return value


def wait_gone(pid: int, timeout: float = 60) -> bool:
    """Whether process ``pid`` ends (or is a zombie waiting for its reaper) within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def out_dir(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    yield tmp_path / "reports"


def test_fleet_run_gathers_one_report_per_node(
    ray_cluster: RayCluster, snaps: pathlib.Path, out_dir: pathlib.Path
) -> None:
    done = ray_cluster.fleet_run(
        "--ray", ray_cluster.address, "-o", str(out_dir), "--level", "quick", "--from", f"{snaps}/{{node}}"
    )
    assert done.returncode == 1, done.stderr  # node2 has a problem
    assert sorted(os.listdir(out_dir)) == ["fleet-missing.json", "node1.json", "node2.json", "node3.json"]
    assert json.loads((out_dir / "fleet-missing.json").read_text()) == {"missing": []}
    reports = {n: json.loads((out_dir / f"{n}.json").read_text()) for n in ("node1", "node2", "node3")}
    assert {n: r["summary"]["exit_code"] for n, r in reports.items()} == {"node1": 0, "node2": 1, "node3": 0}
    codes = {f["code"] for r in reports["node2"]["results"] for f in r["findings"] if f["severity"] == "problem"}
    assert "DRV002" in codes
    # The same JSON as `check --format json` on that node's snapshot (timings aside).
    check = subprocess.run(
        [GPUDOCTOR_CLI, "check", "--from", str(snaps / "node1"), "--format", "json", "--level", "quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stderr
    assert without_durations(reports["node1"]) == without_durations(json.loads(check.stdout))
    assert "node2: report gathered (exit code 1)" in done.stderr
    assert "3 of 3 nodes answered" in done.stderr
    assert done.stdout == ""  # nothing of Ray's on our streams


def test_fleet_run_refuses_to_replace_reports_without_force(
    ray_cluster: RayCluster, snaps: pathlib.Path, out_dir: pathlib.Path
) -> None:
    out_dir.mkdir()
    (out_dir / "node2.json").write_text("mine\n")
    done = ray_cluster.fleet_run(
        "--ray", ray_cluster.address, "-o", str(out_dir), "--level", "quick", "--from", f"{snaps}/{{node}}"
    )
    assert done.returncode == 2
    assert "--force" in done.stderr
    assert (out_dir / "node2.json").read_text() == "mine\n"


def test_a_node_that_does_not_answer_in_the_budget_is_reported_and_stopped(
    ray_cluster: RayCluster, snaps: pathlib.Path, out_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    wrapper, pid_file = synthetic_hang_wrapper(tmp_path, hang_on="node3")
    started = time.monotonic()
    done = ray_cluster.fleet_run(
        "--ray", ray_cluster.address, "-o", str(out_dir), "--level", "quick", "--budget", "3",
        "--from", f"{snaps}/{{node}}", "--gpudoctor", str(wrapper),
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert sorted(os.listdir(out_dir)) == ["fleet-missing.json", "node1.json", "node2.json"]
    missing = json.loads((out_dir / "fleet-missing.json").read_text())["missing"]
    assert [m["node"] for m in missing] == ["node3"]
    assert missing[0]["why"].startswith("did not answer within 8 s")  # budget 3 s + 5 s on the node
    assert "node3: no report: did not answer within 8 s" in done.stderr
    assert took < 120, f"the run took {took:.0f} s for a 3 s budget"
    assert wait_gone(int(pid_file.read_text())), "the hung command on node3 was left running"


def test_a_task_still_out_at_the_deadline_is_cancelled(ray_cluster: RayCluster, tmp_path: pathlib.Path) -> None:
    """The driver's own deadline, shorter here than the node's limit, so the driver must cancel the task."""
    wrapper, pid_file = synthetic_hang_wrapper(tmp_path, hang_on="node3")
    driver = (
        "import json, sys\n"
        "from gpudoctor.fleet.ray_connect import connect, import_ray, list_nodes\n"
        "from gpudoctor.fleet.ray_run import check_nodes\n"
        "ray = import_ray()\n"
        "connect(ray, sys.argv[1])\n"
        "node3 = [n for n in list_nodes(ray) if n.hostname == 'node3']\n"
        "outcomes = check_nodes(ray, node3, [sys.argv[2], 'fleet', 'node-check'], node_timeout_s=300, deadline_s=4)\n"
        "print(json.dumps([[o.node, o.failure] for o in outcomes]))\n"
        "ray.shutdown()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", driver, ray_cluster.address, str(wrapper)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["node3", "did not answer within 4 s; its Ray task was cancelled"]]
    assert took < 60, f"the driver took {took:.0f} s for a 4 s deadline"
    assert wait_gone(int(pid_file.read_text())), "cancelling the task left its command running on node3"


def test_a_bad_address_is_one_line_and_exit_2(ray_cluster: RayCluster, tmp_path: pathlib.Path) -> None:
    # Loopback, a port nothing listens on: never a new local cluster, never minutes of Ray's retries.
    host, port = ray_cluster.address.rsplit(":", 1)
    started = time.monotonic()
    done = ray_cluster.fleet_run("--ray", f"{host}:{int(port) + 99}", "-o", str(tmp_path / "r"), timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Ray cluster at" in lines[0], done.stderr
    assert done.stdout == ""
    assert took < 60
