"""collect_env: "Could not collect", "N/A", "None" and "No CUDA" say why a value is missing, a missing line says nothing.

``CollectEnvReport.missing`` keeps, per field, why the report's line held no value; the field itself stays None
(or empty) as before.  Real reports from issues are read in place (fixtures E, G-amd, H-intel, I-apple) and skip
when the corpus is absent; the synthetic reports below are made up, named as such.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.facts.collect_env import parse_collect_env
from gpudoctor.facts.framework_model import CollectEnvReport
from gpudoctor.facts.sources_state import Missing, Why
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture

FAILED = Missing(Why.FAILED, EvidenceKey.TORCH_COLLECT_ENV, "Could not collect")
NOT_APPLICABLE = Missing(Why.NOT_APPLICABLE, EvidenceKey.TORCH_COLLECT_ENV, "N/A")
NO_CUDA = Missing(Why.ABSENT, EvidenceKey.TORCH_COLLECT_ENV, "No CUDA")
NONE = Missing(Why.ABSENT, EvidenceKey.TORCH_COLLECT_ENV, "None")

# Made up, in the classic layout: a report whose driver and CUDA state collect_env could not read.
SYNTHETIC_COULD_NOT_COLLECT = """\
Collecting environment information...
PyTorch version: 2.5.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.4 LTS (x86_64)
GCC version: Could not collect
Python version: 3.11.9 (main, Apr  6 2024, 17:59:24) [GCC 11.4.0] (64-bit runtime)
Python platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
Is CUDA available: Could not collect
CUDA runtime version: Could not collect
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
cuDNN version: Could not collect
"""

# Made up, in vLLM's sectioned layout ("Key   : value").
SYNTHETIC_SECTIONED = """\
==============================
        PyTorch Info
==============================
PyTorch version              : 2.6.0+cu124
Is debug build               : False
CUDA used to build PyTorch   : 12.4
ROCM used to build PyTorch   : N/A

==============================
       CUDA / GPU Info
==============================
Is CUDA available            : True
CUDA runtime version         : 12.4.131
GPU models and configuration : GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version        : Could not collect
cuDNN version                : Could not collect
"""


def test_synthetic_could_not_collect_is_failed_not_absent() -> None:
    report = parse_collect_env(SYNTHETIC_COULD_NOT_COLLECT)
    # The values stay unknown, as checks read them ...
    assert report.driver_version is None and report.cuda_available is None and report.gpu_names == []
    # ... and now say why.
    assert report.missing == {
        "rocm_build": NOT_APPLICABLE,
        "gcc": FAILED,
        "cuda_available": FAILED,
        "cuda_runtime": FAILED,
        "gpu_names": FAILED,
        "driver_version": FAILED,
        "cudnn": FAILED,
    }
    assert report.missing["driver_version"].words() == "torch-collect-env.txt failed: Could not collect"


def test_synthetic_absent_lines_give_no_reason() -> None:
    # The same report cut after the Python platform: the later fields are not in it at all.
    text = SYNTHETIC_COULD_NOT_COLLECT.split("Is CUDA available")[0]
    report = parse_collect_env(text)
    assert report.driver_version is None and report.cuda_available is None
    assert set(report.missing) == {"rocm_build", "gcc"}


def test_synthetic_values_that_are_there_have_no_reason() -> None:
    text = SYNTHETIC_COULD_NOT_COLLECT.replace(
        "Nvidia driver version: Could not collect", "Nvidia driver version: 550.54.15"
    ).replace("Is CUDA available: Could not collect", "Is CUDA available: True")
    report = parse_collect_env(text)
    assert report.driver_version == "550.54.15" and report.cuda_available is True
    assert "driver_version" not in report.missing and "cuda_available" not in report.missing


def test_synthetic_sectioned_layout() -> None:
    report = parse_collect_env(SYNTHETIC_SECTIONED)
    assert report.layout == "sectioned"
    assert report.gpu_names == ["NVIDIA H100 80GB HBM3"] and report.cuda_available is True
    assert report.missing == {"rocm_build": NOT_APPLICABLE, "driver_version": FAILED, "cudnn": FAILED}


def test_synthetic_no_cuda_and_none_are_absent() -> None:
    # Made up: what collect_env prints when neither torch nor nvidia-smi found CUDA, for a CPU-only wheel.
    text = (
        "PyTorch version: 2.4.0\nCUDA used to build PyTorch: None\nIs CUDA available: False\n"
        "CUDA runtime version: No CUDA\nGPU models and configuration: No CUDA\n"
        "Nvidia driver version: No CUDA\ncuDNN version: No CUDA\n"
    )
    report = parse_collect_env(text)
    assert report.missing == {
        "cuda_build": NONE,
        "cuda_runtime": NO_CUDA,
        "gpu_names": NO_CUDA,
        "driver_version": NO_CUDA,
        "cudnn": NO_CUDA,
    }
    assert "cuda_available" not in report.missing  # "False" is a value


def test_synthetic_first_report_of_a_paste_wins() -> None:
    second = SYNTHETIC_COULD_NOT_COLLECT.replace("Could not collect", "550.54.15")
    report = parse_collect_env(SYNTHETIC_COULD_NOT_COLLECT + "\n" + second)
    assert report.driver_version is None and report.missing["driver_version"] == FAILED


# --- real reports ------------------------------------------------------------------------------------------------


def test_real_rocm_report_says_the_nvidia_driver_could_not_be_collected() -> None:
    text = fixture_text("G-amd/collect_env-vllm-rocm6.2-mi250x-gfx90a-excerpt-vllm-10663.txt")
    report = parse_collect_env(text)
    assert report.driver_version is None and report.missing["driver_version"] == FAILED
    assert report.missing["cuda_runtime"] == FAILED and report.missing["cudnn"] == FAILED
    assert report.missing["cuda_build"] == NOT_APPLICABLE  # a ROCm build has no CUDA


def test_real_150733_driver_known_runtime_not_collected() -> None:
    report = parse_collect_env(fixture_text("E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"))
    assert report.driver_version == "570.124.04" and "driver_version" not in report.missing
    assert report.cuda_runtime is None and report.missing["cuda_runtime"] == FAILED


def test_real_apple_report_has_no_cuda() -> None:
    name = "I-apple/collect_env-macos12.2.1-arm64-m1-conda-forge-py39-mps-unavailable-pytorch-78343.txt"
    report = parse_collect_env(fixture_text(name))
    assert report.missing["driver_version"] == NO_CUDA and report.missing["gcc"] == FAILED


REPORTS = [
    path
    for subdir in ("E", "G-amd", "H-intel", "I-apple")
    for path in fixture_files(subdir)
    if "collect_env" in path.name
]
COULD_NOT_COLLECT = [path for path in REPORTS if "Could not collect" in read_fixture(path)]


# The report's words for the fields gpudoctor reads (the rest, "Clang version" and such, it passes over).
_FIELDS = {
    "PyTorch version": "torch_version",
    "CUDA used to build PyTorch": "cuda_build",
    "ROCM used to build PyTorch": "rocm_build",
    "GCC version": "gcc",
    "Libc version": "libc",
    "Is CUDA available": "cuda_available",
    "CUDA runtime version": "cuda_runtime",
    "GPU models and configuration": "gpu_names",
    "Nvidia driver version": "driver_version",
    "cuDNN version": "cudnn",
}


def _empty(report: CollectEnvReport, name: str) -> bool:
    value = getattr(report, name)
    return value is None or value == []


@pytest.mark.skipif(not COULD_NOT_COLLECT, reason="the real collect_env reports (fixtures E, G-amd, ...) are absent")
@pytest.mark.parametrize("path", COULD_NOT_COLLECT, ids=lambda p: p.name)
def test_real_reports_could_not_collect_is_always_failed(path: pathlib.Path) -> None:
    text = read_fixture(path)
    report = parse_collect_env(text)
    said = {
        _FIELDS[match.group(1)]
        for match in re.finditer(r"^([A-Za-z ]+?)\s*:\s*Could not collect\s*$", text, re.MULTILINE)
        if match.group(1) in _FIELDS
    }
    failed = {name for name, missing in report.missing.items() if missing.why is Why.FAILED}
    assert failed == said
    assert all(report.missing[name].error == "Could not collect" for name in failed)
    for name in report.missing:
        assert _empty(report, name), f"{name} has a value and a reason for not having one"


@given(st.text(max_size=400))
def test_any_text_missing_names_fields_that_are_empty(text: str) -> None:
    report = parse_collect_env(text)
    names = {field.name for field in dataclasses.fields(CollectEnvReport)}
    for name, missing in report.missing.items():
        assert name in names and _empty(report, name)
        assert missing.source is EvidenceKey.TORCH_COLLECT_ENV
