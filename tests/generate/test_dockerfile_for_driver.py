"""``gpudoctor dockerfile --for-driver``: a branch means its oldest release (said in the header) or is refused; an
old driver gets the newest base image it can run instead of an upgrade demand.

Driver releases and image tags come from the real knowledge base (driver_cuda.json's Table 3 minimums,
docker_cuda.json's published tags); the command runs as a user runs it.
"""

from __future__ import annotations

import re

import pytest

from gpudoctor.generate.dockerfile import generate_dockerfile
from gpudoctor.generate.model import DockerfileRequest, GenerationRefused, MachineTarget
from gpudoctor.kb.docker_images import admits_driver_branch, is_published
from gpudoctor.kb.driver_cuda import oldest_driver_release
from tests.e2e.test_cli import gpudoctor


def from_tag(text: str) -> str:
    return next(line.split()[1] for line in text.splitlines() if line.startswith("FROM "))


def unwrapped(text: str) -> str:
    """The header's comment lines joined, as one reads them."""
    return re.sub(r"\n#\s+", " ", text)


def test_a_branch_is_its_oldest_known_release():
    assert oldest_driver_release("550") == "550.54.14"  # CUDA 12.4 GA's minimum, the first 550 in Table 3
    assert oldest_driver_release("470") == "470.42.01"
    assert oldest_driver_release("565") is None and oldest_driver_release("5x0") is None


def test_for_driver_550_reads_as_its_oldest_release_and_says_so():
    result = gpudoctor("dockerfile", "--for-driver", "550", "--preflight", "none")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "read as 550.54.14, the oldest 550 release the knowledge base knows" in unwrapped(text)
    assert "host driver: 550.54.14" in text and "host driver: unknown" not in text
    # 550.54.14 runs CUDA 12.4 natively: never the CUDA 13 image the "unknown" driver got.
    assert from_tag(text) == "nvidia/cuda:12.4.1-base-ubuntu22.04"


@pytest.mark.parametrize("branch", ["565", "999"])
def test_an_unknown_branch_is_refused_in_one_line(branch):
    result = gpudoctor("dockerfile", "--for-driver", branch)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and branch in lines[0] and "like 550.54.15" in lines[0]


def test_a_bare_branch_given_to_the_generator_is_refused_not_unknown():
    with pytest.raises(GenerationRefused):
        generate_dockerfile(DockerfileRequest(target=MachineTarget(driver_version="550")))


def test_driver_470_gets_the_newest_image_it_runs_not_an_upgrade_demand():
    result = gpudoctor("dockerfile", "--for-driver", "470.182.03", "--preflight", "none")
    assert result.returncode == 0, result.stderr
    tag = from_tag(result.stdout)
    assert tag == "nvidia/cuda:11.8.0-base-ubuntu22.04" and is_published(tag)
    assert admits_driver_branch("11.8.0", "470.182.03")  # NVIDIA_REQUIRE_CUDA's brand=...,driver>=470,driver<471
    assert "admits R470 drivers of every GPU brand" in unwrapped(result.stdout)
    assert re.search(r"pip install 'torch==[\d.]+\*' --index-url https://download.pytorch.org/whl/cu118", result.stdout)


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_driver_470_on_ubuntu_20_04(framework):
    result = gpudoctor(
        "dockerfile",
        "--for-driver",
        "470.182.03",
        "--framework",
        framework,
        "--os",
        "ubuntu20.04",
        "--preflight",
        "none",
    )
    assert result.returncode == 0, result.stderr
    tag = from_tag(result.stdout)
    assert tag.startswith("nvidia/cuda:11.8.0-") and tag.endswith("-ubuntu20.04") and is_published(tag)


def test_ubuntu_20_04_with_a_preflight_names_the_way_that_works():
    result = gpudoctor("dockerfile", "--for-driver", "470.182.03", "--os", "ubuntu20.04", "--preflight", "pypi")
    assert result.returncode == 2
    assert "Python is 3.8" in result.stderr and "nearest that works: --preflight none" in result.stderr
