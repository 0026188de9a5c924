"""XGMI in ``gpudoctor topo``: the merged model, its text, JSON and SVG, from the real captured KFD trees
(8× MI210 in two XGMI hives of four; 8× MI300X in CPX mode, 63 partitions in one hive; INDEX.md G3).

The mixed-vendor case adds the AMD hives to a SYNTHETIC NVIDIA topology (tests/synthetic/topologies.py).
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.scan_amd import scan_kfd_topology
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.topology_model import AmdTopoGpu, MachineTopology, XgmiLink
from gpudoctor.render.topology_json import topology_json
from gpudoctor.render.topology_svg import render_topology_svg
from gpudoctor.render.topology_text import render_topology_text
from tests.helpers.fixtures import real_fixtures_dir
from tests.synthetic.topologies import SYNTHETIC_SINGLE_GPU, synthetic_h100_nvswitch

MI210 = "G-amd/kfd-topology-8x-mi210-gfx90a-2-xgmi-hives-properties-only"
MI300X = "G-amd/kfd-topology-8x-mi300x-gfx942-cpx-63-partitions"


def topology_of(tmp_path_factory: pytest.TempPathFactory, tree: str) -> MachineTopology:
    """``Facts(evidence).machine_topology`` of evidence holding the real tree's KFD scan."""
    source = real_fixtures_dir() / tree
    if not source.is_dir():
        pytest.skip(f"real fixture {tree} not available")
    root = tmp_path_factory.mktemp("root")
    (root / "sys/class/kfd/kfd").mkdir(parents=True)
    (root / "sys/class/kfd/kfd/topology").symlink_to(source)
    evidence = Evidence()
    evidence.add(EvidenceItem(name="kfd-topology.json", kind="json", text=json.dumps(scan_kfd_topology(str(root)))))
    return Facts(evidence).machine_topology


@pytest.fixture(scope="module")
def mi210(tmp_path_factory: pytest.TempPathFactory) -> MachineTopology:
    return topology_of(tmp_path_factory, MI210)


def test_mi210_two_hives_of_four_fully_linked(mi210: MachineTopology) -> None:
    assert [gpu.index for gpu in mi210.amd_gpus] == list(range(8)) and mi210.gpus == []
    hives: dict[str | None, list[int]] = {}
    for gpu in mi210.amd_gpus:
        hives.setdefault(gpu.hive_id, []).append(gpu.index)
    assert sorted(hives.values()) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for members in hives.values():
        for a in members:
            for b in members:
                if a < b:
                    link = mi210.xgmi_link(a, b)
                    assert link is not None and link.weight == 15
    # no XGMI between the hives
    assert all(mi210.xgmi_link(a, b) is None for a in hives[mi210.amd_gpus[0].hive_id] for b in range(4, 8))
    assert len(mi210.xgmi_links) == 12
    assert [gpu.numa_node for gpu in mi210.amd_gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert mi210.sources == ["kfd-topology.json"]


def test_mi210_text(mi210: MachineTopology) -> None:
    text = render_topology_text(mi210)
    assert text.startswith("AMD GPU topology: 8 GPUs in 2 XGMI hives\n")
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith("GPU")}
    assert rows["GPU0"] == ["X", "XGMI", "XGMI", "XGMI", "PCIe", "PCIe", "PCIe", "PCIe", "0"]
    assert rows["GPU5"] == ["PCIe", "PCIe", "PCIe", "PCIe", "XGMI", "X", "XGMI", "XGMI", "1"]
    assert "hive 0  GPU0, GPU1, GPU2, GPU3 (every pair linked)" in text
    assert "hive 1  GPU4, GPU5, GPU6, GPU7 (every pair linked)" in text
    assert "GPU0  AMD GPU (gfx90a, device 740f)  0000:63:00.0  NUMA 0  renderD128" in text
    assert "no GPU topology known" not in text


def test_mi210_json(mi210: MachineTopology) -> None:
    data = topology_json(mi210)
    assert json.loads(json.dumps(data)) == data
    assert list(data)[-2:] == ["amd_gpus", "xgmi_links"]
    assert [gpu["gfx_target"] for gpu in data["amd_gpus"]] == ["gfx90a"] * 8
    assert {"a": 0, "b": 3, "hive_id": mi210.amd_gpus[0].hive_id, "weight": 15, "hops": None} in data["xgmi_links"]
    assert not any(link["a"] < 4 <= link["b"] for link in data["xgmi_links"])


def test_mi210_svg(mi210: MachineTopology) -> None:
    svg = render_topology_svg(mi210)
    root = ET.fromstring(svg.split("\n", 1)[1])  # well-formed
    ns = "{http://www.w3.org/2000/svg}"
    links = {g.get("data-link") for g in root.iter(f"{ns}g") if g.get("data-kind") == "xgmi"}
    assert len(links) == 12 and "amd0-amd1" in links and "amd4-amd7" in links
    assert not any(link.startswith(f"amd{a}-") and int(link.split("-amd")[1]) >= 4 for link in links for a in range(4))
    assert {g.get("data-amd-gpu") for g in root.iter(f"{ns}g") if g.get("data-amd-gpu")} == {str(i) for i in range(8)}
    assert {g.get("data-hive") for g in root.iter(f"{ns}g") if g.get("data-hive")} == {"0", "1"}
    assert "AMD GPU topology: 8 GPUs in 2 XGMI hives" in svg and "no GPU topology known" not in svg
    assert render_topology_svg(mi210) == svg  # same model, same bytes


def test_mi300x_cpx_partitions_fold_into_eight_gpus(tmp_path_factory: pytest.TempPathFactory) -> None:
    topo = topology_of(tmp_path_factory, MI300X)
    assert [gpu.partitions for gpu in topo.amd_gpus] == [8] * 7 + [7]
    assert len({gpu.hive_id for gpu in topo.amd_gpus}) == 1
    assert len(topo.xgmi_links) == 28  # one hive, every GPU pair linked
    text = render_topology_text(topo)
    assert text.startswith("AMD GPU topology: 8 GPUs (63 compute partitions) in 1 XGMI hive\n")
    assert "8 compute partitions  renderD128-135" in text


@pytest.mark.parametrize("nvidia", [SYNTHETIC_SINGLE_GPU, synthetic_h100_nvswitch()], ids=["single", "h100"])
def test_nvidia_output_unchanged_and_amd_after_it(mi210: MachineTopology, nvidia: MachineTopology) -> None:
    both = dataclasses.replace(nvidia, amd_gpus=mi210.amd_gpus, xgmi_links=mi210.xgmi_links)
    alone = render_topology_text(nvidia, width=160)
    mixed = render_topology_text(both, width=160)
    before_sources = alone.split("\nSources:")[0].rstrip("\n")
    assert mixed.startswith(before_sources) and "AMD GPU topology: 8 GPUs in 2 XGMI hives" in mixed
    assert "amd_gpus" not in topology_json(nvidia) and len(topology_json(both)["amd_gpus"]) == 8
    svg = render_topology_svg(both)
    assert 'data-link="amd0-amd1"' in svg and 'data-gpu="0"' in svg
    assert "amd_gpus" not in render_topology_svg(nvidia) and "data-amd-gpu" not in render_topology_svg(nvidia)


def test_synthetic_lone_gpus_without_hive() -> None:
    topo = MachineTopology(amd_gpus=(AmdTopoGpu(index=0, gfx_target="gfx1100"), AmdTopoGpu(index=1)))
    text = render_topology_text(topo)
    assert "no XGMI hive (every GPU pair talks over PCIe)" in text
    assert 'data-hive="none"' in render_topology_svg(topo)


_text = st.one_of(st.none(), st.text(max_size=12))
_gpu = st.builds(
    AmdTopoGpu,
    index=st.integers(0, 9),
    bus_id=_text,
    name=_text,
    gfx_target=_text,
    numa_node=st.one_of(st.none(), st.integers(-1, 3)),
    hive_id=st.sampled_from([None, "", "1", "2", "\x1b[31m"]),
    kfd_nodes=st.tuples(st.integers(0, 99)),
    render_minors=st.tuples(st.integers(0, 300)),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_gpu, max_size=6, unique_by=lambda g: g.index), st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)))
)
def test_synthetic_random_amd_models_render(gpus: list[AmdTopoGpu], pairs: list[tuple[int, int]]) -> None:
    links = tuple(XgmiLink(a=min(a, b), b=max(a, b), weight=15) for a, b in pairs if a != b)
    topo = MachineTopology(amd_gpus=tuple(gpus), xgmi_links=links)
    text = render_topology_text(topo, width=60)
    assert "\x1b" not in text
    ET.fromstring(render_topology_svg(topo).split("\n", 1)[1])
    json.dumps(topology_json(topo))
