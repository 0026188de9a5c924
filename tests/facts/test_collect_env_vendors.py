"""collect_env reports from AMD ROCm, Intel XPU and Apple machines (fixtures G, H, I), values as INDEX.md states them.

The probe-side records of these vendors are tested in ``test_framework_probe_vendors.py``.
"""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.collect_env import parse_collect_env, torch_facts_from_collect_env
from gpudoctor.facts.collect_env_vendors import cpu_model, gfx_targets, mac_version, translated, xpu_devices
from gpudoctor.facts.framework_model import CollectEnvReport, FrameworkDevice
from gpudoctor.facts.sources_state import Why
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, fixture_named, line_mutations

AMD = fixture_files("G-amd", "collect_env-*.txt")
INTEL = fixture_files("H-intel", "collect_env-*.txt")
APPLE = fixture_files("I-apple", "collect_env-*.txt")
MAX_1550 = "Intel(R) Data Center GPU Max 1550"


def _report(files: list[pathlib.Path], name_part: str) -> CollectEnvReport:
    return parse_collect_env(read_fixture(fixture_named(files, name_part)))


# --- AMD ROCm (G5) ----------------------------------------------------------------------------------------------


def test_windows_rx_9070_xt_rocm_6_4() -> None:
    report = _report(AMD, "rx9070xt")
    assert report.torch_version == "2.8.0a0+gitfc14c65"
    assert report.rocm_build == "6.4.50101-9a6572ae7" and report.cuda_build is None
    assert report.missing["cuda_build"].why is Why.NOT_APPLICABLE
    assert (report.hip_runtime, report.miopen_runtime) == ("6.4.50101", "3.4.1")
    assert report.gpu_names == ["AMD Radeon RX 9070 XT (gfx1201)"] and report.gpu_gfx == ["gfx1201"]
    assert report.cuda_available is True  # torch.cuda is HIP on a ROCm build
    # The Windows CPU block (Win32_Processor as "Key: value" lines): its Name, not Manufacturer or Family.
    assert report.cpu_name == "AMD Ryzen 5 9600X 6-Core Processor"
    assert report.machine == "AMD64"
    facts = torch_facts_from_collect_env(report)
    assert (facts.hip, facts.rocm_runtime, facts.miopen) == ("6.4.50101-9a6572ae7", "6.4.50101", "3.4.1")
    assert facts.cuda is None and facts.cpu_only is False
    assert facts.python is not None and (facts.python.platform, facts.python.machine) == ("win32", "AMD64")
    assert facts.python.translated is None and facts.python.mac_version is None


def test_vllm_mi250x_gfx90a_with_feature_flags() -> None:
    report = _report(AMD, "mi250x")
    assert report.torch_version == "2.6.0.dev20240918+rocm6.2"
    assert report.rocm_build == "6.2.41133-dd7f95766"
    assert (report.hip_runtime, report.miopen_runtime) == ("6.2.41133", "3.2.0")
    assert report.gpu_names == ["AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-)"]
    assert report.gpu_gfx == ["gfx90a:sramecc+:xnack-"]
    # The lscpu block stops after "Address sizes" in this excerpt: no "Model name" line, so no CPU name.
    assert report.cpu_name is None
    facts = torch_facts_from_collect_env(report)
    assert facts.local_tag == "rocm6.2" and facts.origin.index_hint == "download.pytorch.org/whl/rocm6.2"
    assert facts.python is not None and facts.python.machine == "x86_64"


def test_2020_layout_radeon_vii_device_66a1() -> None:
    report = _report(AMD, "66a1")
    assert report.rocm_build == "3.7.20315-077bcfa0"
    assert report.gpu_names == ["Device 66a1"] and report.gpu_gfx == []  # no name, no gfx in that era's line
    assert (report.hip_runtime, report.miopen_runtime) == ("3.18.2", "2.6.0")
    assert report.cpu_name is None
    assert report.pip_packages["torch"] == "1.7.0a0+a9603c7"  # the HIP lines did not end the report early


# --- Intel XPU (H) ----------------------------------------------------------------------------------------------


def test_xpu_four_max_1550() -> None:
    report = _report(INTEL, "max-1550")
    assert report.torch_version == "2.8.0.dev20250516+xpu"
    assert report.xpu_available is True and report.xpu_build == "20250101"
    assert report.cuda_available is False and report.gpu_names == [] and report.rocm_build is None
    assert report.intel_gpu_driver == ["intel_opencl: 24.39.31294.21-1032~22.04", "level_zero: 1.17.44.0-1022~22.04"]
    assert report.xpu_gpu_names == [MAX_1550] * 4
    assert report.xpu_devices == []  # the excerpt stops before the "_XpuDeviceProperties(...)" lines
    facts = torch_facts_from_collect_env(report)
    assert (facts.xpu_available, facts.xpu_built, facts.local_tag) == (True, True, "xpu")
    assert facts.hip is None and facts.rocm_runtime is None and facts.cpu_only is False  # an XPU build


def test_xpu_detected_lines_synthetic() -> None:
    # SYNTHETIC: the "Intel GPU models detected" lines as torch's collect_env prints them ("* [i] " followed by
    # repr(torch.xpu.get_device_properties(i))); the real fixture is cut before them.  Values are made up.
    text = (
        "PyTorch version: 2.8.0+xpu\nIs XPU available: True\nXPU used to build PyTorch: 20250101\n"
        "Intel GPU models detected:\n"
        "* [0] _XpuDeviceProperties(name='Intel(R) Arc(TM) A770 Graphics', platform_name='Intel(R) oneAPI Unified "
        "Runtime over Level-Zero', type='gpu', driver_version='1.6.0', total_memory=15930MB, max_compute_units=512)\n"
        "* [1] _XpuDeviceProperties(name='Other', type='gpu')\n"
    )
    report = parse_collect_env(text)
    assert report.xpu_devices == [
        FrameworkDevice(index=0, name="Intel(R) Arc(TM) A770 Graphics", memory_total_mib=15930, platform="xpu"),
        FrameworkDevice(index=1, name="Other", platform="xpu"),
    ]
    assert torch_facts_from_collect_env(report).xpu_devices == report.xpu_devices


# --- Apple (I) --------------------------------------------------------------------------------------------------


def test_macos_12_2_1_native_arm64_m1() -> None:
    report = _report(APPLE, "macos12.2.1")
    assert report.os == "macOS 12.2.1 (arm64)" and report.machine == "arm64"
    assert report.hip_runtime is None and report.missing["hip_runtime"].why is Why.NOT_APPLICABLE
    assert report.xpu_available is None  # this torch prints no XPU line
    facts = torch_facts_from_collect_env(report)
    assert facts.python is not None
    assert (facts.python.platform, facts.python.mac_version, facts.python.translated) == ("darwin", "12.2.1", False)
    assert facts.mps_built is None and facts.mps_available is None  # collect_env prints no MPS line


def test_macos_13_7_4_m2_max_cpu_block() -> None:
    report = _report(APPLE, "m2-max")
    assert report.os == "macOS 13.7.4 (arm64)"
    assert report.xpu_available is False
    assert report.cpu_name == "Apple M2 Max"  # the chip's name is only in the CPU block
    assert report.pip_packages["torch"] == "2.10.0.dev20251008"
    facts = torch_facts_from_collect_env(report)
    assert facts.xpu_available is False and facts.xpu_built is None  # "not available" says nothing of the build
    assert facts.python is not None and facts.python.translated is False


def test_rosetta_x86_64_python_on_m2_pro() -> None:
    report = _report(APPLE, "rosetta")
    assert report.os == "macOS 15.3 (x86_64)" and report.cpu_name == "Apple M2 Pro"
    assert report.python_platform == "macOS-10.16-x86_64-i386-64bit" and report.machine == "x86_64"
    facts = torch_facts_from_collect_env(report)
    assert facts.python is not None
    # The interpreter sees "10.16" (old SDK) while the OS is 15.3; an x86_64 process on an Apple chip is translated.
    assert (facts.python.machine, facts.python.mac_version, facts.python.translated) == ("x86_64", "10.16", True)


def test_the_nvidia_reports_gain_no_vendor_values() -> None:
    for path in fixture_files("E", "*.txt"):
        report = parse_collect_env(read_fixture(path))
        assert report.gpu_gfx == [] and report.xpu_gpu_names == [] and report.xpu_devices == [], path.name
        assert report.intel_gpu_driver == [] and report.xpu_build is None, path.name


def test_sectioned_layout_cpu_info_section_synthetic() -> None:
    # SYNTHETIC: vLLM's sectioned layout with a ROCm torch and an lscpu "CPU Info" section (values made up; the
    # real sectioned fixture in E stops before its CPU section).
    rule = "=" * 30
    text = (
        f"{rule}\n  PyTorch Info\n{rule}\nPyTorch version              : 2.6.0+rocm6.2\n"
        "ROCM used to build PyTorch   : 6.2.41133-dd7f95766\nHIP runtime version          : 6.2.41133\n"
        f"{rule}\n  CPU Info\n{rule}\nArchitecture:      x86_64\nModel name:        AMD EPYC 7763 64-Core Processor\n"
        f"Model name:        a second cluster\n{rule}\nVersions of relevant libraries\n{rule}\n"
        "[pip3] torch==2.6.0+rocm6.2\n"
    )
    report = parse_collect_env(text)
    assert report.layout == "sectioned"
    assert (report.rocm_build, report.hip_runtime) == ("6.2.41133-dd7f95766", "6.2.41133")
    assert report.cpu_name == "AMD EPYC 7763 64-Core Processor"
    assert report.pip_packages == {"torch": "2.6.0+rocm6.2"}


# --- the helpers, directly ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "first", "expected"),
    [
        (
            "Model name:                           AMD EPYC 7763 64-Core Processor",
            False,
            "AMD EPYC 7763 64-Core Processor",
        ),
        ("Name: Intel(R) Core(TM) i9-13900K", False, "Intel(R) Core(TM) i9-13900K"),
        ("Name=Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz", False, "Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz"),
        ("Apple M3", True, "Apple M3"),
        ("Apple M3", False, None),  # only the block's first line can be a bare name
        ("Architecture:                         x86_64", True, None),
        ("Manufacturer: AuthenticAMD", False, None),
    ],
)
def test_cpu_model_lines(line: str, first: bool, expected: str | None) -> None:
    assert cpu_model(line, first) == expected


def test_translated_needs_both_facts() -> None:
    assert translated("darwin", "x86_64", "Apple M1") is True
    assert translated("darwin", "x86_64", "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz") is False  # an Intel Mac
    assert translated("darwin", "arm64", None) is False
    assert translated("darwin", "x86_64", None) is None
    assert translated("linux", "x86_64", "Apple M1") is None
    assert mac_version("Linux-6.8.0-x86_64-with-glibc2.39") is None
    assert gfx_targets(["AMD Radeon RX 7900 XTX (gfx1100)", "Device 66a1"]) == ["gfx1100"]


def test_live_collect_env_reads_the_lscpu_model_name() -> None:
    """The real report of the framework venv on this Linux CPU machine: lscpu's CPU block and the vendor lines."""
    python = os.environ.get("GPUDOCTOR_FRAMEWORK_PYTHON")
    if not python or not pathlib.Path(python).is_file():
        pytest.skip("GPUDOCTOR_FRAMEWORK_PYTHON is not set")
    try:
        done = subprocess.run([python, "-m", "torch.utils.collect_env"], capture_output=True, text=True, timeout=300)
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=60, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.SubprocessError):
        pytest.skip("collect_env or lscpu did not run here")
    models = [line.split(":", 1)[1].strip() for line in lscpu.stdout.splitlines() if line.startswith("Model name:")]
    report = parse_collect_env(done.stdout)
    if "Model name:" in done.stdout and models:
        assert report.cpu_name == models[0]
    assert report.xpu_available is False  # torch >= 2.5 prints "Is XPU available: False" on a CPU build
    assert report.hip_runtime is None and report.missing["hip_runtime"].why is Why.NOT_APPLICABLE
    assert report.gpu_gfx == [] and report.xpu_devices == []


# --- tolerance ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", AMD + INTEL + APPLE, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_vendor_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    text = data.draw(line_mutations(read_fixture(path)))
    report = parse_collect_env(text)
    assert isinstance(report, CollectEnvReport)
    assert all(isinstance(name, str) and name for name in report.xpu_gpu_names + report.intel_gpu_driver)
    torch_facts_from_collect_env(report)


@given(any_code_points(), st.booleans())
def test_vendor_helpers_take_any_text(text: str, first: bool) -> None:
    cpu_model(text, first)
    gfx_targets([text])
    xpu_devices(text.splitlines())
    mac_version(text)
    translated(text, text, text)
