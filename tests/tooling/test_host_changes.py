"""The test command changes the host (apt sources, system packages) only when allowed, and never over an
NVIDIA driver installed by other means.

Each test runs the real script with ``--decide`` (it reports what it would do and changes nothing) against a
synthetic host: a temporary directory standing for ``/`` (``GPUDOCTOR_HOST_ROOT``) holding just the files the
decision reads.  Standard input is not a terminal, so nobody can be asked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "install-nvidia-userspace.sh"
DEBIAN_SOURCES = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def synthetic_host(tmp_path: Path, *files: str) -> Path:
    """A synthetic host root: Debian's apt sources without non-free, plus the given (empty or one-line) files."""
    root = tmp_path / "host"
    sources = root / "etc/apt/sources.list.d/debian.sources"
    sources.parent.mkdir(parents=True)
    sources.write_text(DEBIAN_SOURCES)
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14\n" if "proc/driver" in name else "")
    return root


def decide(root: Path, opt_in: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GPUDOCTOR_INSTALL_SYSTEM_PACKAGES"}
    env["GPUDOCTOR_HOST_ROOT"] = str(root)
    if opt_in is not None:
        env["GPUDOCTOR_INSTALL_SYSTEM_PACKAGES"] = opt_in
    return subprocess.run(
        ["bash", str(SCRIPT), "--decide"],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_developer_machine_is_not_changed_unasked(tmp_path: Path) -> None:
    root = synthetic_host(tmp_path)
    result = decide(root, opt_in=None)
    assert result.returncode == 1
    assert "not changing this host unasked" in result.stderr
    assert "GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=1" in result.stderr
    assert (root / "etc/apt/sources.list.d/debian.sources").read_text() == DEBIAN_SOURCES


@pytest.mark.parametrize("marker", [".dockerenv", "run/.containerenv"])
def test_a_container_may_be_changed(tmp_path: Path, marker: str) -> None:
    root = synthetic_host(tmp_path, marker)
    result = decide(root, opt_in=None)
    assert result.returncode == 0, result.stderr
    assert "would enable Debian's non-free component" in result.stdout
    # Deciding changes nothing.
    assert (root / "etc/apt/sources.list.d/debian.sources").read_text() == DEBIAN_SOURCES


def test_the_explicit_opt_in_allows_it_and_the_opt_out_refuses_even_in_a_container(tmp_path: Path) -> None:
    assert decide(synthetic_host(tmp_path / "a"), opt_in="1").returncode == 0
    refused = decide(synthetic_host(tmp_path / "b", ".dockerenv"), opt_in="0")
    assert refused.returncode == 1
    assert "GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=0" in refused.stderr


@pytest.mark.parametrize(
    ("present", "reason"),
    [
        ("proc/driver/nvidia/version", "an NVIDIA kernel driver is loaded (NVRM version: NVIDIA UNIX x86_64 Kernel"),
        ("usr/bin/nvidia-uninstall", "NVIDIA's .run installer"),
        ("var/lib/dpkg/info/nvidia-driver-550.list", "an NVIDIA driver package is installed (nvidia-driver-550)"),
        ("var/lib/dpkg/info/cuda-drivers-580.list", "an NVIDIA driver package is installed (cuda-drivers-580)"),
    ],
)
def test_never_over_a_driver_installed_by_other_means(tmp_path: Path, present: str, reason: str) -> None:
    # Even with the opt-in and inside a container.
    root = synthetic_host(tmp_path, present, ".dockerenv")
    result = decide(root, opt_in="1")
    assert result.returncode == 1
    assert reason in result.stderr
    assert "must not replace it" in result.stderr


def test_ci_opts_in_explicitly() -> None:
    assert "GPUDOCTOR_INSTALL_SYSTEM_PACKAGES=1" in (REPO / ".ci" / "run").read_text()
