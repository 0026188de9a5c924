"""nvcc: ``nvcc --version`` output from real machines (Linux, Windows, with a prompt line)."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.model import NvccInfo
from gpudoctor.facts.nvcc import parse_nvcc_version
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import fixture_named, line_mutations, non_text_json

NVCC_FILES = fixture_files("D", "nvcc-*.txt")


def _fixture(name_part: str) -> str:
    return read_fixture(fixture_named(NVCC_FILES, name_part))


def test_nvcc_12_8_after_a_prompt_line() -> None:
    text = _fixture("nvcc-12.8.93")
    assert text.startswith("root@")  # the capture's own prompt line
    assert parse_nvcc_version(text) == NvccInfo(
        release="12.8", version="12.8.93", build="cuda_12.8.r12.8/compiler.35583870_0"
    )


def test_nvcc_11_0_the_format_that_broke_collect_env() -> None:
    info = parse_nvcc_version(_fixture("nvcc-11.0.221"))
    assert info == NvccInfo(release="11.0", version="11.0.221", build="cuda_11.0_bu.TC445_37.28845127_0")


def test_windows_nvcc_10_2_has_no_build_line() -> None:
    info = parse_nvcc_version(_fixture("nvcc-10.2.89-windows"))
    assert info == NvccInfo(release="10.2", version="10.2.89", build=None)


def test_windows_line_endings() -> None:
    # The real Windows capture, re-terminated with CRLF as cmd.exe writes it.
    info = parse_nvcc_version(_fixture("nvcc-10.2.89-windows").replace("\n", "\r\n"))
    assert (info.release, info.version) == ("10.2", "10.2.89")


@pytest.mark.parametrize("text", ["", "bash: nvcc: command not found", "nvcc fatal   : No input files specified"])
def test_not_nvcc_output_is_unknown(text: str) -> None:
    assert parse_nvcc_version(text) == NvccInfo()


def test_live_nvcc_if_present() -> None:
    import shutil
    import subprocess

    nvcc = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if pathlib.Path("/usr/local/cuda/bin/nvcc").is_file() else None
    )
    if nvcc is None:
        pytest.skip("no nvcc here")
    try:
        output = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("nvcc did not run")
    info = parse_nvcc_version(output)
    assert info.release is not None and info.version is not None and info.version.startswith(info.release)


@given(st.text())
def test_any_text_gives_nvcc_info(text: str) -> None:
    info = parse_nvcc_version(text)
    assert isinstance(info, NvccInfo)
    for value in (info.release, info.version, info.build):
        assert value is None or isinstance(value, str)


@given(non_text_json())
def test_any_json_value_is_unknown_not_an_error(value: object) -> None:
    assert parse_nvcc_version(value) == NvccInfo()


@pytest.mark.parametrize("path", NVCC_FILES, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_real_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    assert isinstance(parse_nvcc_version(data.draw(line_mutations(read_fixture(path)))), NvccInfo)


@given(major=st.integers(1, 99), minor=st.integers(0, 99), patch=st.integers(0, 999))
def test_generated_release_lines_round_trip(major: int, minor: int, patch: int) -> None:
    info = parse_nvcc_version(f"Cuda compilation tools, release {major}.{minor}, V{major}.{minor}.{patch}\n")
    assert (info.release, info.version) == (f"{major}.{minor}", f"{major}.{minor}.{patch}")
