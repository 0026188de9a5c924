"""Checks that read a paste's own commands: containers without GPUs, images newer than the driver,
TensorFlow on a platform where it has no GPU support.  Real pastes from the accuracy corpus, read in place."""

from __future__ import annotations

import pathlib

import pytest

from gpudoctor.api import CheckContext
from gpudoctor.evidence.snapshot import paste_evidence, read_snapshot
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Status
from gpudoctor_checks.pasted_context import pasted_container_gpu_flags, pasted_image_cuda, pasted_tensorflow_platform

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy_corpus"
CTX = CheckContext({})


def _facts(case: str) -> Facts:
    path = CORPUS / f"{case}.txt"
    if not path.exists():
        pytest.skip(f"corpus case {case} not present")
    return Facts(read_snapshot(str(path)))


def test_a_container_run_without_gpus_next_to_cuda_unavailable_is_the_cause() -> None:
    # floydhub/dockerfiles#3: `docker run -t -i floydhub/pytorch:latest-gpu-py3 ipython`, then is_available() False.
    outcome = pasted_container_gpu_flags.func(_facts("containers_wsl/floydhub-dockerfiles-3-plain-docker-run"), CTX)
    assert outcome.status is Status.PROBLEM
    assert outcome.findings[0].cause == "container-no-gpu-flag"


def test_a_container_run_with_gpus_is_fine() -> None:
    # Synthetic: the documented way to start a GPU container.
    facts = Facts(paste_evidence(b"$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n", "x"))
    assert pasted_container_gpu_flags.func(facts, CTX).status is Status.OK


@pytest.mark.parametrize(
    "case",
    ["mixed/nvidia-docker-177-driver-352-image-cuda8", "mixed/nvidia-docker-497-driver-375-image-cuda9"],
)
def test_an_image_newer_than_the_driver_is_named(case: str) -> None:
    outcome = pasted_image_cuda.func(_facts(case), CTX)
    assert outcome.status is Status.PROBLEM
    assert outcome.findings[0].cause == "container-cuda-too-new"


def test_an_image_the_driver_runs_is_fine() -> None:
    # Synthetic: a 12.2 image under a 535 driver (which runs CUDA 12.2 natively).
    text = (
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
        "$ docker run --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi\n"
    )
    assert pasted_image_cuda.func(Facts(paste_evidence(text.encode(), "x")), CTX).status is Status.OK


def test_tensorflow_after_2_10_on_native_windows_is_named() -> None:
    # tensorflow/tensorflow#60156: TF 2.11 on Windows 11, list_physical_devices('GPU') is [].
    outcome = pasted_tensorflow_platform.func(_facts("tensorflow/tf-60156-windows-tf211-not-built-with-cuda"), CTX)
    assert outcome.status is Status.PROBLEM
    assert outcome.findings[0].cause == "tf-cpu-only"


def test_nothing_pasted_means_nothing_to_judge() -> None:
    facts = Facts(paste_evidence(b"hello\n", "x"))
    for check in (pasted_container_gpu_flags, pasted_image_cuda, pasted_tensorflow_platform):
        assert check.func(facts, CTX).status is Status.NOT_APPLICABLE
