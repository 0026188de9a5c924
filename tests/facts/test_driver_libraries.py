"""driver_libraries: driver versions from libnvidia-ml / libcuda file names (``driver-libraries.json``)."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.system_scan import scan_driver_libraries
from gpudoctor.facts.driver_libraries import parse_driver_libraries, parse_driver_library_paths
from tests.helpers.strategies import json_like, mutated_json

_CURRENT = "/usr/lib/x86_64-linux-gnu/nvidia/current"
# A scan in the shape scan_driver_libraries produces, not captured: this
# development machine's Debian layout (symlinks into nvidia/current).
SYNTHETIC_DEBIAN = {
    "libnvidia-ml": [
        {"path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "realpath": f"{_CURRENT}/libnvidia-ml.so.535.309.01"},
        {"path": f"{_CURRENT}/libnvidia-ml.so.535.309.01", "realpath": f"{_CURRENT}/libnvidia-ml.so.535.309.01"},
    ],
    "libcuda": [
        {"path": "/usr/lib/x86_64-linux-gnu/libcuda.so", "realpath": f"{_CURRENT}/libcuda.so.535.309.01"},
        {"path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "realpath": f"{_CURRENT}/libcuda.so.535.309.01"},
    ],
}
# WSL2's libraries are real files named by soname: no driver version in any name. Not captured.
SYNTHETIC_WSL = {
    "libnvidia-ml": [{"path": "/usr/lib/wsl/lib/libnvidia-ml.so.1", "realpath": "/usr/lib/wsl/lib/libnvidia-ml.so.1"}],
    "libcuda": [
        {"path": "/usr/lib/wsl/lib/libcuda.so", "realpath": "/usr/lib/wsl/lib/libcuda.so.1.1"},
        {"path": "/usr/lib/wsl/lib/libcuda.so.1.1", "realpath": "/usr/lib/wsl/lib/libcuda.so.1.1"},
    ],
}
# A half-finished upgrade: two driver versions side by side. Not captured.
SYNTHETIC_MIXED = {
    "libnvidia-ml": [
        {
            "path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "realpath": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15",
        },
        {
            "path": "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
            "realpath": "/usr/local/nvidia/lib64/libnvidia-ml.so.535.54.03",
        },
    ],
    "libcuda": [],
}


def _parse(data: object) -> dict:
    """Versions per library and, under "paths", the files behind them: the two parsers' answers side by side."""
    return {**parse_driver_libraries(data), "paths": parse_driver_library_paths(data)}


def _check_shape(result: dict) -> None:
    assert isinstance(result["libnvidia-ml"], list) and isinstance(result["libcuda"], list)
    assert isinstance(result["paths"], dict)
    for key, value in result.items():
        if key != "paths":
            assert all(isinstance(v, str) for v in value) and len(value) == len(set(value))
    for found in result["paths"].values():
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())


def test_debian_layout() -> None:
    result = _parse(SYNTHETIC_DEBIAN)
    assert result["libnvidia-ml"] == ["535.309.01"]
    assert result["libcuda"] == ["535.309.01"]
    assert result["paths"]["libcuda"]["/usr/lib/x86_64-linux-gnu/libcuda.so"] == f"{_CURRENT}/libcuda.so.535.309.01"


def test_wsl_names_are_not_driver_versions() -> None:
    result = _parse(SYNTHETIC_WSL)
    assert result["libnvidia-ml"] == [] and result["libcuda"] == []
    assert set(result["paths"]["libcuda"]) == {"/usr/lib/wsl/lib/libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1.1"}


def test_two_versions_side_by_side_keep_their_order() -> None:
    assert _parse(SYNTHETIC_MIXED)["libnvidia-ml"] == ["550.54.15", "535.54.03"]


def test_record_without_realpath_uses_its_own_name() -> None:
    result = _parse({"libcuda": [{"path": "/lib/libcuda.so.418.56"}]})
    assert result["libcuda"] == ["418.56"]
    assert result["paths"]["libcuda"] == {"/lib/libcuda.so.418.56": "/lib/libcuda.so.418.56"}


def test_empty_and_unreadable() -> None:
    empty = {"libnvidia-ml": [], "libcuda": [], "paths": {"libnvidia-ml": {}, "libcuda": {}}}
    assert _parse({}) == empty
    assert _parse(None) == empty
    assert _parse("garbage") == empty


def test_live_scan() -> None:
    record = scan_driver_libraries()
    result = _parse(record)
    _check_shape(result)
    found = sum(len(v) for v in record.values())
    assert sum(len(v) for v in result["paths"].values()) == found
    for version in result["libnvidia-ml"] + result["libcuda"]:
        assert len(version.split(".")[0]) >= 3


@given(json_like())
def test_any_json_value(value: object) -> None:
    for data in (value, {"libnvidia-ml": value, "libcuda": [value]}, {"paths": value}):
        _check_shape(_parse(data))


@given(st.lists(st.dictionaries(st.sampled_from(["path", "realpath"]), json_like()), max_size=5))
def test_records_with_wrong_types(records: list[dict]) -> None:
    _check_shape(_parse({"libnvidia-ml": records, "libcuda": records}))


@given(data=st.data())
def test_mutated_scans_never_raise(data: st.DataObject) -> None:
    for scan in (SYNTHETIC_DEBIAN, SYNTHETIC_WSL, SYNTHETIC_MIXED):
        _check_shape(_parse(data.draw(mutated_json(copy.deepcopy(scan)))))


@given(major=st.integers(100, 999), minor=st.integers(0, 999), patch=st.none() | st.integers(0, 99))
def test_generated_names_round_trip(major: int, minor: int, patch: int | None) -> None:
    version = f"{major}.{minor}" + (f".{patch:02d}" if patch is not None else "")
    record = {"libcuda": [{"path": "/lib/libcuda.so.1", "realpath": f"/lib/libcuda.so.{version}"}]}
    assert _parse(record)["libcuda"] == [version]
