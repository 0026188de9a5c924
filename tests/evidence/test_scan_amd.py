"""The AMD file scans: KFD topology, ROCm installs, accelerator device nodes.

The trees built under ``tmp_path`` are synthetic (named so); the KFD tests also read the real captured KFD
trees in place, through a temporary root whose /sys/class/kfd/kfd/topology is a link to the fixture folder.
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from gpudoctor.evidence import scan_amd
from gpudoctor.evidence.scan_amd import scan_accel_device_nodes, scan_kfd_topology, scan_rocm_install
from tests.helpers.fixtures import real_fixtures_dir

KFD_TREES = {
    "mi210": "G-amd/kfd-topology-8x-mi210-gfx90a-2-xgmi-hives-properties-only",
    "mi300x": "G-amd/kfd-topology-8x-mi300x-gfx942-cpx-63-partitions",
    "mi308x": "G-amd/kfd-topology-8x-mi308x-gfx942-cpx-32-partitions",
    "vega10": "G-amd/kfd-topology-1x-vega10-0x6860-SOURCE-EDITED-node2-copy-of-node1",
}


def kfd_root(tmp_path: pathlib.Path, tree: str) -> str:
    """A root whose KFD topology is the real captured tree ``tree`` (skips when the corpus is absent)."""
    source = real_fixtures_dir() / KFD_TREES[tree]
    if not source.is_dir():
        pytest.skip(f"real fixture {KFD_TREES[tree]} not available")
    parent = tmp_path / "root" / "sys" / "class" / "kfd" / "kfd"
    parent.mkdir(parents=True)
    (parent / "topology").symlink_to(source)
    return str(tmp_path / "root")


def write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# ---------------------------------------------------------------- KFD topology


def test_synthetic_kfd_tree_read_as_text(tmp_path: pathlib.Path) -> None:
    base = tmp_path / "sys/class/kfd/kfd/topology"
    write(base / "generation_id", "3\n")
    write(base / "system_properties", "platform_rev 2\n")
    write(base / "nodes/0/properties", "cpu_cores_count 8\nsimd_count 0\n")
    write(base / "nodes/1/properties", "simd_count 416\nsimd_per_cu 4\n")
    write(base / "nodes/1/gpu_id", "24248\n")
    write(base / "nodes/1/name", "ip discovery\n")
    write(base / "nodes/1/io_links/0/properties", "type 2\nversion_major 0\nnode_from 1\nnode_to 0\nweight 20\n")
    write(base / "nodes/1/mem_banks/0/properties", "heap_type 1\nsize_in_bytes 1024\n")
    write(base / "nodes/1/caches/0/properties", "size 64\n")
    write(base / "nodes/not-a-node/properties", "x 1\n")
    record = scan_kfd_topology(str(tmp_path))
    assert record["readable"] is True and record["truncated"] is False
    assert record["generation_id"] == "3\n"
    nodes = record["nodes"]
    assert isinstance(nodes, dict) and sorted(nodes) == ["0", "1"]
    gpu = nodes["1"]
    assert gpu["gpu_id"] == "24248\n" and gpu["name"] == "ip discovery\n"
    # link files keep only the fields the parser reads
    assert gpu["io_links"] == {"0": "type 2\nnode_from 1\nnode_to 0\nweight 20\n"}
    assert gpu["mem_banks"] == {"0": "heap_type 1\nsize_in_bytes 1024\n"}
    assert "caches" not in gpu
    json.dumps(record)


def test_no_kfd_is_a_record_not_an_error(tmp_path: pathlib.Path) -> None:
    record = scan_kfd_topology(str(tmp_path))
    assert record["readable"] is False and record["nodes"] == {}
    assert "amdgpu not loaded" in str(record["error"])


def test_synthetic_kfd_caps_bound_the_scan(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "sys/class/kfd/kfd/topology/nodes"
    for node in range(5):
        for link in range(4):
            write(base / f"{node}/io_links/{link}/properties", f"type 11\nnode_to {link}\n")
    monkeypatch.setattr(scan_amd, "MAX_KFD_NODES", 3)
    monkeypatch.setattr(scan_amd, "MAX_LINKS_PER_NODE", 2)
    record = scan_kfd_topology(str(tmp_path))
    nodes = record["nodes"]
    assert isinstance(nodes, dict) and sorted(nodes, key=int) == ["0", "1", "2"]
    assert all(len(n["io_links"]) == 2 for n in nodes.values())
    assert record["truncated"] is True


@pytest.mark.parametrize("tree", sorted(KFD_TREES))
def test_real_kfd_trees_scan_whole_and_serialise(tmp_path: pathlib.Path, tree: str) -> None:
    record = scan_kfd_topology(kfd_root(tmp_path, tree))
    assert record["readable"] is True and record["truncated"] is False
    nodes = record["nodes"]
    expected = {"mi210": 10, "mi300x": 65, "mi308x": 34, "vega10": 3}[tree]
    assert isinstance(nodes, dict) and len(nodes) == expected
    text = json.dumps(record)
    assert len(text) < 1_000_000  # 63 partitions x 63 links still makes a sharable snapshot


def test_real_mi300x_cpx_tree_every_link_read(tmp_path: pathlib.Path) -> None:
    record = scan_kfd_topology(kfd_root(tmp_path, "mi300x"))
    nodes = record["nodes"]
    assert isinstance(nodes, dict)
    # INDEX.md: 63 GPU partitions; each one's io_links reach the CPU and the 62 other partitions
    assert len(nodes["2"]["io_links"]) == 63
    assert "system_properties" in record and "generation_id" in record


# ---------------------------------------------------------------- ROCm installs


def test_synthetic_rocm_installs_and_the_link(tmp_path: pathlib.Path) -> None:
    write(tmp_path / "opt/rocm-6.2.2/.info/version", "6.2.2\n")
    write(tmp_path / "opt/rocm-6.2.2/.info/version-dev", "6.2.2\n")
    write(tmp_path / "opt/rocm-6.2.2/.info/unrelated", "x\n")
    write(tmp_path / "opt/rocm-6.1.0/.info/version", "6.1.0\n")
    (tmp_path / "opt/rocm").symlink_to(tmp_path / "opt/rocm-6.2.2")
    record = scan_rocm_install(str(tmp_path))
    assert record["opt_rocm_exists"] is True
    assert record["opt_rocm_link"] == "/opt/rocm-6.2.2"
    installs = record["installs"]
    assert isinstance(installs, list)
    # /opt/rocm and /opt/rocm-6.2.2 are one install, listed once (as /opt/rocm)
    assert [i["realpath"] for i in installs] == ["/opt/rocm-6.2.2", "/opt/rocm-6.1.0"]
    assert installs[0]["path"] == "/opt/rocm" and installs[0]["is_link"] is True
    assert installs[0]["info"] == {"version": "6.2.2\n", "version-dev": "6.2.2\n"}


def test_no_rocm(tmp_path: pathlib.Path) -> None:
    assert scan_rocm_install(str(tmp_path)) == {"installs": [], "opt_rocm_exists": False, "opt_rocm_link": None}


# ---------------------------------------------------------------- device nodes


def test_synthetic_device_nodes_with_modes_and_groups(tmp_path: pathlib.Path) -> None:
    write(tmp_path / "dev/kfd", "")
    write(tmp_path / "dev/dri/renderD128", "")
    write(tmp_path / "dev/dri/card0", "")
    write(tmp_path / "dev/vfio/vfio", "")
    write(tmp_path / "dev/accel0", "")
    write(tmp_path / "dev/other", "")
    os.chmod(tmp_path / "dev/kfd", 0o660)
    record = scan_accel_device_nodes(str(tmp_path))
    nodes = record["nodes"]
    assert isinstance(nodes, dict)
    assert sorted(nodes) == ["/dev/accel0", "/dev/dri/card0", "/dev/dri/renderD128", "/dev/kfd", "/dev/vfio/vfio"]
    kfd = nodes["/dev/kfd"]
    assert kfd["mode"] == "0o660" and kfd["char_device"] is False
    assert kfd["uid"] == os.getuid() and kfd["readable"] is True
    assert record["dri_directory"] is True
    assert record["uid"] == os.getuid() and record["root"] is (os.getuid() == 0)
    groups = record["groups"]
    assert isinstance(groups, list) and os.getgid() in [group["gid"] for group in groups]
    assert all(set(group) == {"gid", "name"} for group in groups)
    json.dumps(record)


def test_no_device_nodes(tmp_path: pathlib.Path) -> None:
    record = scan_accel_device_nodes(str(tmp_path))
    assert record["nodes"] == {} and record["dri_directory"] is False


def test_scans_never_raise_on_a_file_where_a_directory_should_be(tmp_path: pathlib.Path) -> None:
    write(tmp_path / "sys/class/kfd/kfd/topology", "synthetic: not a directory")
    write(tmp_path / "opt/rocm", "synthetic: not a directory")
    write(tmp_path / "dev/dri", "synthetic: not a directory")
    assert scan_kfd_topology(str(tmp_path))["readable"] is False
    assert scan_rocm_install(str(tmp_path))["installs"] == []
    assert scan_accel_device_nodes(str(tmp_path))["nodes"] == {}
