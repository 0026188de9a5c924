"""``gpudoctor slurm-healthcheck`` as slurmd runs it: the wrapper printed by ``gpudoctor fleet slurm-config
--wrapper-only`` (exactly as printed; only its --from names the test's snapshots) installed as Prolog, then
as HealthCheckProgram, in the real local Slurm cluster.  slurmd gives the hook an empty environment: the
wrapper's PATH and gpudoctor's search for scontrol must do."""

from __future__ import annotations

import os
import pathlib

from tests.fleet.slurm_cluster import SlurmCluster, fix_snapshot, make_snapshots, slurm_cluster

__all__ = ["slurm_cluster"]  # the session fixture, imported for pytest


def _write_wrapper(cluster: SlurmCluster, root: pathlib.Path, snaps: pathlib.Path) -> str:
    printed = cluster.gpudoctor("fleet", "slurm-config", "--wrapper-only", "--from", f"{snaps}/{{node}}")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("#!/bin/sh\n")
    wrapper = root / "gpudoctor-healthcheck"
    wrapper.write_text(printed.stdout)
    os.chmod(wrapper, 0o755)
    return str(wrapper)


def _drain_reason(cluster: SlurmCluster, node: str) -> str | None:
    """The reason `sinfo -R` shows for ``node`` (None when it lists none)."""
    for line in cluster.run(["sinfo", "-h", "-R", "-o", "%n|%E"], timeout=60).stdout.splitlines():
        name, _, reason = line.partition("|")
        if name == node:
            return reason
    return None


def test_the_wrapper_as_prolog_fails_the_launch_on_node2_only(
    slurm_cluster: SlurmCluster, tmp_path: pathlib.Path
) -> None:
    snaps = make_snapshots(tmp_path)
    slurm_cluster.configure(prolog=_write_wrapper(slurm_cluster, tmp_path, snaps))
    try:
        launched = slurm_cluster.run(["srun", "-N3", "--kill-on-bad-exit=0", "hostname"], cwd=str(tmp_path))
        # Slurm aborts the whole step when one node's Prolog fails (whether node1/node3 printed first is a race).
        assert launched.returncode != 0
        assert "failed on node node2: Job prolog failed" in launched.stderr, launched.stderr
        reason = _drain_reason(slurm_cluster, "node2") or ""
        assert reason.startswith("gpudoctor: DRV002 Driver/library version mismatch"), reason
        assert not slurm_cluster.node("node1").out_of_service and not slurm_cluster.node("node3").out_of_service
        # The next job gets the two healthy nodes, whose Prolog passes.
        again = slurm_cluster.run(["srun", "-N2", "hostname"], cwd=str(tmp_path))
        assert again.returncode == 0 and sorted(again.stdout.split()) == ["node1", "node3"], again.stderr
        # fleet run then leaves node2 out, saying why; the others answer.
        out = tmp_path / "out"
        done = slurm_cluster.gpudoctor("fleet", "run", "--slurm", "-o", str(out), "--from", f"{snaps}/{{node}}")
        assert done.returncode == 1
        assert f"node2: no report: not checked: drained ({reason})" in done.stderr
        assert sorted(p.name for p in out.glob("node*.json")) == ["node1.json", "node3.json"]
    finally:
        slurm_cluster.resume_all()


def test_the_wrapper_as_healthcheck_drains_node2_then_resumes_it_once_fixed(
    slurm_cluster: SlurmCluster, tmp_path: pathlib.Path
) -> None:
    snaps = make_snapshots(tmp_path)
    slurm_cluster.configure(healthcheck=_write_wrapper(slurm_cluster, tmp_path, snaps))
    try:
        slurm_cluster.wait_for(
            "the health check to drain node2",
            lambda: (_drain_reason(slurm_cluster, "node2") or "").startswith("gpudoctor: DRV002"),
        )
        assert _drain_reason(slurm_cluster, "node1") is None and _drain_reason(slurm_cluster, "node3") is None
        # Someone else drains node3, whose snapshot is healthy: the health check must leave it drained.
        slurm_cluster.run(["scontrol", "update", "nodename=node3", "state=drain", "reason=maintenance"])
        fix_snapshot(snaps / "node2")
        slurm_cluster.wait_for(
            "the health check to resume node2", lambda: _drain_reason(slurm_cluster, "node2") is None
        )
        assert not slurm_cluster.node("node2").out_of_service
        node3 = slurm_cluster.node("node3")
        assert node3.out_of_service and node3.reason == "maintenance"
    finally:
        slurm_cluster.configure()  # back to no hooks for whatever runs next
        slurm_cluster.resume_all()


def test_the_wrapper_finds_scontrol_with_an_empty_environment(
    slurm_cluster: SlurmCluster, tmp_path: pathlib.Path
) -> None:
    """The wrapper run by hand the way slurmd runs it: no PATH, only SLURMD_NODENAME (and SLURM_CONF, which
    the local cluster's hook wrapper adds as a real node's /etc/slurm/slurm.conf would)."""
    snaps = make_snapshots(tmp_path)
    wrapper = _write_wrapper(slurm_cluster, tmp_path, snaps)
    env = {"SLURMD_NODENAME": "node2", "SLURM_CONF": slurm_cluster.env["SLURM_CONF"]}
    try:
        done = slurm_cluster.run(["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()), wrapper])
        assert done.returncode == 1, done.stderr
        assert "drained" in done.stderr
        assert (slurm_cluster.node("node2").reason or "").startswith("gpudoctor: DRV002")
    finally:
        slurm_cluster.resume_all()
