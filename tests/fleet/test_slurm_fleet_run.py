"""``gpudoctor fleet run --slurm`` and ``slurm-healthcheck`` run by hand, against the real local Slurm cluster
(no hooks configured).  node2's snapshot holds a real driver/library mismatch; node1/node3 a recorded H100."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import pytest

from tests.fleet.slurm_cluster import GPUDOCTOR, HEALTHY_SNAPSHOT, SlurmCluster, make_snapshots, slurm_cluster

__all__ = ["slurm_cluster"]  # the session fixture, imported for pytest


@pytest.fixture(scope="module")
def plain(
    slurm_cluster: SlurmCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SlurmCluster, pathlib.Path]]:
    slurm_cluster.configure()
    snaps = make_snapshots(tmp_path_factory.mktemp("slurm-plain"))
    yield slurm_cluster, snaps
    slurm_cluster.resume_all()


def _fleet_run(cluster: SlurmCluster, snaps: pathlib.Path, out: pathlib.Path, *more: str) -> tuple[int, str]:
    done = cluster.gpudoctor("fleet", "run", "--slurm", "-o", str(out), "--from", f"{snaps}/{{node}}", *more)
    return done.returncode, done.stderr


def test_fleet_run_gathers_three_reports_and_node2_has_the_problem(
    plain: tuple[SlurmCluster, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    cluster, snaps = plain
    code, stderr = _fleet_run(cluster, snaps, tmp_path / "out")
    assert code == 1, stderr
    reports = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out").glob("node*.json")}
    assert sorted(reports) == ["node1", "node2", "node3"], stderr
    assert reports["node2"]["summary"]["exit_code"] == 1
    assert any(r["code"] == "DRV002" and r["status"] == "problem" for r in reports["node2"]["results"])
    assert reports["node1"]["summary"]["exit_code"] == 0 and reports["node3"]["summary"]["exit_code"] == 0
    assert json.loads((tmp_path / "out" / "fleet-missing.json").read_text()) == {"missing": []}
    assert "node2: report gathered (exit code 1)" in stderr
    assert "3 of 3 nodes answered" in stderr


def test_a_64_kb_report_crosses_srun_whole(plain: tuple[SlurmCluster, pathlib.Path], tmp_path: pathlib.Path) -> None:
    """The recorded H100 report is ~64 KB: 100+ frames of 512 characters through srun's labelled output, each
    checked by the SHA-256; the gathered file reads as `check --format json` writes it on that node."""
    cluster, snaps = plain
    _fleet_run(cluster, snaps, tmp_path / "out", "--nodes", "node1")
    gathered = (tmp_path / "out" / "node1.json").read_text()
    assert len(gathered) > 50_000
    local = cluster.run([*GPUDOCTOR, "check", "--from", str(HEALTHY_SNAPSHOT), "--format", "json"])
    mine, theirs = json.loads(gathered), json.loads(local.stdout)
    for report in (mine, theirs):
        for result in report["results"]:
            result.pop("duration_s", None)
        report.get("source", {}).pop("collected_s", None)
    assert [(r["code"], r["status"], r["findings"]) for r in mine["results"]] == [
        (r["code"], r["status"], r["findings"]) for r in theirs["results"]
    ]
    assert mine["machine"] == theirs["machine"]


def test_a_node_drained_by_someone_else_is_not_checked_and_never_resumed(
    plain: tuple[SlurmCluster, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    cluster, snaps = plain
    cluster.run(["scontrol", "update", "nodename=node3", "state=drain", "reason=maintenance"])
    try:
        code, stderr = _fleet_run(cluster, snaps, tmp_path / "out")
        assert code == 1
        assert "node3: no report: not checked: drained (maintenance)" in stderr
        missing = json.loads((tmp_path / "out" / "fleet-missing.json").read_text())["missing"]
        assert missing == [{"node": "node3", "why": "not checked: drained (maintenance)"}]
        # The health check on that node: healthy or not, the drain is the maintainer's.
        for snapshot, expected in ((snaps / "node1", 0), (snaps / "node2", 1)):
            done = cluster.gpudoctor("slurm-healthcheck", "--node", "node3", "--from", str(snapshot))
            assert done.returncode == expected, done.stderr
            assert "by someone else (reason: maintenance)" in done.stderr
            assert cluster.node("node3").reason == "maintenance"
            assert cluster.node("node3").out_of_service
    finally:
        cluster.resume_all()


def test_healthcheck_by_hand_drains_updates_and_resumes_its_own_drain(plain: tuple[SlurmCluster, pathlib.Path]) -> None:
    cluster, snaps = plain
    broken = ["slurm-healthcheck", "--node", "node2", "--from", f"{snaps}/{{node}}"]
    try:
        dry = cluster.gpudoctor(*broken, "--dry-run")
        assert dry.returncode == 1 and "would drain the node: gpudoctor: DRV002" in dry.stderr
        assert not cluster.node("node2").out_of_service
        drained = cluster.gpudoctor(*broken)
        assert drained.returncode == 1, drained.stderr
        reason = cluster.node("node2").reason or ""
        assert reason.startswith("gpudoctor: DRV002 Driver/library version mismatch")
        listed = cluster.run(["sinfo", "-h", "-R", "-o", "%n|%E"]).stdout
        assert f"node2|{reason}" in listed
        # An older reason of ours is replaced by the current one.
        cluster.run(["scontrol", "update", "nodename=node2", "state=drain", "reason=gpudoctor: an older finding"])
        cluster.gpudoctor(*broken)
        assert cluster.node("node2").reason == reason
        healthy = cluster.gpudoctor("slurm-healthcheck", "--node", "node2", "--from", str(snaps / "node1"))
        assert healthy.returncode == 0 and "resumed" in healthy.stderr
        assert not cluster.node("node2").out_of_service
    finally:
        cluster.resume_all()


def test_fleet_run_refuses_unknown_nodes_and_existing_reports(
    plain: tuple[SlurmCluster, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    cluster, snaps = plain
    code, stderr = _fleet_run(cluster, snaps, tmp_path / "a", "--nodes", "node[1-4]")
    assert code == 2 and "Slurm knows no node 'node4'" in stderr
    assert _fleet_run(cluster, snaps, tmp_path / "b", "--nodes", "node[1,3]")[0] == 0
    code, stderr = _fleet_run(cluster, snaps, tmp_path / "b", "--nodes", "node[1,3]")
    assert code == 2 and "--force" in stderr
