"""The real local Slurm cluster for fleet tests (``../shared/tools/slurm-local``), started once per session.

Three slurmd nodes (node1..node3), each in its own UTS namespace, on loopback.  Every node diagnoses its own
snapshot, ``snaps/<node>``: node1 and node3 a copy of the recorded H100 VM (in the repo), node2 a folder
holding a real nvidia-smi "Driver/library version mismatch" capture (../shared/fixtures).  Tests that need
other hooks call :meth:`SlurmCluster.configure` (a restart, ~3 s; the same settings again cost nothing),
so modules group their tests by hook settings.

Import the fixture into a test module with ``from tests.fleet.slurm_cluster import slurm_cluster``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from gpudoctor.fleet.slurm_state import SlurmNode, parse_scontrol_node
from tests.helpers.fixtures import REPO, real_fixtures_dir, xdist_worker

TOOLS = REPO.parent / "shared" / "tools" / "slurm-local"
HEALTHY_SNAPSHOT = REPO / "tests" / "recorded" / "h100-80gb-hbm3-vm"
# A real capture: nvidia-smi after a driver upgrade without a reboot (see ../shared/fixtures/INDEX.md).
MISMATCH_CAPTURE = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"
NEEDED = ("unshare", "slurmd", "slurmctld", "munged", "srun", "sinfo", "scontrol")
GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


@dataclass
class SlurmCluster:
    state_dir: str
    port: int
    env: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] | None = None

    def configure(self, **hooks: str) -> None:
        """``up`` with these SLURM_LOCAL_* settings (prolog=..., healthcheck=...): a no-op when unchanged."""
        settings = {f"SLURM_LOCAL_{key.upper()}": value for key, value in hooks.items()}
        if settings == self.settings:
            return
        env = {**os.environ, "SLURM_LOCAL_DIR": self.state_dir, "SLURM_LOCAL_PORT": str(self.port), **settings}
        for name in ("SLURM_LOCAL_PROLOG", "SLURM_LOCAL_EPILOG", "SLURM_LOCAL_HEALTHCHECK"):
            if name not in settings:
                env.pop(name, None)
        done = subprocess.run(["bash", str(TOOLS / "up")], env=env, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise RuntimeError(f"slurm-local/up failed: {done.stderr[-3000:]}")
        export = done.stdout.strip().splitlines()[-1]  # "export SLURM_CONF=/tmp/.../slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": export.split("=", 1)[1]}
        self.settings = settings

    def run(self, argv: list[str], timeout: float = 300, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, cwd=cwd)

    def gpudoctor(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.run([*GPUDOCTOR, *args], timeout=timeout)

    def node(self, name: str) -> SlurmNode:
        shown = self.run(["scontrol", "show", "node", "-o", name], timeout=60)
        node = parse_scontrol_node(shown.stdout, name)
        assert node is not None, f"scontrol show node {name}: {shown.stdout!r} {shown.stderr!r}"
        return node

    def wait_for(self, what: str, condition: Callable[[], bool], timeout: float = 120) -> None:
        """Poll ``condition`` until it holds (generous timeouts: the hooks run every 5 s on a busy box)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout:g} s for {what}")
            time.sleep(0.5)

    def resume_all(self) -> None:
        """Put every node back in service (a test's drains must not leak into the next test)."""
        for name in ("node1", "node2", "node3"):
            if self.node(name).out_of_service:
                self.run(["scontrol", "update", f"nodename={name}", "state=resume"], timeout=60)


def make_snapshots(root: pathlib.Path) -> pathlib.Path:
    """``root/snaps/node1..3``: node2 broken (a real mismatch capture), the others healthy; skip without it."""
    capture = real_fixtures_dir() / MISMATCH_CAPTURE
    if not capture.is_file():
        pytest.skip(f"the real nvidia-smi mismatch capture {capture} is absent (../shared/fixtures)")
    snaps = root / "snaps"
    for node in ("node1", "node3"):
        shutil.copytree(HEALTHY_SNAPSHOT, snaps / node)
    break_snapshot(snaps / "node2")
    return snaps


def break_snapshot(path: pathlib.Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    shutil.copyfile(real_fixtures_dir() / MISMATCH_CAPTURE, path / "nvidia-smi.txt")


def fix_snapshot(path: pathlib.Path) -> None:
    """The node is "repaired": its snapshot becomes the healthy one (swapped in by a rename, so a check never
    reads half of it)."""
    fresh = path.with_name(path.name + ".fixed")
    shutil.copytree(HEALTHY_SNAPSHOT, fresh)
    old = path.with_name(path.name + ".broken")
    os.rename(path, old)
    os.rename(fresh, path)
    shutil.rmtree(old)


def _why_not_available() -> str | None:
    if os.geteuid() != 0:
        return "the local Slurm cluster needs root (slurmd starts job steps as any user)"
    missing = [name for name in NEEDED if shutil.which(name) is None and not os.path.exists(f"/usr/sbin/{name}")]
    if missing:  # never let `up` install packages from a test: say what is missing instead
        return f"Slurm is not installed here ({', '.join(missing)} missing; scripts/install-fleet-tools.sh)"
    if not (TOOLS / "up").is_file():
        return f"{TOOLS} is absent (a bare clone without ../shared)"
    return None


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    why = _why_not_available()
    if why:
        pytest.skip(why)
    worker, index = xdist_worker()
    # Short (slurmstepd's socket path must fit 107 bytes), and a port of its own per xdist worker.
    cluster = SlurmCluster(state_dir=f"/tmp/gdslurm-{worker}", port=17700 + 20 * index)
    try:
        cluster.configure()
        yield cluster
    finally:
        env = {**os.environ, "SLURM_LOCAL_DIR": cluster.state_dir, "SLURM_LOCAL_PORT": str(cluster.port)}
        subprocess.run(["bash", str(TOOLS / "down")], env=env, capture_output=True, timeout=180)
