"""The real local Ray cluster for fleet tests (``../shared/tools/ray-local``), started once per session.

Three nodes (node1 is the head), each ``ray start --block`` in its own UTS namespace (hostname ``nodeK``) on
loopback address ``127.0.1.K``.  The nodes run this venv's Python (``RAY_LOCAL_PYTHON``), so Ray workers
import gpudoctor from the checkout and the driver has the nodes' Ray version.  Every node diagnoses its own
snapshot, ``snaps/<node>``: node1 and node3 a copy of the recorded H100 VM (in the repo), node2 a folder
holding a real nvidia-smi "Driver/library version mismatch" capture (../shared/fixtures).

Import the fixture into a test module with ``from tests.fleet.ray_cluster import ray_cluster``.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.helpers.fixtures import REPO, real_fixtures_dir, xdist_worker

TOOLS = REPO.parent / "shared" / "tools" / "ray-local"
HEALTHY_SNAPSHOT = REPO / "tests" / "recorded" / "h100-80gb-hbm3-vm"
# A real capture: nvidia-smi after a driver upgrade without a reboot (see ../shared/fixtures/INDEX.md).
MISMATCH_CAPTURE = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"
# The CLI as users run it: this venv's console script.
GPUDOCTOR_CLI = str(pathlib.Path(sys.executable).parent / "gpudoctor")


@dataclass
class RayCluster:
    address: str  # "127.0.1.1:PORT": the head's GCS
    state_dir: str
    up_seconds: float

    def fleet_run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``gpudoctor fleet run ...`` as a subprocess (RAY_ADDRESS unset: the address is given, or not)."""
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        return subprocess.run(
            [GPUDOCTOR_CLI, "fleet", "run", *args], env=env, capture_output=True, text=True, timeout=timeout
        )


def make_ray_snapshots(root: pathlib.Path) -> pathlib.Path:
    """``root/snaps/node1..3``: node2 broken (a real mismatch capture), the others healthy; skip without it."""
    capture = real_fixtures_dir() / MISMATCH_CAPTURE
    if not capture.is_file():
        pytest.skip(f"the real nvidia-smi mismatch capture {capture} is absent (../shared/fixtures)")
    snaps = root / "snaps"
    for node in ("node1", "node3"):
        shutil.copytree(HEALTHY_SNAPSHOT, snaps / node)
    (snaps / "node2").mkdir(parents=True)
    shutil.copyfile(capture, snaps / "node2" / "nvidia-smi.txt")
    return snaps


def _why_not_available() -> str | None:
    if os.geteuid() != 0:
        return "the local Ray cluster needs root (each node runs in its own UTS namespace, made with unshare)"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed: the local Ray cluster cannot give nodes their own hostnames"
    if not (TOOLS / "up").is_file():
        return f"{TOOLS} is absent (a bare clone without ../shared)"
    try:
        import ray  # noqa: F401 - the driver must import it, in the nodes' version
    except ImportError:
        return "ray is not installed in this venv (pip install -e '.[test]' brings ray==2.60.0)"
    return None


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[RayCluster]:
    why = _why_not_available()
    if why:
        pytest.skip(why)
    worker, index = xdist_worker()
    # Short (RAY_LOCAL_DIR: at most 36 characters), and ports of its own per xdist worker (node K takes
    # PORT+10K .. PORT+10K+5), away from the tools' default 26379.
    state_dir = f"/tmp/gdray-{worker}"
    port = 27400 + 100 * index
    env = {
        **{k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
        "RAY_LOCAL_DIR": state_dir,
        "RAY_LOCAL_PORT": str(port),
        "RAY_LOCAL_NODES": "3",
        "RAY_LOCAL_PYTHON": sys.executable,
    }
    try:
        started = time.monotonic()
        done = subprocess.run(["bash", str(TOOLS / "up")], env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"ray-local/up failed: {done.stderr[-3000:]}")
        export = done.stdout.strip().splitlines()[-1]  # "export RAY_ADDRESS=127.0.1.1:PORT"
        yield RayCluster(export.split("=", 1)[1], state_dir, time.monotonic() - started)
    finally:
        subprocess.run(["bash", str(TOOLS / "down")], env=env, capture_output=True, timeout=180)
