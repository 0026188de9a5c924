"""ldconfig: the loader cache listing, full (live) and as pasted ``ldconfig -p | grep`` excerpts."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.ldconfig import find_libraries, parse_ldconfig
from gpudoctor.facts.model import LoaderCacheEntry
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import fixture_named, json_like, line_mutations

LDCONFIG_FILES = fixture_files("D", "ldconfig-*.txt")


def _fixture(name_part: str) -> str:
    return read_fixture(fixture_named(LDCONFIG_FILES, name_part))


def _live_ldconfig() -> str:
    binary = shutil.which("ldconfig") or ("/sbin/ldconfig" if pathlib.Path("/sbin/ldconfig").exists() else None)
    if binary is None:
        pytest.skip("no ldconfig here")
    try:
        result = subprocess.run([binary, "-p"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("ldconfig -p did not run")
    if result.returncode != 0 or not result.stdout:
        pytest.skip("ldconfig -p gave nothing")
    return result.stdout


def test_wsl2_has_libcuda_so_1_but_no_libcuda_so() -> None:
    entries = parse_ldconfig(_fixture("libcuda-wsl2"))
    assert len(entries) == 3  # the prompt line is not an entry
    libcuda = find_libraries(entries, "libcuda.so")
    assert libcuda == [LoaderCacheEntry("libcuda.so.1", "libc6,x86-64", "/usr/lib/wsl/lib/libcuda.so.1")]
    assert not [entry for entry in entries if entry.soname == "libcuda.so"]
    # "libcuda" alone is a plain prefix and also finds the runtime.
    assert {entry.soname for entry in find_libraries(entries, "libcuda")} == {
        "libcuda.so.1",
        "libcudart.so.11.0",
        "libcudart.so",
    }


def test_cudnn4_container_grep() -> None:
    entries = parse_ldconfig(_fixture("cudnn-cuda7.5-cudnn4"))
    assert entries == [LoaderCacheEntry("libcudnn.so.4", "libc6,x86-64", "/usr/lib/x86_64-linux-gnu/libcudnn.so.4")]


def test_live_full_listing_matches_its_header_count() -> None:
    text = _live_ldconfig()
    entries = parse_ldconfig(text)
    header = re.match(r"(\d+) libs found in cache", text)
    if header:
        assert len(entries) == int(header.group(1))
    assert entries and all(entry.path.startswith("/") for entry in entries)
    assert all(" " not in entry.soname for entry in entries)


def test_os_abi_and_hwcap_are_not_part_of_the_arch() -> None:
    # Written from the documented format (glibc ldconfig print_entry), not captured.
    synthetic = (
        "\tlibfoo.so.1 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libfoo.so.1\n"
        "\tlibbar.so.2 (libc6,x86-64, hwcap: 0x0000000000000004) => /usr/lib/bar/libbar.so.2\n"
        "\tlibold.so.3 (ELF) => /usr/lib/libold.so.3\n"
        "\tlibsp.so (libc6,x86-64) => /opt/with space/libsp.so\n"
    )
    entries = parse_ldconfig(synthetic)
    assert [(e.soname, e.arch, e.path) for e in entries] == [
        ("libfoo.so.1", "libc6,x86-64", "/lib/x86_64-linux-gnu/libfoo.so.1"),
        ("libbar.so.2", "libc6,x86-64", "/usr/lib/bar/libbar.so.2"),
        ("libold.so.3", "ELF", "/usr/lib/libold.so.3"),
        ("libsp.so", "libc6,x86-64", "/opt/with space/libsp.so"),
    ]


@pytest.mark.parametrize("text", ["", "ldconfig: command not found", "542 libs found in cache `/etc/ld.so.cache'\n"])
def test_no_entries(text: str) -> None:
    assert parse_ldconfig(text) == []


def test_find_libraries_tolerates_junk() -> None:
    assert find_libraries(None, "libcuda") == []
    assert find_libraries(["libcuda.so.1"], "libcuda") == []
    assert find_libraries([], None) == []  # type: ignore[arg-type]


@given(st.text())
def test_any_text_gives_entries(text: str) -> None:
    entries = parse_ldconfig(text)
    assert isinstance(entries, list)
    assert all(isinstance(entry, LoaderCacheEntry) and entry.soname and entry.path for entry in entries)
    assert isinstance(find_libraries(entries, "lib"), list)


@given(json_like(), st.text(max_size=5))
def test_any_json_value_is_unknown_not_an_error(value: object, prefix: str) -> None:
    if not isinstance(value, str):
        assert parse_ldconfig(value) == []
    assert find_libraries(value, prefix) == []


@pytest.mark.parametrize("path", LDCONFIG_FILES, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_real_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    entries = parse_ldconfig(data.draw(line_mutations(read_fixture(path))))
    assert all(isinstance(entry, LoaderCacheEntry) for entry in entries)


_SONAME = st.from_regex(r"lib[a-z0-9_+-]{1,12}\.so(\.[0-9]{1,3}){0,3}", fullmatch=True)
_PATH = st.from_regex(r"(/[a-z0-9_.-]{1,10}){1,4}", fullmatch=True)


@given(
    st.lists(st.tuples(_SONAME, st.sampled_from(["libc6,x86-64", "libc6,AArch64", "libc6"]), _PATH), max_size=8),
    st.sampled_from(["\t", "        "]),
)
def test_generated_listings_round_trip(rows: list[tuple[str, str, str]], indent: str) -> None:
    text = f"{len(rows)} libs found in cache `/etc/ld.so.cache'\n"
    text += "".join(f"{indent}{soname} ({arch}) => {path}\n" for soname, arch, path in rows)
    assert [(e.soname, e.arch, e.path) for e in parse_ldconfig(text)] == rows
