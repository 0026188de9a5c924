"""``sycl-ls`` listings, old and new bracket formats, from the real captures in ../shared/fixtures/H-intel."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.sycl_ls import level_zero_gpus, opencl_gpus, parse_sycl_ls
from tests.helpers.fixtures import fixture_text

WINDOWS_OLD = "H-intel/sycl-ls-windows-arc-a770-plus-uhd770-old-ext_oneapi-format-llamacpp-5513.txt"
OPENCL_ONLY = "H-intel/sycl-ls-verbose-ci-arc-a750-opencl-only-no-level_zero-intel-llvm-17535.txt"
CPU_ONLY = "H-intel/sycl-ls-cpu-only-no-gpu-i7-8750h-stable-diffusion-cpp-330.txt"


def test_old_format_on_windows_six_entries_the_a770_is_level_zero_device_1() -> None:
    devices = parse_sycl_ls(fixture_text(WINDOWS_OLD))
    assert len(devices) == 6
    assert [(d.backend, d.device_type, d.index) for d in devices[:4]] == [
        ("opencl", "acc", 0),
        ("opencl", "cpu", 1),
        ("opencl", "gpu", 2),
        ("opencl", "gpu", 3),
    ]
    zero = level_zero_gpus(devices)
    assert [(d.index, d.name) for d in zero] == [
        (0, "Intel(R) UHD Graphics 770"),
        (1, "Intel(R) Arc(TM) A770 Graphics"),
    ]
    assert opencl_gpus(devices)[1].driver_version == "31.0.101.5186"
    assert zero[1].platform == "Intel(R) Level-Zero"


def test_new_format_a750_only_under_opencl_and_the_ci_title_line_is_skipped() -> None:
    devices = parse_sycl_ls(fixture_text(OPENCL_ONLY))
    assert [d.backend for d in devices] == ["native_cpu", "opencl", "opencl", "opencl"]
    assert level_zero_gpus(devices) == ()
    gpu = opencl_gpus(devices)[0]
    assert (gpu.name, gpu.index, gpu.driver_version) == ("Intel(R) Arc(TM) A750 Graphics", 1, "25.05.32567.17")


def test_cpu_only_laptop_lists_no_gpu() -> None:
    devices = parse_sycl_ls(fixture_text(CPU_ONLY))
    assert [(d.backend, d.device_type) for d in devices] == [("opencl", "cpu")]
    assert devices[0].name == "Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz"


@given(st.text(max_size=3000))
def test_any_text_parses_without_raising(text: str) -> None:
    parse_sycl_ls(text)
    parse_sycl_ls("[level_zero:gpu][level_zero:0] " + text)
    parse_sycl_ls("[ext_oneapi_level_zero:gpu:0] " + text)
