"""collect_env reports: real reports from issues (fixtures E), both layouts, and TorchFacts from them."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.collect_env import (
    is_collect_env,
    parse_collect_env,
    parse_unsupported_gpu_warning,
    torch_facts_from_collect_env,
)
from gpudoctor.facts.framework_model import CollectEnvReport, TorchFacts
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, fixture_named, line_mutations, non_text_json

CE_FILES = fixture_files("E", "*.txt")
SM50_TO_90 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]


def _report(name_part: str) -> CollectEnvReport:
    return parse_collect_env(read_fixture(fixture_named(CE_FILES, name_part)))


def test_150733_rtx_5090_d_with_a_cu126_wheel() -> None:
    report = _report("150733")
    assert report.layout == "classic"
    assert (report.torch_version, report.cuda_build, report.rocm_build) == ("2.6.0+cu126", "12.6", None)
    assert report.debug_build is False and report.cuda_available is True
    assert report.gpu_names == ["NVIDIA GeForce RTX 5090 D"]
    assert report.driver_version == "570.124.04"
    assert report.cuda_runtime is None  # "Could not collect"
    assert report.cuda_module_loading == "LAZY"
    assert report.os == "Ubuntu 24.10 (x86_64)" and report.libc == "glibc-2.40"
    assert report.python_version == "3.12.9"
    assert report.python_platform == "Linux-6.11.0-21-generic-x86_64-with-glibc2.40"
    assert report.cudnn == ["/usr/lib/x86_64-linux-gnu/libcudnn.so.9.8.0"]
    # The UserWarning printed above the report:
    assert report.unsupported_gpu == "NVIDIA GeForce RTX 5090 D"
    assert report.unsupported_capability == "12.0"
    assert report.supported_arches == SM50_TO_90
    assert report.machine == "x86_64"
    assert report.python_prefix == "/home/mm/anaconda3/envs/py312"


def test_150733_as_torch_facts() -> None:
    facts = torch_facts_from_collect_env(_report("150733"))
    assert (facts.source, facts.run.status) == ("collect_env", "from_report")
    assert (facts.version, facts.cuda, facts.local_tag, facts.cpu_only) == ("2.6.0+cu126", "12.6", "cu126", False)
    assert facts.is_available is True
    assert facts.arch_list == SM50_TO_90 and facts.arch_list_known is True
    assert (facts.unsupported_gpu, facts.unsupported_capability) == ("NVIDIA GeForce RTX 5090 D", "12.0")
    assert facts.python is not None
    assert (facts.python.version, facts.python.platform, facts.python.machine) == ("3.12.9", "linux", "x86_64")
    assert facts.python.os == "linux" and facts.python.major_minor == "3.12"
    assert facts.cudnn_system == ["/usr/lib/x86_64-linux-gnu/libcudnn.so.9.8.0"]
    assert facts.cudnn is None  # the report's cuDNN is what is on the system, not what torch loaded
    # "packaged by Anaconda" is the interpreter's origin, not torch's; only the +cu126 tag says where it came from.
    assert facts.origin.installer is None and facts.origin.conda_channel is None
    assert facts.origin.index_hint == "download.pytorch.org/whl/cu126"
    assert facts.devices == [] and facts.device_count is None  # the GPU list is nvidia-smi's, not torch's


def test_106565_cpu_only_torch_on_two_rtx_3090() -> None:
    report = _report("106565")
    assert report.torch_version == "1.8.1"
    assert report.cuda_build is None  # "Could not collect"
    assert report.cuda_available is False
    assert report.gpu_names == ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"]
    assert report.driver_version == "470.182.03"
    assert report.cuda_runtime == "11.4.152"
    assert report.cuda_module_loading is None  # "N/A"
    assert report.python_version == "3.8.16"
    assert report.os == "Ubuntu 18.04.6 LTS (x86_64)"
    assert report.cudnn == [
        "/usr/local/cuda-11.0/targets/x86_64-linux/lib/libcudnn.so.8.2.1",
        "/usr/local/cuda-11.0/targets/x86_64-linux/lib/libcudnn_adv_infer.so.8.2.1",
        "/usr/local/cuda-11.0/targets/x86_64-linux/lib/libcudnn_adv_train.so.8.2.1",
    ]
    assert report.unsupported_gpu is None and report.supported_arches == []
    facts = torch_facts_from_collect_env(report)
    assert facts.cpu_only is True
    assert facts.arch_list == [] and facts.arch_list_known is False  # no warning: the arch list is unknown
    assert facts.python is not None and facts.python.version == "3.8.16"


def test_122924_windows_report_with_pip_and_conda_packages() -> None:
    report = _report("122924")
    assert report.torch_version == "2.2.2" and report.cuda_build is None
    assert report.os == "Microsoft Windows 11 Education"
    assert report.gcc is None and report.libc is None
    assert report.python_version == "3.10.13"
    assert report.python_platform == "Windows-10-10.0.22631-SP0"
    assert report.gpu_names == ["NVIDIA GeForce RTX 4080 Laptop GPU"]  # the value on the key's own line
    assert report.driver_version == "551.86"
    assert report.cuda_runtime == "12.4.99"
    assert report.cudnn == []
    assert report.pip_packages == {"numpy": "1.26.4", "torch": "2.2.2", "torchaudio": "2.2.2", "torchvision": "0.17.2"}
    assert report.conda_packages == {"blas": "1.0"}
    assert report.conda_channels == {}  # "blas 1.0 mkl": three columns, the default channel
    assert report.machine == "AMD64"  # from "[MSC v.1916 64 bit (AMD64)]"
    # The CPU block's "Name=13th Gen Intel(R) ..." lines are not the report's keys.
    facts = torch_facts_from_collect_env(report)
    assert facts.python is not None
    assert (facts.python.platform, facts.python.os, facts.python.machine) == ("win32", "windows", "AMD64")
    assert facts.cpu_only is True
    # A plain 2.2.2 from an unknown installer: no index can be named.
    assert facts.origin.index_hint is None and facts.origin.installer is None


def test_vllm_sectioned_layout() -> None:
    report = _report("vllm-omni-241")
    assert report.layout == "sectioned"
    assert (report.torch_version, report.cuda_build) == ("2.8.0+cu128", "12.8")
    assert report.debug_build is False and report.cuda_available is True
    assert report.os == "Enterprise Linux Server 7.2 (Paladin) (x86_64)"
    assert report.gcc == "(GCC) 10.2.1 20200825 (Alibaba 10.2.1-3 2.17)"
    assert report.python_version == "3.12.12"
    assert report.python_platform == "Linux-5.10.134-18.al8.x86_64-x86_64-with-glibc2.32"
    assert report.cuda_runtime == "12.6.85"
    assert report.gpu_names == ["NVIDIA H20"]
    assert report.driver_version is None  # the excerpt stops at GPU 0
    facts = torch_facts_from_collect_env(report)
    assert facts.cuda == "12.8" and facts.local_tag == "cu128"
    assert facts.python is not None and facts.python.machine == "x86_64"


@pytest.mark.parametrize("path", CE_FILES, ids=lambda p: p.name)
def test_every_fixture_is_a_report_with_a_torch_version(path: pathlib.Path) -> None:
    text = read_fixture(path)
    assert is_collect_env(text)
    report = parse_collect_env(text)
    assert report.torch_version is not None and report.layout in ("classic", "sectioned")
    assert report.python_version is not None and report.gpu_names
    facts = torch_facts_from_collect_env(report)
    assert facts.version == report.torch_version and facts.python is not None


def test_leading_junk_is_ignored() -> None:
    text = read_fixture(fixture_named(CE_FILES, "vllm-omni-241"))
    assert text.startswith("#python collect_env.py")  # the capture's own prompt line
    assert parse_collect_env(text).torch_version == "2.8.0+cu128"


def test_windows_line_endings() -> None:
    text = read_fixture(fixture_named(CE_FILES, "106565")).replace("\n", "\r\n")
    report = parse_collect_env(text)
    assert report.gpu_names == ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"]
    assert report.driver_version == "470.182.03"


SYNTHETIC_CONDA_TAIL = """
Versions of relevant libraries:
[pip3] numpy==1.24.3
[pip3] nvidia-cudnn-cu12==8.9.2.26
[pip3] torch==2.1.0
[conda] numpy                     1.24.3          py311h08b1b3b_1
[conda] pytorch                   2.1.0           py3.11_cuda12.1_cudnn8.9.2_0    pytorch
[conda] pytorch-cuda              12.1                 ha16c6d3_5    pytorch
[conda] cpuonly                   2.0                           0    pytorch
[conda] torchvision               0.16.0              py311_cu121    [cuda] pytorch
"""


def test_synthetic_conda_lines_give_channels_and_the_origin() -> None:
    # SYNTHETIC: the classic header of the 106565 report with conda-list lines in conda's own column layout.
    head = read_fixture(fixture_named(CE_FILES, "106565")).split("cuDNN version")[0]
    report = parse_collect_env(head + SYNTHETIC_CONDA_TAIL)
    assert report.pip_packages == {"numpy": "1.24.3", "nvidia-cudnn-cu12": "8.9.2.26", "torch": "2.1.0"}
    assert report.conda_packages == {
        "numpy": "1.24.3",
        "pytorch": "2.1.0",
        "pytorch-cuda": "12.1",
        "cpuonly": "2.0",
        "torchvision": "0.16.0",
    }
    assert report.conda_channels == {
        "pytorch": "pytorch",
        "pytorch-cuda": "pytorch",
        "cpuonly": "pytorch",
        "torchvision": "pytorch",
    }
    facts = torch_facts_from_collect_env(report)
    assert (facts.origin.installer, facts.origin.conda_channel, facts.origin.index_hint) == (
        "conda",
        "pytorch",
        "conda:pytorch",
    )
    assert facts.nvidia_packages == {"nvidia-cudnn-cu12": "8.9.2.26"}


def test_synthetic_conda_list_of_a_pip_installed_torch() -> None:
    # SYNTHETIC: conda list shows pip's packages with the "pypi" channel: that is not a conda install.
    report = parse_collect_env(
        "PyTorch version: 2.1.0+cu121\nCUDA used to build PyTorch: 12.1\n"
        "[conda] torch                     2.1.0+cu121              pypi_0    pypi\n"
        "[conda] Could not collect\n[pip3] No relevant packages\n"
    )
    facts = torch_facts_from_collect_env(report)
    assert report.conda_channels == {"torch": "pypi"}
    assert (facts.origin.installer, facts.origin.index_hint) == ("pip", "download.pytorch.org/whl/cu121")


def test_synthetic_old_report_with_yes_no_and_no_cuda() -> None:
    # SYNTHETIC: torch 1.0's wording: Yes/No booleans, "No CUDA", a Python version without its patch level.
    text = (
        "PyTorch version: 1.0.1\nIs debug build: No\nCUDA used to build PyTorch: None\n\n"
        "OS: Mac OSX 10.14.3\nGCC version: Could not collect\nCMake version: version 3.13.3\n\n"
        "Python version: 3.7\nIs CUDA available: No\nCUDA runtime version: No CUDA\n"
        "GPU models and configuration: No CUDA\nNvidia driver version: No CUDA\ncuDNN version: No CUDA\n"
    )
    report = parse_collect_env(text)
    assert (report.debug_build, report.cuda_available, report.cuda_build) == (False, False, None)
    assert report.python_version == "3.7" and report.gpu_names == [] and report.cudnn == []
    assert report.cuda_runtime is None and report.driver_version is None
    facts = torch_facts_from_collect_env(report)
    assert facts.python is not None and facts.python.major_minor == "3.7" and facts.python.platform is None


def test_synthetic_newest_torch_warning_found_gpu_with_built_ccs() -> None:
    # SYNTHETIC: the wording of torch's _warn_unsupported_code (torch 2.10+), for a Pascal GPU.
    text = (
        "UserWarning: Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of compute capability (CC) 6.1.\n"
        "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it "
        "supports:\n- 7.5 which supports hardware CC >=7.5,<8.0\n- 8.0 which supports hardware CC >=8.0,<9.0\n"
        "- 12.0 which supports hardware CC >=12.0,<13.0\n"
    )
    assert parse_unsupported_gpu_warning(text) == (
        "NVIDIA GeForce GTX 1080 Ti",
        "6.1",
        ["sm_75", "sm_80", "sm_120"],
        True,
    )


def test_synthetic_old_torch_warning_without_an_arch_list() -> None:
    # SYNTHETIC: torch 1.x's old_gpu_warn names the GPU and its capability but no list.
    text = (
        "    Found GPU0 GeForce GT 730 which is of cuda capability 3.5.\n    PyTorch no longer supports this GPU "
        "because it is too old.\n    The minimum cuda capability supported by this library is 3.7.\n"
    )
    assert parse_unsupported_gpu_warning(text) == ("GeForce GT 730", "3.5", [], False)


def test_synthetic_warning_on_one_line() -> None:
    # SYNTHETIC: a paste that joined the warning's lines.
    text = (
        "/x/torch/cuda/__init__.py:125: UserWarning: GeForce RTX 3090 with CUDA capability sm_86 is not "
        "compatible with the current PyTorch installation. The current PyTorch install supports CUDA "
        "capabilities sm_37 sm_50 sm_60 sm_70."
    )
    assert parse_unsupported_gpu_warning(text) == (
        "GeForce RTX 3090",
        "8.6",
        ["sm_37", "sm_50", "sm_60", "sm_70"],
        True,
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "PyTorch version: 2.1.0",
        "nvidia-smi: command not found",
        "Collecting environment information...\nTraceback (most recent call last):",
    ],
)
def test_not_a_report(text: str) -> None:
    assert not is_collect_env(text)


def test_live_collect_env_if_a_framework_python_is_given() -> None:
    """The real `python -m torch.utils.collect_env` of the framework venv (scripts/setup-framework-venv.sh)."""
    python = os.environ.get("GPUDOCTOR_FRAMEWORK_PYTHON")
    if not python or not pathlib.Path(python).is_file():
        pytest.skip("GPUDOCTOR_FRAMEWORK_PYTHON is not set")
    try:
        version = subprocess.run(
            [python, "-c", "import torch; print(torch.__version__)"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout.strip()
        done = subprocess.run([python, "-m", "torch.utils.collect_env"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("torch or collect_env did not run in the framework Python")
    text = done.stderr + "\n" + done.stdout  # warnings come first, as in a pasted terminal
    assert is_collect_env(text)
    report = parse_collect_env(text)
    assert report.layout == "classic" and report.torch_version == version
    facts = torch_facts_from_collect_env(report)
    assert facts.python is not None and facts.python.platform == "linux" and facts.python.version
    if "+cpu" in version:
        assert facts.cuda is None and facts.cpu_only is True
        assert facts.origin.index_hint == "download.pytorch.org/whl/cpu"
    assert report.pip_packages.get("torch") == version


@given(any_code_points())
def test_any_text_gives_a_report(text: str) -> None:
    report = parse_collect_env(text)
    assert isinstance(report, CollectEnvReport)
    assert isinstance(is_collect_env(text), bool)
    facts = torch_facts_from_collect_env(report)
    assert isinstance(facts, TorchFacts) and facts.run.status == "from_report"
    assert facts.arch_list_known == bool(facts.arch_list)


@given(non_text_json())
def test_any_json_value_is_an_empty_report(value: object) -> None:
    assert parse_collect_env(value) == CollectEnvReport()
    assert is_collect_env(value) is False
    assert isinstance(torch_facts_from_collect_env(value), TorchFacts)


@pytest.mark.parametrize("path", CE_FILES, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_real_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    text = data.draw(line_mutations(read_fixture(path)))
    report = parse_collect_env(text)
    assert isinstance(report, CollectEnvReport)
    assert all(isinstance(name, str) and name for name in report.gpu_names)
    assert isinstance(torch_facts_from_collect_env(report), TorchFacts)
