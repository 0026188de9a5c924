"""cudnn: installs grouped by major, from the ``cudnn.json`` scan and from the loader cache."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.system_scan import scan_cudnn
from gpudoctor.facts.cudnn import CudnnInstall, cudnn_from_ldconfig, parse_cudnn
from gpudoctor.facts.ldconfig import parse_ldconfig
from gpudoctor.facts.model import LoaderCacheEntry
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import json_like, mutated_json

LDCONFIG_FILES = fixture_files("D", "ldconfig-*.txt")

# A scan in the shape scan_cudnn produces (header text reduced to its define
# lines), written from cuDNN's documented layout, not captured: cuDNN 8 from
# distro packages beside cuDNN 9 under a toolkit, plus a bare dev symlink.
SYNTHETIC_SCAN = {
    "headers": {
        "/usr/include/cudnn_version.h": "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7",
        "/usr/include/cudnn.h": "",  # cuDNN 8+ keeps the defines in cudnn_version.h
        "/usr/local/cuda-12.4/include/cudnn_version.h": "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0",
    },
    "libraries": [
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
        "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8",
        "/usr/local/cuda-12.4/lib64/libcudnn.so.9",
        "/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9",
        "/usr/local/cuda-12.4/lib64/libcudnn.so",
    ],
}


def test_two_majors_side_by_side() -> None:
    v8, v9, _unknown = parse_cudnn(SYNTHETIC_SCAN)
    assert v8 == CudnnInstall(
        version="8.9.7",
        major=8,
        header="/usr/include/cudnn_version.h",
        libraries=[
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
            "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8",
        ],
    )
    assert (v9.version, v9.major, v9.header) == ("9.1.0", 9, "/usr/local/cuda-12.4/include/cudnn_version.h")
    assert v9.libraries == [
        "/usr/local/cuda-12.4/lib64/libcudnn.so.9",
        "/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9",
    ]


def test_unversioned_library_with_several_majors_is_its_own_group() -> None:
    # With two majors present, which one the bare "libcudnn.so" points at is unknown.
    installs = parse_cudnn(SYNTHETIC_SCAN)
    assert [i.major for i in installs] == [8, 9, None]
    assert installs[-1] == CudnnInstall(libraries=["/usr/local/cuda-12.4/lib64/libcudnn.so"])


def test_one_major_takes_the_dev_symlink_and_library_version() -> None:
    installs = parse_cudnn(
        {"headers": {}, "libraries": ["/usr/lib/libcudnn.so", "/usr/lib/libcudnn.so.8.6.0", "/usr/lib/libcudnn.so.8"]}
    )
    assert installs == [
        CudnnInstall(
            version="8.6.0",
            major=8,
            header=None,
            libraries=["/usr/lib/libcudnn.so", "/usr/lib/libcudnn.so.8", "/usr/lib/libcudnn.so.8.6.0"],
        )
    ]


def test_header_without_library() -> None:
    installs = parse_cudnn(
        {"headers": {"/usr/include/cudnn_version.h": "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 3"}, "libraries": []}
    )
    assert installs == [CudnnInstall(version="9.3", major=9, header="/usr/include/cudnn_version.h", libraries=[])]


def test_cudnn4_container_from_ldconfig() -> None:
    path = next((p for p in LDCONFIG_FILES if "cudnn4" in p.name), None)
    if path is None:
        pytest.skip("fixture not available")
    installs = cudnn_from_ldconfig(parse_ldconfig(read_fixture(path)))
    assert installs == [
        CudnnInstall(version=None, major=4, header=None, libraries=["/usr/lib/x86_64-linux-gnu/libcudnn.so.4"])
    ]


def test_wsl_ldconfig_has_no_cudnn() -> None:
    path = next((p for p in LDCONFIG_FILES if "wsl2" in p.name), None)
    if path is None:
        pytest.skip("fixture not available")
    assert cudnn_from_ldconfig(parse_ldconfig(read_fixture(path))) == []


def test_ldconfig_two_majors() -> None:
    entries = [
        LoaderCacheEntry("libcudnn.so.9", "libc6,x86-64", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
        LoaderCacheEntry("libcudnn_ops_infer.so.8", "libc6,x86-64", "/opt/cudnn8/lib/libcudnn_ops_infer.so.8"),
        LoaderCacheEntry("libcudart.so.12", "libc6,x86-64", "/usr/local/cuda/lib64/libcudart.so.12"),
    ]
    installs = cudnn_from_ldconfig(entries)
    assert [(i.major, i.libraries) for i in installs] == [
        (8, ["/opt/cudnn8/lib/libcudnn_ops_infer.so.8"]),
        (9, ["/usr/lib/x86_64-linux-gnu/libcudnn.so.9"]),
    ]


def test_live_scan_never_raises() -> None:
    assert all(isinstance(i, CudnnInstall) for i in parse_cudnn(scan_cudnn()))


@given(json_like())
def test_any_json_value(value: object) -> None:
    for data in (value, {"headers": value, "libraries": value}, {"headers": {"h": value}, "libraries": [value]}):
        installs = parse_cudnn(data)
        assert all(isinstance(i, CudnnInstall) and isinstance(i.libraries, list) for i in installs)
    assert cudnn_from_ldconfig(value) == [] or isinstance(value, list)


@given(st.dictionaries(st.text(), st.text()), st.lists(st.text()))
def test_any_header_text_and_library_names(headers: dict[str, str], libraries: list[str]) -> None:
    installs = parse_cudnn({"headers": headers, "libraries": libraries})
    majors = [i.major for i in installs]
    assert len(majors) == len(set(majors))  # one install per major
    for install in installs:
        assert install.major is None or isinstance(install.major, int)
        assert install.version is None or install.version.split(".")[0] == str(install.major)


@given(data=st.data())
def test_mutated_scan_never_raises(data: st.DataObject) -> None:
    assert isinstance(parse_cudnn(data.draw(mutated_json(copy.deepcopy(SYNTHETIC_SCAN)))), list)


@given(
    st.lists(
        st.builds(LoaderCacheEntry, st.text(max_size=20), st.none() | st.text(max_size=5), st.text(max_size=20)),
        max_size=6,
    )
)
def test_any_loader_entries(entries: list[LoaderCacheEntry]) -> None:
    installs = cudnn_from_ldconfig(entries)
    assert all(isinstance(i, CudnnInstall) for i in installs)


@given(major=st.integers(1, 20), minor=st.integers(0, 20), patch=st.integers(0, 20))
def test_generated_headers_round_trip(major: int, minor: int, patch: int) -> None:
    header = f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}"
    (install,) = parse_cudnn(
        {"headers": {"/usr/include/cudnn_version.h": header}, "libraries": [f"/usr/lib/libcudnn.so.{major}"]}
    )
    assert (install.version, install.major) == (f"{major}.{minor}.{patch}", major)
    assert install.libraries == [f"/usr/lib/libcudnn.so.{major}"]
