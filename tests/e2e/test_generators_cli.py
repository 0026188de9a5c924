"""`gpudoctor dockerfile` and `gpudoctor install-script` run as a user runs them."""

from __future__ import annotations

import os
import re
import stat

from gpudoctor.kb.docker_images import is_published
from tests.e2e.test_cli import fixture, gpudoctor


def from_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("FROM "))


def test_dockerfile_for_a_driver_names_a_published_base_and_explains_itself():
    result = gpudoctor("dockerfile", "--for-driver", "550.54.15", "--framework", "torch")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("# syntax=docker/dockerfile:1")
    tag = from_line(text).split()[1]
    assert is_published(tag), tag
    assert "550.54.15" in text  # the header names the driver it was made for
    assert re.search(r"torch==[0-9.]+", text) and "--index-url https://download.pytorch.org/whl/cu" in text
    assert re.search(r"^USER \S+", text, re.MULTILINE)


def test_dockerfile_from_a_users_snapshot_fits_that_driver():
    # A real A10G capture: driver 515.105.01 runs CUDA <= 11.7.
    result = gpudoctor("dockerfile", "--from", str(fixture("A/telegraf-a10g-515.105.01-v11.txt")))
    assert result.returncode == 0, result.stderr
    tag = from_line(result.stdout).split()[1]
    major, minor = (int(x) for x in re.match(r"nvidia/cuda:(\d+)\.(\d+)", tag).groups())
    assert (major, minor) <= (11, 7) and is_published(tag)


def test_dockerfile_on_this_machine_works_without_a_gpu():
    result = gpudoctor("dockerfile", "--cpu")
    assert result.returncode == 0, result.stderr
    assert "FROM python:" in result.stdout and "download.pytorch.org/whl/cpu" in result.stdout


def test_impossible_combination_is_refused_in_one_line_with_the_nearest_that_works():
    result = gpudoctor("dockerfile", "--for-driver", "550.54.15", "--framework", "tensorflow==1.15")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "nearest" in result.stderr
    assert result.stdout == ""


def test_output_file_is_never_overwritten_without_force(tmp_path):
    target = tmp_path / "Dockerfile"
    target.write_text("mine")
    result = gpudoctor("dockerfile", "--for-driver", "550.54.15", "-o", str(target))
    assert result.returncode == 2 and target.read_text() == "mine" and "--force" in result.stderr
    forced = gpudoctor("dockerfile", "--for-driver", "550.54.15", "-o", str(target), "--force")
    assert forced.returncode == 0 and "FROM nvidia/cuda:" in target.read_text()


def test_bad_framework_is_exit_2():
    result = gpudoctor("dockerfile", "--framework", "caffe")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def test_install_script_for_debian_is_executable_and_its_dry_run_runs(tmp_path):
    script = tmp_path / "install-gpu.sh"
    result = gpudoctor("install-script", "--distro", "debian12", "--for-driver", "535.247.01", "-o", str(script))
    assert result.returncode == 0, result.stderr
    assert os.stat(script).st_mode & stat.S_IXUSR
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in text
    assert not re.search(r"\|\s*(sudo\s+)?(ba)?sh\b", text)  # never a download piped into a shell


def test_install_script_refuses_an_unknown_distro():
    result = gpudoctor("install-script", "--distro", "beos5")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
