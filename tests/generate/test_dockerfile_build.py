"""The CPU Dockerfile builds for real, where a container builder works here: Docker or Podman with a reachable
daemon/service, or Buildah.  Without one the test skips, saying which were looked for and why each is unusable
(a docker client without a daemon is common in CI sandboxes)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.e2e.test_cli import gpudoctor


def working_builder() -> list[str]:
    """The build command of the first builder that answers, else skip with what was found."""
    why = []
    probes = {"docker": ["docker", "info"], "podman": ["podman", "info"], "buildah": ["buildah", "info"]}
    builds = {
        "docker": ["docker", "build", "--progress=plain"],
        "podman": ["podman", "build"],
        "buildah": ["buildah", "bud"],
    }
    for name, probe in probes.items():
        if shutil.which(name) is None:
            why.append(f"{name}: not installed")
            continue
        try:
            answer = subprocess.run(probe, capture_output=True, text=True, timeout=60, check=False)
        except subprocess.TimeoutExpired:
            why.append(f"{name}: '{' '.join(probe)}' did not answer in 60 s")
            continue
        if answer.returncode == 0:
            return builds[name]
        last = (answer.stderr or answer.stdout).strip().splitlines()[-1:] or ["no output"]
        why.append(f"{name}: '{' '.join(probe)}' failed ({last[0][:120]})")
    pytest.skip("no working container builder: " + "; ".join(why))


@pytest.mark.slow
def test_cpu_dockerfile_builds_and_its_preflight_runs(tmp_path):
    build = working_builder()
    result = gpudoctor("dockerfile", "--cpu", "-o", str(tmp_path / "Dockerfile"), timeout=600)
    assert result.returncode == 0, result.stderr
    tag = "gpudoctor-test-cpu:latest"
    built = subprocess.run([*build, "-t", tag, str(tmp_path)], capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, (built.stdout + built.stderr)[-3000:]
    runner = "podman" if build[0] in ("podman", "buildah") else "docker"
    ran = subprocess.run([runner, "run", "--rm", tag], capture_output=True, text=True, timeout=600)
    assert "gpudoctor" in ran.stdout + ran.stderr, ran.stdout + ran.stderr
