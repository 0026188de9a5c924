"""cuda_toolkit: toolkit versions from the ``cuda-toolkits.json`` record of ``scan_cuda_toolkits``."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.system_scan import scan_cuda_toolkits
from gpudoctor.facts.cuda_toolkit import CudaToolkit, parse_cuda_toolkits, parse_toolkit_links
from tests.helpers.strategies import json_like, mutated_json

# Written from NVIDIA's version.json layout, not captured.
SYNTHETIC_VERSION_JSON = json.dumps(
    {
        "cuda": {"name": "CUDA SDK", "version": "12.2.2"},
        "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.2.140"},
        "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.2.140"},
    }
)
# Written from the CUDA <= 11.0 version.txt layout, not captured.
SYNTHETIC_VERSION_TXT = "CUDA Version 10.2.89\n"


def _record(path: str, **overrides: object) -> dict:
    record = {
        "path": path,
        "realpath": path,
        "version.json": None,
        "version.txt": None,
        "nvcc": False,
        "dist_info": [],
        "cudart": [],
    }
    record.update(overrides)
    return record


# A scan in the shape scan_cuda_toolkits produces, not captured.
SYNTHETIC_SCAN = {
    "toolkits": [
        _record(
            "/usr/local/cuda",
            realpath="/usr/local/cuda-12.2",
            **{"version.json": SYNTHETIC_VERSION_JSON},
            nvcc=True,
            cudart=["libcudart.so", "libcudart.so.12", "libcudart.so.12.2.140"],
        ),
        _record(
            "/usr/local/cuda-10.2",
            **{"version.txt": SYNTHETIC_VERSION_TXT},
            nvcc=True,
            cudart=["libcudart.so.10.2", "libcudart.so.10.2.89"],
        ),
        _record(
            "/usr/local/cuda-13.0",
            nvcc=True,
            dist_info=[
                "nvidia_cuda_cccl-13.0.85.dist-info",
                "nvidia_cuda_nvcc-13.0.88.dist-info",
                "nvidia_cuda_runtime-13.0.96.dist-info",
            ],
        ),
        _record("/opt/cuda-11", cudart=["libcudart.so.11.0"]),
        _record("/usr/local/cuda/dist-info", realpath="/usr/local/cuda-12.2/dist-info"),
    ],
    "links": {"/usr/local/cuda": "/usr/local/cuda-12.2"},
}


def test_synthetic_scan_versions_and_sources() -> None:
    toolkits = {t.path: t for t in parse_cuda_toolkits(SYNTHETIC_SCAN)}
    assert toolkits["/usr/local/cuda"] == CudaToolkit(
        "/usr/local/cuda", "/usr/local/cuda-12.2", "12.2.2", "version.json", True
    )
    assert (toolkits["/usr/local/cuda-10.2"].version, toolkits["/usr/local/cuda-10.2"].version_source) == (
        "10.2.89",
        "version.txt",
    )
    assert (toolkits["/usr/local/cuda-13.0"].version, toolkits["/usr/local/cuda-13.0"].version_source) == (
        "13.0",
        "dist-info",
    )
    # libcudart.so.11.0 is the soname of every 11.x release: only the major is known.
    assert (toolkits["/opt/cuda-11"].version, toolkits["/opt/cuda-11"].version_source) == ("11", "libcudart")
    assert toolkits["/opt/cuda-11"].major == 11
    # A directory inside another toolkit is not a toolkit.
    assert "/usr/local/cuda/dist-info" not in toolkits


def test_version_json_beats_everything() -> None:
    record = _record(
        "/x",
        **{"version.json": SYNTHETIC_VERSION_JSON, "version.txt": "CUDA Version 9.0.176"},
        dist_info=["nvidia_cuda_nvcc-13.0.88.dist-info"],
        cudart=["libcudart.so.8.0"],
    )
    assert parse_cuda_toolkits([record])[0].version_source == "version.json"


def test_version_json_without_cuda_entry_uses_cudart_major_minor() -> None:
    text = json.dumps({"cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}})
    toolkit = parse_cuda_toolkits([_record("/x", **{"version.json": text})])[0]
    assert (toolkit.version, toolkit.version_source) == ("12.4", "version.json")


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["libcudart.so.13"], "13"),
        (["libcudart.so.11.0", "libcudart.so.11.8.89"], "11.8"),
        (["libcudart.so.10.2"], "10.2"),
        (["libcudart.so", "libcudart_static.a"], None),
    ],
)
def test_cudart_names(names: list[str], expected: str | None) -> None:
    assert parse_cuda_toolkits([_record("/x", cudart=names)])[0].version == expected


def test_broken_version_json_falls_through() -> None:
    toolkit = parse_cuda_toolkits([_record("/x", **{"version.json": '{"cuda": {"vers'}, cudart=["libcudart.so.12"])])[0]
    assert (toolkit.version, toolkit.version_source) == ("12", "libcudart")


def test_links() -> None:
    assert parse_toolkit_links(SYNTHETIC_SCAN) == {"/usr/local/cuda": "/usr/local/cuda-12.2"}
    assert parse_toolkit_links({"links": {"/a": 3, 4: "/b", "/c": "/d"}}) == {"/c": "/d"}


def test_this_machines_cuda_13_0_toolkit() -> None:
    """/usr/local/cuda-13.0 here has no version.json: its dist-info says 13.0."""
    if not pathlib.Path("/usr/local/cuda-13.0/dist-info").is_dir():
        pytest.skip("no /usr/local/cuda-13.0 toolkit here")
    toolkits = parse_cuda_toolkits(scan_cuda_toolkits(environ={}))
    cuda13 = [t for t in toolkits if t.realpath == "/usr/local/cuda-13.0"]
    assert len(cuda13) == 1
    if not pathlib.Path("/usr/local/cuda-13.0/version.json").exists():
        assert (cuda13[0].version, cuda13[0].version_source) == ("13.0", "dist-info")
    assert cuda13[0].has_nvcc == pathlib.Path("/usr/local/cuda-13.0/bin/nvcc").is_file()
    assert not [t for t in toolkits if t.realpath.endswith("/dist-info")]


def test_live_scan_never_raises() -> None:
    for toolkit in parse_cuda_toolkits(scan_cuda_toolkits()):
        assert isinstance(toolkit, CudaToolkit)


@given(json_like())
def test_any_json_value(value: object) -> None:
    for data in (value, {"toolkits": value, "links": value}, {"toolkits": [value]}):
        toolkits = parse_cuda_toolkits(data)
        assert all(isinstance(t, CudaToolkit) and isinstance(t.has_nvcc, bool) for t in toolkits)
        links = parse_toolkit_links(data)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in links.items())


@given(
    st.dictionaries(
        st.sampled_from(["path", "realpath", "version.json", "version.txt", "nvcc", "dist_info", "cudart"]), json_like()
    )
)
def test_records_with_wrong_types(record: dict) -> None:
    for toolkit in parse_cuda_toolkits([record]):
        assert toolkit.version is None or isinstance(toolkit.version, str)
        assert toolkit.version_source in (None, "version.json", "version.txt", "dist-info", "libcudart")
        assert toolkit.major is None or isinstance(toolkit.major, int)


@given(data=st.data())
def test_mutated_scan_never_raises(data: st.DataObject) -> None:
    mutated = data.draw(mutated_json(copy.deepcopy(SYNTHETIC_SCAN)))
    assert isinstance(parse_cuda_toolkits(mutated), list)
    assert isinstance(parse_toolkit_links(mutated), dict)


@given(st.text())
def test_any_version_json_text(text: str) -> None:
    toolkit = parse_cuda_toolkits([_record("/x", **{"version.json": text, "version.txt": text})])[0]
    assert toolkit.version is None or isinstance(toolkit.version, str)
