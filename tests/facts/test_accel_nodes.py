"""The accelerator device-node record (``accel-device-nodes.json``) and the ROCm install record
(``rocm-install.json``) as typed facts. Every record here is synthetic, in the scans' own shape."""

from __future__ import annotations

import pathlib

from hypothesis import given, settings

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.scan_amd import scan_accel_device_nodes, scan_rocm_install
from gpudoctor.facts.accel_nodes import AccelNodes, parse_accel_nodes
from gpudoctor.facts.amd_model import RocmInstall
from gpudoctor.facts.rocm_install import parse_rocm_install, release
from gpudoctor.facts.sources_state import Why
from tests.helpers.strategies import json_like

SYNTHETIC_NODES = {
    "nodes": {
        "/dev/kfd": {
            "char_device": True,
            "mode": "0o660",
            "gid": 992,
            "group": "render",
            "readable": False,
            "writable": False,
        },
        "/dev/dri/renderD129": {"char_device": True, "group": "render", "readable": True, "writable": True},
        "/dev/dri/renderD128": {"char_device": True, "group": "render", "readable": True, "writable": True},
        "/dev/dri/card0": {"char_device": True, "group": "video", "readable": True, "writable": True},
        "/dev/vfio/0": {"error": "Permission denied"},
        "relative": {"readable": True},
    },
    "uid": 1000,
    "root": False,
    "groups": [{"gid": 1000, "name": "ana"}, {"gid": 44, "name": "video"}, {"gid": 7, "name": None}],
    "dri_directory": True,
}


def test_synthetic_nodes_typed() -> None:
    nodes = parse_accel_nodes(SYNTHETIC_NODES)
    assert nodes.collected and nodes.uid == 1000 and nodes.is_root is False
    assert nodes.user_groups == ("ana", "video")
    assert nodes.kfd is not None and nodes.kfd.group == "render" and nodes.kfd.gid == 992
    assert nodes.kfd.usable is False and nodes.kfd.mode == "0o660"
    assert [n.path for n in nodes.render_nodes] == ["/dev/dri/renderD128", "/dev/dri/renderD129"]
    assert nodes.nodes["/dev/vfio/0"].error == "Permission denied" and nodes.nodes["/dev/vfio/0"].usable is None
    assert "relative" not in nodes.nodes


def test_not_collected() -> None:
    assert parse_accel_nodes(None) == AccelNodes()
    assert parse_accel_nodes(None).collected is False


def test_scan_output_parses(tmp_path: pathlib.Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/kfd").write_text("")  # synthetic: a plain file standing in for the device
    nodes = parse_accel_nodes(scan_accel_device_nodes(str(tmp_path)))
    assert nodes.kfd is not None and nodes.kfd.char_device is False and nodes.kfd.usable is True


@settings(max_examples=150, deadline=None)
@given(json_like())
def test_accel_nodes_never_raise(data: object) -> None:
    assert isinstance(parse_accel_nodes(data), AccelNodes)


# ---------------------------------------------------------------- rocm-install.json


def test_release() -> None:
    assert release("6.2.2\n") == "6.2.2" and release("7.1.1-38\n") == "7.1.1"
    assert release("unknown") is None and release(None) is None


def test_the_version_opt_rocm_points_at(tmp_path: pathlib.Path) -> None:
    for version in ("6.1.0", "6.2.2", "5.7.1"):
        info = tmp_path / f"opt/rocm-{version}/.info"
        info.mkdir(parents=True)
        (info / "version").write_text(f"{version}\n")  # synthetic install tree
    (tmp_path / "opt/rocm").symlink_to(tmp_path / "opt/rocm-6.1.0")
    rocm = parse_rocm_install(scan_rocm_install(str(tmp_path)))
    assert rocm.version == "6.1.0" and rocm.path == "/opt/rocm-6.1.0"
    assert rocm.all_versions == ("5.7.1", "6.1.0", "6.2.2")
    assert rocm.source == ".info/version" and rocm.missing is None


def test_newest_when_opt_rocm_is_absent_and_the_directory_name_when_no_info() -> None:
    record = {
        "installs": [
            {"path": "/opt/rocm-6.0.2", "realpath": "/opt/rocm-6.0.2", "info": {}},
            {"path": "/opt/rocm-6.10.0", "realpath": "/opt/rocm-6.10.0", "info": {"version": "6.10.0\n"}},
        ],
        "opt_rocm_link": None,
    }
    rocm = parse_rocm_install(record)
    assert rocm.version == "6.10.0" and rocm.all_versions == ("6.0.2", "6.10.0")


def test_missing_reasons(tmp_path: pathlib.Path) -> None:
    not_collected = parse_rocm_install(None)
    assert not_collected.version is None and not_collected.missing is not None
    assert not_collected.missing.why is Why.NOT_COLLECTED and not_collected.missing.source is EvidenceKey.ROCM_INSTALL
    absent = parse_rocm_install(scan_rocm_install(str(tmp_path)))
    assert absent.missing is not None and absent.missing.why is Why.ABSENT
    failed = parse_rocm_install({"installs": [], "error": "PermissionError: denied"})
    assert failed.missing is not None and failed.missing.why is Why.FAILED


@settings(max_examples=150, deadline=None)
@given(json_like())
def test_rocm_install_never_raises(data: object) -> None:
    result = parse_rocm_install(data)
    assert isinstance(result, RocmInstall) and (result.version is not None or result.missing is not None)
