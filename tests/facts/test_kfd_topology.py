"""The KFD topology parser on the four real captured KFD trees (values from fixtures/INDEX.md, G3), the
number decoders, and garbage in."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence.scan_amd import scan_kfd_topology
from gpudoctor.facts.amd_model import KfdTopology
from gpudoctor.facts.kfd_topology import bus_id, gfx_target, parse_kfd_topology, physical_gpus, properties
from tests.helpers.fixtures import real_fixtures_dir
from tests.helpers.strategies import json_like

TREES = {
    "mi210": "G-amd/kfd-topology-8x-mi210-gfx90a-2-xgmi-hives-properties-only",
    "mi300x": "G-amd/kfd-topology-8x-mi300x-gfx942-cpx-63-partitions",
    "mi308x": "G-amd/kfd-topology-8x-mi308x-gfx942-cpx-32-partitions",
    "vega10": "G-amd/kfd-topology-1x-vega10-0x6860-SOURCE-EDITED-node2-copy-of-node1",
}


def real_topology(tmp_path_factory: pytest.TempPathFactory, tree: str) -> KfdTopology:
    """The real tree scanned as /sys/class/kfd/kfd/topology of a temporary root, then parsed."""
    source = real_fixtures_dir() / TREES[tree]
    if not source.is_dir():
        pytest.skip(f"real fixture {TREES[tree]} not available")
    root = tmp_path_factory.mktemp(tree)
    parent = root / "sys/class/kfd/kfd"
    parent.mkdir(parents=True)
    (parent / "topology").symlink_to(source)
    topology = parse_kfd_topology(scan_kfd_topology(str(root)))
    assert topology is not None
    return topology


@pytest.fixture(scope="module")
def mi210(tmp_path_factory: pytest.TempPathFactory) -> KfdTopology:
    return real_topology(tmp_path_factory, "mi210")


def test_gfx_target_decoding() -> None:
    assert gfx_target(90010) == "gfx90a"
    assert gfx_target(90402) == "gfx942"
    assert gfx_target(110000) == "gfx1100"
    assert gfx_target(0) is None and gfx_target(None) is None and gfx_target(91600) is None


def test_bus_id_from_location() -> None:
    assert bus_id(0, 25344) == "0000:63:00.0"  # 25344 = 0x6300
    assert bus_id(1, 0xC903) == "0001:c9:00.3"
    assert bus_id(0, 0) is None


def test_properties_skip_what_is_not_a_number() -> None:
    assert properties("a 1\nname text\n  b  -2 \n\nc\n") == {"a": 1, "b": -2}


def test_mi210_eight_gpus_gfx90a(mi210: KfdTopology) -> None:
    gpus = mi210.gpu_nodes
    assert [n.node_id for n in gpus] == list(range(2, 10))
    assert {n.gfx_target for n in gpus} == {"gfx90a"}
    assert {n.device_id for n in gpus} == {"740f"}
    assert {n.compute_units for n in gpus} == {104}
    assert [n.render_minor for n in gpus] == list(range(128, 136))
    assert {n.vram_bytes for n in gpus} == {None}  # properties-only capture: VRAM not derivable
    assert gpus[0].bus_id == "0000:63:00.0"
    cpus = [n for n in mi210.nodes if not n.is_gpu]
    assert [(n.node_id, n.cpu_cores) for n in cpus] == [(0, 64), (1, 64)]


def test_mi210_two_hives_of_four_linked_by_xgmi(mi210: KfdTopology) -> None:
    hives = Counter(n.hive_id for n in mi210.gpu_nodes)
    assert sorted(hives.values()) == [4, 4] and None not in hives
    hive_of = {n.node_id: n.hive_id for n in mi210.gpu_nodes}
    xgmi = [link for link in mi210.links if link.link_type == "xgmi"]
    assert xgmi and all(link.weight == 15 for link in xgmi)
    assert all(hive_of[link.from_node] == hive_of[link.to_node] for link in xgmi)
    # every GPU reaches its three hive peers over XGMI, and its CPU over PCIe
    for node in mi210.gpu_nodes:
        assert len([link for link in xgmi if link.from_node == node.node_id]) == 3
        to_cpu = [link for link in mi210.links if link.from_node == node.node_id and link.to_cpu]
        assert [link.link_type for link in to_cpu] == ["pcie"]
        assert node.numa_node == to_cpu[0].to_node


def test_mi300x_cpx_63_partitions_on_8_gpus(tmp_path_factory: pytest.TempPathFactory) -> None:
    topology = real_topology(tmp_path_factory, "mi300x")
    gpus = topology.gpu_nodes
    assert len(gpus) == 63
    assert {n.gfx_target for n in gpus} == {"gfx942"} and {n.device_id for n in gpus} == {"74a1"}
    assert {n.compute_units for n in gpus} == {38} and {n.num_xcc for n in gpus} == {1}
    assert sorted(n.render_minor for n in gpus) == list(range(128, 191))
    groups = physical_gpus(topology)
    # as stored, the last GPU's 8th partition is missing
    assert [len(group) for group in groups] == [8] * 7 + [7]
    assert groups[0][0].bus_id == "0000:05:00.0" and groups[0][7].bus_id == "0000:05:00.7"  # location 1280-1287
    assert [n.cpu_cores for n in topology.nodes if not n.is_gpu] == [96, 96]


def test_mi308x_32_partitions_48_gib_each(tmp_path_factory: pytest.TempPathFactory) -> None:
    topology = real_topology(tmp_path_factory, "mi308x")
    gpus = topology.gpu_nodes
    assert len(gpus) == 32
    assert {n.gfx_target for n in gpus} == {"gfx942"} and {n.device_id for n in gpus} == {"74a2"}
    assert {n.compute_units for n in gpus} == {20}
    assert gpus[0].vram_bytes == 51539607552  # mem_banks/0: 48 GiB
    assert len({n.hive_id for n in gpus}) == 1 and gpus[0].name == "ip discovery"
    assert [len(group) for group in physical_gpus(topology)] == [4] * 8
    assert [n.cpu_cores for n in topology.nodes if not n.is_gpu] == [112, 112]


def test_vega10_old_property_set(tmp_path_factory: pytest.TempPathFactory) -> None:
    # SOURCE-EDITED tree (node 2 is a copy of node 1): field coverage of an old kernel only.
    topology = real_topology(tmp_path_factory, "vega10")
    gpu = topology.gpu_nodes[0]
    assert gpu.node_id == 1 and gpu.device_id == "6860"
    assert gpu.gfx_target is None  # no gfx_target_version in this property set: not guessed
    assert gpu.vram_bytes == 17163091968 and gpu.render_minor == 128 and gpu.num_xcc is None
    assert gpu.name is None  # the name file is empty


def test_nothing_collected_or_no_nodes() -> None:
    assert parse_kfd_topology(None) is None
    assert parse_kfd_topology({"readable": False, "nodes": {}}) is None


def test_synthetic_record_with_damaged_values() -> None:
    record = {
        "nodes": {
            "0": {"properties": "cpu_cores_count 4\n"},
            "1": {"properties": "simd_count 8\nsimd_per_cu 0\ngfx_target_version 99999999\n", "gpu_id": "x"},
            "x": {"properties": "simd_count 8\n"},
            "2": "not a record",
        }
    }
    topology = parse_kfd_topology(record)
    assert topology is not None
    assert [n.node_id for n in topology.nodes] == [0, 1]
    assert topology.nodes[1].is_gpu and topology.nodes[1].compute_units is None
    assert topology.nodes[1].gfx_target is None


@settings(max_examples=150, deadline=None)
@given(json_like())
def test_parser_never_raises_on_garbage(data: object) -> None:
    result = parse_kfd_topology(data)
    assert result is None or isinstance(result, KfdTopology)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=4), st.dictionaries(st.sampled_from(["properties", "io_links"]), st.text())))
def test_parser_never_raises_on_node_shaped_garbage(nodes: dict[str, dict[str, str]]) -> None:
    result = parse_kfd_topology({"nodes": nodes})
    assert result is None or isinstance(result, KfdTopology)
