"""The pure helpers of the smoke probes and runner: medians, bandwidth formulas, sizes from free memory, time shares.

They are imported from the probe modules themselves (stdlib only at import time; torch is imported only when
a run starts), so what is tested here is what runs in the target Python.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.smoke_runner import parse_progress_line, smoke_argv, smoke_probe_path
from gpudoctor.facts.smoke_model import PROGRESS_PREFIX
from gpudoctor.probes import _probe_common, protocol
from gpudoctor.probes._smoke_helpers import (
    MIB,
    busbw,
    choose_bytes,
    choose_matmul_n,
    cpu_has_native_bf16,
    matmul_tflops,
    median,
)
from gpudoctor.probes._smoke_torch_workloads import MODES

# --- median ---------------------------------------------------------------------------------------------


def test_median_odd_even_and_empty():
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert median([]) is None
    assert median([None, 5.0, None]) == 5.0  # unmeasured repeats are ignored, not counted as zero


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=50))
def test_median_is_between_min_and_max_and_order_free(values):
    result = median(values)
    assert min(values) <= result <= max(values)
    assert median(list(reversed(values))) == result
    below = sum(1 for v in values if v < result)
    above = sum(1 for v in values if v > result)
    assert below <= len(values) // 2 and above <= len(values) // 2


# --- rates ----------------------------------------------------------------------------------------------


def test_matmul_tflops_is_2n_cubed_over_time():
    assert matmul_tflops(8192, 0.01) == pytest.approx(2 * 8192**3 / 0.01 / 1e12)  # 109.95 TFLOP/s
    assert matmul_tflops(1000, 2.0) == pytest.approx(1e-3)
    assert matmul_tflops(1000, 0) is None and matmul_tflops(None, 1.0) is None


def test_busbw_follows_nccl_tests():
    # nccl-tests (doc/PERFORMANCE.md): all-reduce busbw = algbw * 2(n-1)/n.
    assert busbw(10.0, 2) == pytest.approx(10.0)
    assert busbw(10.0, 4) == pytest.approx(15.0)
    assert busbw(10.0, 8) == pytest.approx(17.5)
    assert busbw(10.0, 1) == 0.0  # one rank moves nothing over any bus
    assert busbw(None, 2) is None and busbw(10.0, 0) is None


@given(st.floats(min_value=1e-6, max_value=1e4, allow_nan=False), st.integers(min_value=1, max_value=1024))
def test_busbw_grows_with_ranks_towards_twice_algbw(algbw, ranks):
    assert 0 <= busbw(algbw, ranks) < 2 * algbw
    assert busbw(algbw, ranks) <= busbw(algbw, ranks + 1)


# --- sizes from free memory -----------------------------------------------------------------------------


def test_matmul_size_on_an_idle_80gb_gpu_is_the_preferred_one():
    assert choose_matmul_n(8192, 80 * 1024**3, 4) == 8192


def test_matmul_size_on_a_nearly_full_gpu_is_halved_until_a_quarter_of_free_memory_holds_three_matrices():
    # 1 GiB free: a quarter is 256 MiB; three fp32 8192² matrices need 768 MiB, 4096² need 192 MiB.
    assert choose_matmul_n(8192, 1024**3, 4) == 4096
    # fp16 halves the bytes: three 8192² fp16 matrices (384 MiB) fit a quarter of 2 GiB.
    assert choose_matmul_n(8192, 2 * 1024**3, 2) == 8192
    assert choose_matmul_n(8192, 1024**3, 2) == 4096


def test_matmul_size_none_when_even_the_smallest_does_not_fit_and_preferred_when_free_is_unknown():
    assert choose_matmul_n(8192, 100_000, 4) is None
    assert choose_matmul_n(1536, None, 4) == 1536


@given(
    st.sampled_from([1024, 1536, 2048, 4096, 8192, 16384]),
    st.integers(min_value=0, max_value=200 * 1024**3),
    st.sampled_from([2, 4]),
)
def test_matmul_size_never_uses_more_than_a_quarter_of_free_memory(preferred, free, elem):
    n = choose_matmul_n(preferred, free, elem)
    if n is None:
        assert 3 * 256 * 256 * elem > free / 4
    else:
        assert n <= preferred and 3 * n * n * elem <= free / 4
        # and it is the largest halving that fits
        assert n == preferred or 3 * (2 * n) ** 2 * elem > free / 4


@given(st.integers(min_value=0, max_value=64 * 1024**3), st.integers(min_value=1, max_value=3))
def test_copy_buffers_fit_a_quarter_of_free_memory(free, buffers):
    size = choose_bytes(256 * MIB, free, buffers=buffers)
    if size is None:
        assert buffers * MIB > free / 4
    else:
        assert buffers * size <= free / 4 and size <= 256 * MIB


# --- the CPU's bf16 -------------------------------------------------------------------------------------


def test_cpu_bf16_from_cpuinfo_flags():
    assert cpu_has_native_bf16("processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 amx_tile\n")
    assert cpu_has_native_bf16("Features\t: fp asimd bf16 i8mm\n")  # Arm (Graviton 3, Neoverse V1)
    assert not cpu_has_native_bf16("flags\t\t: fpu sse avx2 avx512f\n")
    assert not cpu_has_native_bf16("model name\t: something with bf16 in its name\n")  # only the flag lines count
    assert not cpu_has_native_bf16(None)


def test_modes_keep_quick_within_the_promised_budget():
    assert protocol.SMOKE_BUDGET_S["quick"] < 30 < protocol.SMOKE_BUDGET_S["full"]
    assert set(MODES) == set(protocol.SMOKE_BUDGET_S) == set(protocol.SMOKE_MODES)
    for mode in MODES.values():
        # the CPU baseline is capped: in quick mode it leaves most of the budget to the accelerators
        assert sum(mode["cpu_cap_s"].values()) * 2 < protocol.SMOKE_BUDGET_S["quick"] or mode is MODES["full"]


# --- the runner's side of the progress protocol ---------------------------------------------------------


def test_progress_line_written_by_the_probe_helper_is_parsed_back(tmp_path: pathlib.Path):
    path = tmp_path / "stderr.txt"
    with path.open("w") as stream:
        _probe_common.progress("matmul", "cuda:0 fp16", 3, 12, stream=stream)
    line = path.read_text().rstrip("\n")
    assert line.startswith(PROGRESS_PREFIX)
    assert parse_progress_line(line) == {"stage": "matmul", "detail": "cuda:0 fp16", "done": 3, "total": 12}


def test_other_stderr_lines_are_not_progress():
    assert parse_progress_line("W0101 some framework warning") is None
    assert parse_progress_line(PROGRESS_PREFIX + "{not json") is None
    assert parse_progress_line(PROGRESS_PREFIX + json.dumps([1, 2])) is None


@given(st.text(max_size=200))
def test_progress_parser_never_raises(text):
    for line in (text, PROGRESS_PREFIX + text):
        event = parse_progress_line(line)
        assert event is None or isinstance(event, dict)


def test_smoke_argv_names_the_probe_file_and_the_default_budget():
    argv = smoke_argv("/venv/bin/python", "torch", "full")
    assert argv == [
        "/venv/bin/python",
        smoke_probe_path("torch"),
        "--mode",
        "full",
        "--budget",
        "180",
        "--devices",
        "all",
    ]
    assert pathlib.Path(smoke_probe_path("torch")).is_file()
    assert smoke_argv("/p", "torch", "quick", 7.5)[5] == "7.5"
