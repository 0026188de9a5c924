"""Telling a lone pasted file's source from its content: real reports and logs from issues, and look-alikes."""

from __future__ import annotations

import pytest

from gpudoctor.evidence.sniff import guess_source_name, is_collect_env, is_tensorflow_log
from tests.helpers.fixtures import fixture_files, read_fixture

CLASSIC_COLLECT_ENV = (
    "Collecting environment information...\n"
    "PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
    "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB\nNvidia driver version: 535.104.05\n"
    "GPU0\tX \t0-63\t0\t\tN/A\n"  # a topology row quoted inside the report
)
SECTIONED_COLLECT_ENV = (
    "Collecting environment information...\n==============================\n        PyTorch Info\n"
    "==============================\nPyTorch version              : 2.7.0+cu126\n"
)
TENSORFLOW_LOG = (
    "2023-04-02 10:00:00.123456: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
    "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file\n"
)
NVIDIA_SMI_ERROR = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"


@pytest.mark.parametrize(
    ("text", "source"),
    [
        (CLASSIC_COLLECT_ENV, "torch-collect-env.txt"),
        (SECTIONED_COLLECT_ENV, "torch-collect-env.txt"),
        (TENSORFLOW_LOG, "tensorflow-log.txt"),
        (NVIDIA_SMI_ERROR, "nvidia-smi.txt"),
        ('NAME="Ubuntu"\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04 LTS"\n', "os-release"),
        # a user's own print about the GPU is not TensorFlow's word; a bare "PyTorch version:" is no report
        ("GPU is NOT AVAILABLE\nNum GPUs Available:  0\n", None),
        ("PyTorch version: 2.1.0\n", None),
    ],
)
def test_guess_source_name(text, source):
    assert guess_source_name(text) == source


def test_the_recognisers_say_only_what_they_recognise():
    assert is_collect_env(CLASSIC_COLLECT_ENV) and is_collect_env(SECTIONED_COLLECT_ENV)
    assert not is_collect_env(TENSORFLOW_LOG) and not is_collect_env(NVIDIA_SMI_ERROR)
    assert is_tensorflow_log(TENSORFLOW_LOG)
    assert not is_tensorflow_log(CLASSIC_COLLECT_ENV) and not is_tensorflow_log(NVIDIA_SMI_ERROR)


@pytest.mark.parametrize("path", fixture_files("E", "*.txt"), ids=lambda p: p.name)
def test_real_collect_env_reports_are_recognised(path):
    assert guess_source_name(read_fixture(path)) == "torch-collect-env.txt"


@pytest.mark.parametrize("path", fixture_files("A", "*.txt"), ids=lambda p: p.name)
def test_real_nvidia_smi_xml_is_recognised(path):
    assert guess_source_name(read_fixture(path)) == "nvidia-smi-q-x.xml"
