"""Topology renderers (terminal matrix, JSON, SVG) over the SYNTHETIC cases in tests/synthetic/topologies.py.

The cases are hand-built models shaped like real ``nvidia-smi topo -m`` captures; the hypothesis models at
the end are random and only have to be survived.
"""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.facts.topology_model import (
    GpuPair,
    MachineTopology,
    Nic,
    NvLinkPort,
    NvLinkState,
    PcieLink,
    TopoGpu,
)
from gpudoctor.render.topology_json import topology_json
from gpudoctor.render.topology_svg import render_topology_svg
from gpudoctor.render.topology_text import NO_TOPOLOGY, gpu_indices, render_topology_text
from tests.synthetic.topologies import (
    SYNTHETIC_2X_RTX5090_PHB,
    SYNTHETIC_10GPU_PXB,
    SYNTHETIC_DEGRADED,
    SYNTHETIC_DGX1_V100,
    SYNTHETIC_EMPTY,
    SYNTHETIC_H100_NVSWITCH,
    SYNTHETIC_PCIE_8GPU_2SOCKET,
    SYNTHETIC_SINGLE_GPU,
    SYNTHETIC_TOPOLOGIES,
)

SVG_NS = "{http://www.w3.org/2000/svg}"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CASES = sorted(SYNTHETIC_TOPOLOGIES.items())
GPU_CASES = [(name, topo) for name, topo in CASES if topo.gpus]


def svg_tree(topo: MachineTopology, title: str | None = None) -> ET.Element:
    return ET.fromstring(render_topology_svg(topo, title).encode("utf-8"))


def elements(root: ET.Element, attribute: str) -> dict[str, ET.Element]:
    return {el.get(attribute): el for el in root.iter() if el.get(attribute) is not None}


def nvlink_links(root: ET.Element) -> dict[str, ET.Element]:
    return {key: el for key, el in elements(root, "data-link").items() if el.get("data-kind") == "nvlink"}


def all_text(element: ET.Element) -> str:
    return " ".join(" ".join(element.itertext()).split())


def label(element: ET.Element) -> str:
    """What the picture shows (its <text>), not the tooltip."""
    return " ".join(" ".join(t.itertext()) for t in element.iter(f"{SVG_NS}text"))


def tooltip(element: ET.Element) -> str:
    found = element.find(f"{SVG_NS}title")
    return found.text if found is not None and found.text else ""


def nv_pairs(topo: MachineTopology) -> dict[str, str]:
    return {f"{p.a}-{p.b}": p.path for p in topo.pairs if p.nvlinks}


# ---------------------------------------------------------------- SVG


@pytest.mark.parametrize("name,topo", CASES, ids=[name for name, _ in CASES])
def test_svg_parses_and_shows_every_gpu_and_nic(name, topo):
    root = svg_tree(topo)
    assert root.tag == f"{SVG_NS}svg"
    assert set(elements(root, "data-gpu")) == {str(g.index) for g in topo.gpus}
    assert set(elements(root, "data-nic")) == {nic.label for nic in topo.nics}
    for index, gpu in elements(root, "data-gpu").items():
        assert f"GPU{index}" in all_text(gpu)


@pytest.mark.parametrize("topo", [SYNTHETIC_DGX1_V100, SYNTHETIC_DEGRADED], ids=["dgx1-v100", "degraded"])
def test_svg_draws_every_nvlink_pair_with_its_count(topo):
    links = nvlink_links(svg_tree(topo))
    expected = nv_pairs(topo)
    assert set(links) == set(expected)
    for key, path in expected.items():
        assert label(links[key]) == path
    assert len(expected) == (16 if topo is SYNTHETIC_DGX1_V100 else 6)  # hybrid cube mesh: 4 NVLink peers each


def test_svg_hybrid_cube_mesh_labels_nv1_and_nv2():
    links = nvlink_links(svg_tree(SYNTHETIC_DGX1_V100))
    assert label(links["0-1"]) == "NV2" and label(links["0-3"]) == "NV1"
    assert tooltip(links["0-3"]) == "GPU0 <-> GPU3: NV1 (1 NVLink)"
    assert "0-5" not in links  # a SYS pair has no NVLink to draw


def test_svg_nvswitch_system_draws_a_bar_instead_of_pair_edges():
    root = svg_tree(SYNTHETIC_H100_NVSWITCH)
    switches = elements(root, "data-switch")
    assert "nvswitch" in switches and "NVSwitch × 4" in all_text(switches["nvswitch"])
    links = nvlink_links(root)
    assert set(links) == {f"{g}-nvswitch" for g in range(8)}
    assert not any(re.fullmatch(r"\d+-\d+", key) for key in elements(root, "data-link"))
    assert all(label(link) == "NV18" for link in links.values())


def test_svg_infers_the_nvswitch_when_no_gpu_could_have_that_many_direct_links():
    topo = replace(SYNTHETIC_H100_NVSWITCH, nvswitches=0)  # NV18 to each of 7 peers would need 126 links
    root = svg_tree(topo)
    assert "inferred" in all_text(elements(root, "data-switch")["nvswitch"])
    assert "0-1" not in nvlink_links(root)


def test_svg_nvswitch_inferred_from_an_excerpt_with_unknown_pairs():
    # the shape of B/nccl-820-a100-nv12-mlx5x10-garbled-columns-excerpt.txt: NV12 everywhere, GPU6-GPU7 unreadable
    topo = MachineTopology(
        gpus=[TopoGpu(i) for i in range(9)],
        pairs=[GpuPair(a, b, "NV12") for a in range(8) for b in range(a + 1, 8) if (a, b) != (6, 7)],
    )
    links = nvlink_links(svg_tree(topo))
    assert set(links) == {f"{g}-nvswitch" for g in range(8)}  # GPU8: no path known, no link drawn
    mixed = replace(topo, pairs=[replace(topo.pairs[0], path="SYS"), *topo.pairs[1:]])  # one PCIe pair: no switch
    assert "0-1" not in nvlink_links(svg_tree(mixed)) and "0-2" in nvlink_links(svg_tree(mixed))


def test_svg_two_gpus_bridged_by_nvlink_get_an_edge_not_a_switch():
    # the shape of B/stas00-mleng-2gpu-nv2.txt
    topo = MachineTopology(gpus=[TopoGpu(0), TopoGpu(1)], pairs=[GpuPair(0, 1, "NV2")])
    root = svg_tree(topo)
    assert "nvswitch" not in elements(root, "data-switch")
    assert label(nvlink_links(root)["0-1"]) == "NV2"


def test_svg_marks_down_nvlinks_and_narrow_pcie_with_a_reason():
    root = svg_tree(SYNTHETIC_DEGRADED)
    links = nvlink_links(root)
    assert links["1-2"].get("data-warning") == "nvlink-down"
    reason = tooltip(links["1-2"])
    assert "GPU1 links 3, 7 to GPU2 are down" in reason and "GPU2 links 4, 5 to GPU1 are down" in reason
    assert [key for key, link in links.items() if link.get("data-warning")] == ["1-2"]
    gpus = elements(root, "data-gpu")
    assert {key for key, gpu in gpus.items() if gpu.get("data-warning")} == {"1", "2", "3"}
    assert "x8 of x16" in tooltip(gpus["3"])
    pcie = {key: el for key, el in elements(root, "data-link").items() if el.get("data-kind") == "pcie"}
    warned = [key for key, el in pcie.items() if el.get("data-warning")]
    assert warned == ["3-cpu1"] and "x8 of x16 lanes" in tooltip(pcie["3-cpu1"])


def test_svg_link_advice_is_the_checks_fix_not_the_renderers():
    def pcie_tip(svg: str) -> str:
        links = elements(ET.fromstring(svg.encode("utf-8")), "data-link")
        return tooltip(links["3-cpu1"])

    bare = pcie_tip(render_topology_svg(SYNTHETIC_DEGRADED))
    assert "x8 of x16 lanes" in bare and "eseat" not in bare and "riser" not in bare
    fix = "Reseat the card in a full-width slot (TOPO001's own words)"
    assert bare + " — " + fix == pcie_tip(render_topology_svg(SYNTHETIC_DEGRADED, link_fixes={3: fix}))


def test_topo_command_takes_each_gpus_link_fix_from_topo001():
    from gpudoctor.commands.topo import link_fixes
    from gpudoctor.results import CheckResult, Finding, Fix, Report, Severity, Status

    reseat = Fix("Reseat GPU 3.", ("sudo lspci -vv",), needs_root=True)
    findings = [
        Finding(Severity.INFO, "GPU 1: PCIe Gen1 at idle (max Gen4)", None, (), "TOPO001"),
        Finding(Severity.WARNING, "GPU 3: PCIe link x8 of x16 — 16 GB/s instead of 32 GB/s", reseat, (), "TOPO001"),
    ]
    report = Report([CheckResult("TOPO001", "topology", "t", Status.WARNING, "s", findings)], {"kind": "live"})
    assert link_fixes(report) == {3: "Reseat GPU 3."}


def _with_ports(
    topo: MachineTopology, index: int, change: Callable[[list[NvLinkPort]], list[NvLinkPort]]
) -> MachineTopology:
    """A copy of ``topo`` whose GPU ``index`` has ``change`` of its NVLink ports."""
    gpus = [
        replace(gpu, nvlink=replace(gpu.nvlink, ports=change(gpu.nvlink.ports)))
        if gpu.index == index and gpu.nvlink is not None
        else gpu
        for gpu in topo.gpus
    ]
    return replace(topo, gpus=gpus)


def test_svg_down_links_without_a_known_peer_warn_every_nvlink_of_that_gpu():
    topo = _with_ports(SYNTHETIC_DEGRADED, 1, lambda ports: [replace(port, remote_bus_id=None) for port in ports])
    topo = _with_ports(
        topo, 2, lambda ports: [replace(port, active=True) if at in (4, 5) else port for at, port in enumerate(ports)]
    )
    warned = {key for key, link in nvlink_links(svg_tree(topo)).items() if link.get("data-warning")}
    assert warned == {"0-1", "1-2", "1-3"}


def test_svg_nvswitch_link_of_a_gpu_with_down_links_is_marked():
    topo = _with_ports(
        SYNTHETIC_H100_NVSWITCH,
        5,
        lambda ports: [replace(port, active=False) if at == 2 else port for at, port in enumerate(ports)],
    )
    links = nvlink_links(svg_tree(topo))
    assert [key for key, link in links.items() if link.get("data-warning")] == ["5-nvswitch"]
    assert "links 2 are down" in tooltip(links["5-nvswitch"])


def test_svg_groups_gpus_behind_a_pcie_switch():
    root = svg_tree(SYNTHETIC_PCIE_8GPU_2SOCKET)
    switches = {key: tooltip(el) for key, el in elements(root, "data-switch").items()}
    assert sorted(switches.values()) == [f"PCIe switch (PIX/PXB): GPU{a}, GPU{a + 1}" for a in (0, 2, 4, 6)]
    # DGX-1: GPU2 and GPU3 are NV1 to each other but share mlx5_0/mlx5_1 on PIX, so one switch
    dgx = [tooltip(el) for el in elements(svg_tree(SYNTHETIC_DGX1_V100), "data-switch").values()]
    assert dgx == ["PCIe switch (PIX/PXB): GPU2, GPU3, NIC0, NIC1"]


def test_svg_puts_gpus_in_their_numa_node_and_links_the_sockets():
    root = svg_tree(SYNTHETIC_PCIE_8GPU_2SOCKET)
    numa = elements(root, "data-numa")
    assert set(numa) == {"0", "1"} and "CPUs 14-27,42-55" in all_text(numa["1"])
    assert elements(root, "data-link")["cpu0-cpu1"].get("data-kind") == "sys"
    assert elements(root, "data-link")["5-sw3"].get("data-kind") == "pcie"


def _gpu_boxes(root: ET.Element) -> list[tuple[float, float, float, float]]:
    boxes = []
    for gpu in elements(root, "data-gpu").values():
        rect = gpu.find(f"{SVG_NS}rect")
        boxes.append(tuple(float(rect.get(k)) for k in ("x", "y", "width", "height")))
    return boxes


@pytest.mark.parametrize("count", [1, 2, 4, 8, 10, 12])
def test_svg_layout_keeps_gpus_apart_and_inside_the_picture(count):
    topo = MachineTopology(
        gpus=[TopoGpu(i, "NVIDIA A100-SXM4-80GB", numa_node=i * 2 // count) for i in range(count)],
        pairs=[GpuPair(a, b, "NV4" if (a + b) % 3 else "SYS") for a in range(count) for b in range(a + 1, count)],
    )
    root = svg_tree(topo)
    width, height = float(root.get("width")), float(root.get("height"))
    boxes = _gpu_boxes(root)
    assert len(boxes) == count
    for x, y, w, h in boxes:
        assert x >= 0 and x + w <= width and y >= 0 and y + h <= height
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
    for path in root.iter(f"{SVG_NS}path"):  # NVLink curves stay inside the picture too
        numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d"))]
        assert max(numbers[1::2]) <= height and min(numbers[0::2]) >= 0


def test_svg_escapes_text_and_stays_self_contained():
    first, second = SYNTHETIC_2X_RTX5090_PHB.gpus
    topo = replace(
        SYNTHETIC_2X_RTX5090_PHB,
        gpus=[
            replace(first, name='Evil <GPU> & "Co" \x1b[31m\x00'),
            replace(second, bus_id="</text><script>alert(1)</script>"),
        ],
        sources=["<b>paste</b>"],
    )
    text = render_topology_svg(topo, title="Rack <7> & friends")
    root = ET.fromstring(text.encode("utf-8"))
    assert "<script" not in text and "\x1b" not in text and "\x00" not in text
    assert "&lt;GPU&gt; &amp;" in text
    assert root.find(f"{SVG_NS}title").text == "Rack <7> & friends"
    assert 'Evil <GPU> & "Co"' in tooltip(elements(root, "data-gpu")["0"])
    for banned in ("href", "@import", "url(", "<image", "<foreignObject", "<style"):
        assert banned not in text


def test_svg_is_deterministic_whatever_order_the_model_lists_things_in():
    first = render_topology_svg(SYNTHETIC_DGX1_V100)
    assert render_topology_svg(copy.deepcopy(SYNTHETIC_DGX1_V100)) == first
    shuffled = copy.deepcopy(SYNTHETIC_DGX1_V100)
    shuffled.gpus.reverse()
    shuffled.pairs.reverse()
    shuffled = replace(shuffled, nics_links=dict(reversed(list(shuffled.nics_links.items()))))
    assert render_topology_svg(shuffled) == first


def test_svg_of_nothing_says_so():
    root = svg_tree(SYNTHETIC_EMPTY)
    assert NO_TOPOLOGY in all_text(root)
    assert not elements(root, "data-gpu") and not elements(root, "data-link")


def test_svg_gpu_only_named_by_a_pair_is_still_drawn():
    root = svg_tree(MachineTopology(pairs=[GpuPair(0, 3, "NV1")]))
    assert set(elements(root, "data-gpu")) == {"0", "3"}
    assert set(elements(root, "data-numa")) == {"unknown"}


# ---------------------------------------------------------------- terminal text


@pytest.mark.parametrize("name,topo", GPU_CASES, ids=[name for name, _ in GPU_CASES])
def test_text_names_every_gpu_and_nic(name, topo):
    text = render_topology_text(topo)
    for gpu in topo.gpus:
        assert re.search(rf"^GPU{gpu.index}\s", text, re.M), f"matrix row GPU{gpu.index}"
        assert gpu.bus_id in text
    for nic in topo.nics:
        assert re.search(rf"^  {nic.label}\s+{nic.name}\s", text, re.M)


def _legend(text: str) -> list[str]:
    block = text.split("Legend:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines()]


def test_text_legend_lists_only_the_kinds_present():
    assert _legend(render_topology_text(SYNTHETIC_DGX1_V100)) == ["NV#", "PIX", "NODE", "SYS"]
    assert _legend(render_topology_text(SYNTHETIC_PCIE_8GPU_2SOCKET)) == ["PIX", "PHB", "SYS"]
    assert _legend(render_topology_text(SYNTHETIC_10GPU_PXB)) == ["PXB", "SYS"]
    assert "Legend:" not in render_topology_text(SYNTHETIC_SINGLE_GPU)  # one GPU: no path at all


def test_text_matrix_reads_like_topo_m():
    lines = render_topology_text(SYNTHETIC_DGX1_V100).splitlines()
    header = next(line for line in lines if line.lstrip().startswith("GPU0"))
    assert header.split() == [f"GPU{i}" for i in range(8)] + ["NIC0", "NIC1", "CPU", "Affinity", "NUMA"]
    row3 = next(line for line in lines if line.startswith("GPU3 "))
    assert row3.split() == [
        "GPU3",
        "NV1",
        "NV2",
        "NV1",
        "X",
        "SYS",
        "SYS",
        "SYS",
        "NV2",
        "PIX",
        "PIX",
        "0-23,48-71",
        "0",
    ]


@pytest.mark.parametrize("width", [100, 80, 60])
def test_text_eight_gpus_and_ten_nics_fit_the_width(width):
    text = render_topology_text(SYNTHETIC_H100_NVSWITCH, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    headers = [
        line
        for line in text.splitlines()
        if re.fullmatch(r"\s+((GPU|NIC)\d+|CPU Affinity|NUMA)(\s+((GPU|NIC)\d+|CPU Affinity|NUMA))*", line)
    ]
    assert len(headers) >= 2  # the NIC columns moved to a block of their own
    shown = " ".join(headers).split()
    assert [label for label in shown if label.startswith("NIC")] == [f"NIC{n}" for n in range(10)]
    assert [label for label in shown if label.startswith("GPU")] == [f"GPU{n}" for n in range(8)]
    assert len(re.findall(r"^GPU7 ", text, re.M)) == len(headers)  # every block has every GPU row


def test_text_marks_what_is_degraded():
    text = render_topology_text(SYNTHETIC_DEGRADED)
    assert "NVLink 10/12 active, down: 3, 7" in text and "NVLink 10/12 active, down: 4, 5" in text
    assert "NVLink 12/12 active" in text
    assert "PCIe Gen4 x8 (max Gen4 x16)  ! only x8 of x16 lanes" in text
    assert "! 12 PCIe replays" in text
    healthy = render_topology_text(SYNTHETIC_H100_NVSWITCH)
    assert "!" not in healthy and "down:" not in healthy and "18/18 active" in healthy
    idle = render_topology_text(SYNTHETIC_2X_RTX5090_PHB)  # Gen1 of Gen5 at idle: noted, not alarmed
    assert "Gen1 x16 (max Gen5 x16)  ~ below its best generation" in idle and "!" not in idle


def test_text_machine_lines_and_p2p():
    text = render_topology_text(SYNTHETIC_H100_NVSWITCH)
    for line in (
        "NVSwitches: 4",
        "Fabric manager: active",
        "GPU fabric state: completed on all 8 GPUs",
        "NUMA nodes: 0: CPUs 0-79; 1: CPUs 80-159",
        "This process may run on CPUs: 0-159",
    ):
        assert line in text
    assert "P2P" not in text  # every pair OK
    assert "GNS (GPU not supported): GPU0-GPU1" in render_topology_text(SYNTHETIC_2X_RTX5090_PHB)


def test_text_colour_is_ansi_over_the_same_words():
    plain = render_topology_text(SYNTHETIC_DGX1_V100)
    coloured = render_topology_text(SYNTHETIC_DGX1_V100, color=True)
    assert not ANSI.search(plain)
    assert "\x1b[32mNV2" in coloured and "\x1b[31mSYS" in coloured and "\x1b[36mPIX" in coloured
    assert [line.rstrip() for line in ANSI.sub("", coloured).splitlines()] == plain.splitlines()


def test_text_of_nothing_is_one_line():
    assert render_topology_text(SYNTHETIC_EMPTY) == NO_TOPOLOGY + "\n"
    assert render_topology_text(MachineTopology(numa_nodes={0: "0-7"}, nvswitches=2)) == NO_TOPOLOGY + "\n"


def test_text_of_a_partial_model():
    topo = MachineTopology(
        gpus=[TopoGpu(0), TopoGpu(2, pcie=PcieLink(gen_current=3))],
        pairs=[GpuPair(0, 1, None), GpuPair(0, 2, "PHB")],
        nics_links={(1, "NIC0"): "PIX"},
    )
    text = render_topology_text(topo)
    assert [line.split()[0] for line in text.splitlines() if re.match(r"GPU\d ", line)][:3] == ["GPU0", "GPU1", "GPU2"]
    assert "unknown GPU" in text and "only named by a path" in text and "PCIe Gen3 x?" in text
    assert "?    = not known" in text and "NIC0" in text


def test_text_orders_nic_labels_naturally_whatever_their_digits():
    links = {(0, label): "SYS" for label in ("NIC10", "NIC2", "NIC²", "NIC٣")}  # found by hypothesis: "²"
    text = render_topology_text(MachineTopology(gpus=[TopoGpu(0)], nics_links=links))
    header = next(line for line in text.splitlines() if line.lstrip().startswith("GPU0"))
    assert header.split()[1:5] == ["NIC2", "NIC10", "NIC²", "NIC٣"]


def test_text_strips_terminal_escapes_from_names():
    topo = replace(
        SYNTHETIC_SINGLE_GPU, gpus=[replace(SYNTHETIC_SINGLE_GPU.gpus[0], name="H100\x1b[2J\x1b]0;pwned\x07 <&>")]
    )
    text = render_topology_text(topo)
    assert "\x1b" not in text and "\x07" not in text and "<&>" in text


# ---------------------------------------------------------------- JSON


@pytest.mark.parametrize("name,topo", CASES, ids=[name for name, _ in CASES])
def test_json_round_trips(name, topo):
    data = topology_json(topo)
    assert json.loads(json.dumps(data)) == data
    assert list(data) == [
        "gpus",
        "pairs",
        "nics",
        "gpu_nic_links",
        "numa_nodes",
        "process_cpus",
        "nvswitches",
        "fabric_manager",
        "fabric_states",
        "sources",
    ]
    assert [gpu["index"] for gpu in data["gpus"]] == sorted(g.index for g in topo.gpus)


def test_json_fields():
    data = topology_json(SYNTHETIC_DEGRADED)
    gpu1 = data["gpus"][1]
    assert gpu1["nvlink"]["active"] == 10 and gpu1["nvlink"]["total"] == 12 and gpu1["nvlink"]["down"] == [3, 7]
    assert gpu1["nvlink"]["ports"][3] == {
        "link": 3,
        "active": False,
        "version": 2,
        "remote_bus_id": "0000:81:00.0",
        "remote_type": "gpu",
    }
    assert data["gpus"][3]["pcie"] == {
        "gen_current": 4,
        "gen_max": 4,
        "width_current": 8,
        "width_max": 16,
        "source": "nvml",
        "replay_count": 12,
    }
    assert data["pairs"][3] == {
        "a": 1,
        "b": 2,
        "path": "NV2",
        "nvlinks": 2,
        "path_source": "nvidia-smi topo -m",
        "p2p_read": "OK",
        "p2p_source": "nvml",
    }
    assert data["numa_nodes"] == {"0": "0-31", "1": "32-63"} and data["fabric_manager"] == "not-installed"
    rtx = topology_json(SYNTHETIC_2X_RTX5090_PHB)
    assert rtx["gpus"][0]["nvlink"] is None  # nobody reported NVLinks: unknown, not zero
    h100 = topology_json(SYNTHETIC_H100_NVSWITCH)
    assert {"gpu": 0, "nic": "NIC8", "path": "PIX"} in h100["gpu_nic_links"] and len(h100["gpu_nic_links"]) == 80
    assert h100["nics"][8] == {"label": "NIC8", "name": "mlx5_8", "nearest_gpus": [0]}
    assert h100["fabric_states"]["7"] == "completed"


# ---------------------------------------------------------------- random models

PATHS = st.one_of(
    st.none(),
    st.sampled_from(["X", "NV1", "NV2", "NV4", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "N/A", ""]),
    st.text(max_size=12),
)
TEXT = st.one_of(st.none(), st.text(max_size=40))


@st.composite
def topologies(draw) -> MachineTopology:
    """Random models: any GPU count 0-12, gaps and duplicates in indices, any paths, any missing field."""
    indices = draw(st.lists(st.integers(0, 15), max_size=12))
    bus = st.one_of(st.none(), st.sampled_from(["0000:18:00.0", "00000000:2A:00.0", "junk"]), st.text(max_size=12))
    ports = st.lists(
        st.builds(NvLinkPort, st.integers(0, 17), st.one_of(st.none(), st.booleans()), st.none(), bus, TEXT),
        max_size=18,
    )
    nvlink = st.one_of(st.none(), st.builds(NvLinkState, ports, TEXT))
    small = st.one_of(st.none(), st.integers(0, 32))
    pcie = st.builds(PcieLink, small, small, small, small, TEXT, st.one_of(st.none(), st.integers(0, 10**6)))
    numa = st.one_of(st.none(), st.integers(-1, 3))
    gpus = [
        draw(
            st.builds(
                TopoGpu, st.just(i), TEXT, bus, numa, TEXT, st.sampled_from([None, "sxm", "pcie", "?"]), pcie, nvlink
            )
        )
        for i in indices
    ]
    known = sorted(set(indices) | set(draw(st.lists(st.integers(0, 15), max_size=3))))
    pairs = [
        GpuPair(
            a,
            b,
            draw(PATHS),
            draw(TEXT),
            draw(st.one_of(st.none(), st.sampled_from(["OK", "GNS", "NS"]), st.text(max_size=4))),
            None,
        )
        for i, a in enumerate(known)
        for b in known[i + 1 :]
        if draw(st.booleans())
    ]
    nic_names = draw(st.lists(st.text(min_size=1, max_size=8), max_size=10, unique=True))
    nics = [Nic(label, draw(TEXT), draw(st.lists(st.integers(0, 15), max_size=3))) for label in nic_names]
    labels = nic_names + draw(st.lists(st.text(max_size=6), max_size=2))
    links = {(g, nic): draw(PATHS) or "SYS" for g in known for nic in labels if draw(st.booleans())}
    return MachineTopology(
        gpus=gpus,
        pairs=pairs,
        nics=nics,
        nics_links=links,
        numa_nodes=draw(st.dictionaries(st.integers(-1, 3), st.text(max_size=20), max_size=4)),
        process_cpus=draw(TEXT),
        nvswitches=draw(st.integers(0, 12)),
        fabric_manager=draw(st.one_of(st.none(), st.sampled_from(["active", "failed"]), st.text(max_size=10))),
        fabric_states=draw(st.dictionaries(st.integers(0, 15), st.text(max_size=10), max_size=4)),
        sources=draw(st.lists(st.text(max_size=20), max_size=3)),
    )


@settings(max_examples=150)
@given(topologies(), st.integers(20, 160), st.booleans())
def test_random_models_never_break_a_renderer(topo, width, color):
    text = render_topology_text(topo, color=color, width=width)
    plain = ANSI.sub("", text)
    assert all(len(line.rstrip()) <= max(width, 40) for line in plain.splitlines())
    if not gpu_indices(topo):
        assert plain.strip() == NO_TOPOLOGY
    root = ET.fromstring(render_topology_svg(topo, title=topo.process_cpus).encode("utf-8"))
    assert {int(i) for i in elements(root, "data-gpu")} == set(gpu_indices(topo))
    json.loads(json.dumps(topology_json(topo)))
