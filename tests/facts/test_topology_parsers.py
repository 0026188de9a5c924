"""The printed topology: ``nvidia-smi topo -m``, ``topo -p2p`` and ``nvlink -s``, from real captures.

Every ``topo -m`` capture in the shared corpus (section B of its INDEX.md) is read with exact assertions
of what it shows; the ``nvlink -s`` captures live in ``tests/captured/nvlink-status`` with their sources.
Hand-written inputs are named synthetic.  The property tests feed arbitrary text, and matrices generated
in nvidia-smi's own layout, to every parser.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.nvidia_smi_topo import P2P_STATUSES, parse_topo_matrix, parse_topo_p2p
from gpudoctor.facts.nvlink_status import parse_nvlink_status
from gpudoctor.facts.topology_model import NvLinkState, P2PMatrix, TopoMatrix, nvlink_count
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, decoded_bytes, fixture_named, mutated, non_text_json

TOPO = fixture_files("B")
NVLINK_DIR = pathlib.Path(__file__).resolve().parent.parent / "captured" / "nvlink-status"
NVLINK = sorted(NVLINK_DIR.glob("*.txt"))
LINK_CELL = re.compile(r"NV\d{1,2}|PIX|PXB|PHB|NODE|SYS|SOC")


def _topo(name_part: str) -> TopoMatrix:
    matrix = parse_topo_matrix(read_fixture(fixture_named(TOPO, name_part)))
    assert isinstance(matrix, TopoMatrix)
    return matrix


def _gpu_rows(*rows: str) -> dict[tuple[str, str], str]:
    """The GPU-to-GPU cells of a matrix written row by row ("X NV2 NV1"), both orders."""
    cells = {}
    for row, line in enumerate(rows):
        for column, cell in enumerate(line.split()):
            if cell != "X":
                cells[(f"GPU{row}", f"GPU{column}")] = cell
    return cells


def _gpu_links(matrix: TopoMatrix) -> dict[tuple[str, str], str]:
    return {pair: cell for pair, cell in matrix.links.items() if pair[0][:3] == pair[1][:3] == "GPU"}


def _nic_row(matrix: TopoMatrix, gpu: int) -> list[str | None]:
    return [matrix.link(f"GPU{gpu}", nic) for nic in matrix.nics]


def _nics(count: int) -> list[str]:
    return [f"NIC{i}" for i in range(count)]


# --------------------------------------------------------------------------- every capture of section B


def test_every_capture_in_the_corpus_has_its_own_test():
    known = (
        "club3090-1229-2x-rtx5090-phb-full",
        "club3090-1229-2x-rtx5090-topo-p2p-rw-GNS",
        "gpuexporter-h100-sxm-single-visible",
        "gpuexporter-windows-rtx2080s-591.86-topo-m-error",
        "gpuexporter-windows-rtx2080s-610.62-empty-affinity",
        "nccl-1439-8gpu",
        "nccl-1453-h100",
        "nccl-820-a100",
        "nccl-tests-29-dgx1",
        "nchc-nano4-8x-h200",
        "stas00-mleng-2gpu-nv2",
        "stas00-mleng-2gpu-phb",
        "stas00-mleng-8x-h100",
        "xuesongtap-2x-gtx1080ti",
        "xuesongtap-4x-a10",
        "xuesongtap-8x-a100",
    )
    if not TOPO:
        pytest.skip("real captures not found")
    untested = [path.name for path in TOPO if not any(part in path.name for part in known)]
    assert untested == [], "write the exact assertions for these new captures"


def test_two_rtx5090_through_the_host_bridge_tab_separated():
    matrix = _topo("club3090-1229-2x-rtx5090-phb-full")
    assert matrix.gpus == [0, 1] and matrix.nics == [] and matrix.nic_names == {}
    assert matrix.links == _gpu_rows("X PHB", "PHB X")
    assert matrix.cpu_affinity == {0: "0-63", 1: "0-63"} and matrix.numa_affinity == {0: 0, 1: 0}
    assert matrix.gpu_numa_id == {}  # "N/A"
    assert (matrix.has_legend, matrix.complete, matrix.error) == (True, True, None)


def test_single_visible_h100_has_no_peer_columns():
    matrix = _topo("gpuexporter-h100-sxm-single-visible")
    assert matrix.gpus == [0] and matrix.nics == [] and matrix.links == {}
    assert matrix.cpu_affinity == {0: "0-19"} and matrix.numa_affinity == {0: 0}
    assert (matrix.has_legend, matrix.complete, matrix.error) == (True, True, None)


def test_windows_topo_error_is_kept_in_nvidia_smis_words():
    matrix = _topo("gpuexporter-windows-rtx2080s-591.86-topo-m-error")
    assert matrix.error == "ERROR: Option -m is missing its value. Please run 'nvidia-smi -h' for help."
    assert matrix.gpus == [] and matrix.links == {} and matrix.cpu_affinity == {} and matrix.complete is False
    p2p = parse_topo_p2p(read_fixture(fixture_named(TOPO, "topo-m-error")))
    assert p2p is not None and p2p.error == matrix.error and p2p.status == {}


def test_windows_affinity_printed_empty():
    matrix = _topo("gpuexporter-windows-rtx2080s-610.62-empty-affinity")
    assert matrix.gpus == [0] and matrix.links == {}
    assert matrix.cpu_affinity == {0: ""}  # printed empty: not unknown
    assert matrix.numa_affinity == {} and matrix.gpu_numa_id == {}
    assert (matrix.has_legend, matrix.complete) == (True, True)


def test_eight_pcie_gpus_on_two_sockets():
    matrix = _topo("nccl-1439-8gpu")
    assert matrix.gpus == list(range(8)) and matrix.nics == []
    assert matrix.links == _gpu_rows(
        "X PIX PHB PHB SYS SYS SYS SYS",
        "PIX X PHB PHB SYS SYS SYS SYS",
        "PHB PHB X PIX SYS SYS SYS SYS",
        "PHB PHB PIX X SYS SYS SYS SYS",
        "SYS SYS SYS SYS X PIX PHB PHB",
        "SYS SYS SYS SYS PIX X PHB PHB",
        "SYS SYS SYS SYS PHB PHB X PIX",
        "SYS SYS SYS SYS PHB PHB PIX X",
    )
    assert matrix.cpu_affinity == {i: "0-13,28-41" if i < 4 else "14-27,42-55" for i in range(8)}
    assert matrix.numa_affinity == {i: i // 4 for i in range(8)}
    # The legend was cut after its NODE line: the matrix itself is whole.
    assert (matrix.has_legend, matrix.complete) == (True, True)


def test_h100_nv18_with_nine_nics_tab_excerpt():
    matrix = _topo("nccl-1453-h100")
    assert matrix.gpus == list(range(8)) and matrix.nics == _nics(9) and matrix.nic_names == {}
    assert _gpu_links(matrix) == _gpu_rows(*[" ".join("X" if c == r else "NV18" for c in range(8)) for r in range(8)])
    assert nvlink_count(matrix.gpu_link(3, 6)) == 18
    near = {0: "NIC8", 1: "NIC7", 2: "NIC6", 3: "NIC5", 4: "NIC4", 5: "NIC3", 6: "NIC2", 7: "NIC1"}
    for gpu, nic in near.items():
        row = _nic_row(matrix, gpu)
        assert row.count("PIX") == 1 and row[matrix.nics.index(nic)] == "PIX"
        assert row[0] == "SYS"  # NIC0 hangs off neither socket's switches
    assert _nic_row(matrix, 0) == ["SYS"] * 5 + ["NODE"] * 3 + ["PIX"]
    assert _nic_row(matrix, 4) == ["SYS", "NODE", "NODE", "NODE", "PIX", "SYS", "SYS", "SYS", "SYS"]
    assert matrix.link("NIC1", "NIC2") == "NODE" and matrix.link("NIC5", "NIC6") == "NODE"
    assert matrix.link("NIC6", "NIC7") is None  # neither row is in the excerpt
    assert matrix.cpu_affinity == {i: "0-79" if i < 4 else "80-159" for i in range(8)}
    assert matrix.numa_affinity == {i: i // 4 for i in range(8)}
    assert (matrix.has_legend, matrix.complete) == (False, False)  # NIC6-NIC8 rows and the legend cut


def test_garbled_a100_paste_keeps_what_is_readable():
    matrix = _topo("nccl-820-a100")
    names = [f"mlx5_{i}" for i in range(10)]
    assert matrix.gpus == list(range(8)) and matrix.nics == names
    assert matrix.nic_names == {name: name for name in names}  # old drivers label the NIC by its name
    for a in range(6):
        for b in range(8):
            assert matrix.gpu_link(a, b) == (None if a == b else "NV12")
    assert matrix.gpu_link(6, 7) is None  # both rows are cut
    assert _nic_row(matrix, 0)[:4] == ["PXB", "PXB", "NODE", "NODE"]
    assert _nic_row(matrix, 2)[:4] == ["NODE", "NODE", "PXB", "PXB"]
    assert _nic_row(matrix, 4)[:4] == ["SYS"] * 4
    # "NODENODE" and "SYS SYS" merged two cells: nothing from there on is guessed.
    assert all(cell is None for gpu in range(8) for cell in _nic_row(matrix, gpu)[4:])
    assert matrix.cpu_affinity == {i: "0-31,64-95" if i < 4 else "32-63,96-127" for i in range(6)}
    assert matrix.numa_affinity == {i: i // 4 for i in range(6)}
    assert (matrix.has_legend, matrix.complete, matrix.error) == (False, False, None)


def test_dgx1_hybrid_cube_mesh_with_a_row_cut():
    matrix = _topo("nccl-tests-29-dgx1")
    assert matrix.gpus == list(range(8)) and matrix.nics == ["mlx5_0", "mlx5_1"]
    printed = _gpu_rows(
        "X NV2 NV2 NV1 NV1 SYS SYS SYS",
        "NV2 X NV1 NV2 SYS NV1 SYS SYS",
        "NV2 NV1 X NV1 SYS SYS NV2 SYS",
        "NV1 NV2 NV1 X SYS SYS SYS NV2",
        "NV1 SYS SYS SYS X NV2 NV2 NV1",
        "SYS NV1 SYS SYS NV2 X NV1 NV2",
        "SYS SYS NV2 SYS NV2 NV1 X NV1",
    )
    mirrored = {(b, a): cell for (a, b), cell in printed.items() if a != "GPU7" and b == "GPU7"}
    assert _gpu_links(matrix) == {**printed, **mirrored}  # GPU7's links come from the other rows
    assert (matrix.gpu_link(7, 3), matrix.gpu_link(7, 4), matrix.gpu_link(7, 0)) == ("NV2", "NV1", "SYS")
    assert [_nic_row(matrix, g) for g in (0, 2, 4)] == [["NODE", "NODE"], ["PIX", "PIX"], ["SYS", "SYS"]]
    assert _nic_row(matrix, 7) == [None, None]
    assert matrix.cpu_affinity == {i: "0-23,48-71" if i < 4 else "24-47,72-95" for i in range(7)}
    assert matrix.numa_affinity == {}  # no such column in this driver's layout
    assert (matrix.has_legend, matrix.complete) == (False, False)


def test_slurm_job_sees_empty_cpu_affinity_for_the_other_socket():
    matrix = _topo("nchc-nano4-8x-h200")  # with the prompt and srun lines above the matrix
    assert matrix.gpus == list(range(8)) and matrix.nics == _nics(10)
    assert matrix.nic_names == {f"NIC{i}": f"mlx5_{i}" for i in range(10)}
    assert all(matrix.gpu_link(a, b) == "NV18" for a in range(8) for b in range(8) if a != b)
    near = {0: "NIC0", 1: "NIC3", 2: "NIC4", 3: "NIC5", 4: "NIC6", 5: "NIC7", 6: "NIC8", 7: "NIC9"}
    for gpu, nic in near.items():
        assert _nic_row(matrix, gpu) == ["PIX" if n == nic else "NODE" for n in matrix.nics]
    assert matrix.link("NIC1", "NIC2") == "PIX" and matrix.link("NIC2", "NIC1") == "PIX"
    assert matrix.cpu_affinity == {0: "", 1: "", 2: "", 3: "", 4: "56", 5: "56", 6: "56", 7: "56"}
    assert matrix.numa_affinity == {i: i // 4 for i in range(8)}  # still read right past the empty cell
    assert (matrix.has_legend, matrix.complete, matrix.error) == (True, True, None)


@pytest.mark.parametrize(
    ("name_part", "cell", "cpus"),
    [
        ("stas00-mleng-2gpu-nv2", "NV2", "0-23"),
        ("stas00-mleng-2gpu-phb", "PHB", "0-11"),
        ("xuesongtap-2x-gtx1080ti", "PHB", "0-11"),
    ],
)
def test_two_gpu_matrices_of_the_older_layout(name_part, cell, cpus):
    matrix = _topo(name_part)
    assert matrix.gpus == [0, 1] and matrix.nics == []
    assert matrix.links == _gpu_rows(f"X {cell}", f"{cell} X")
    assert matrix.cpu_affinity == {0: cpus, 1: cpus}
    assert matrix.numa_affinity == {} and matrix.gpu_numa_id == {}  # "N/A", no GPU NUMA ID column
    assert matrix.complete is True
    assert matrix.has_legend is ("xuesongtap" in name_part)  # the stas00 excerpts print no legend


def test_h100_nv18_with_hyperthread_affinity():
    matrix = _topo("stas00-mleng-8x-h100")
    assert matrix.gpus == list(range(8)) and matrix.nics == []
    assert all(matrix.gpu_link(a, b) == "NV18" for a in range(8) for b in range(8) if a != b)
    assert len(matrix.links) == 56
    assert matrix.cpu_affinity == {i: "0-51,104-155" if i < 4 else "52-103,156-207" for i in range(8)}
    assert matrix.numa_affinity == {i: i // 4 for i in range(8)}
    assert (matrix.has_legend, matrix.complete) == (False, True)


def test_four_a10_all_across_the_system():
    matrix = _topo("xuesongtap-4x-a10")
    assert matrix.gpus == [0, 1, 2, 3] and matrix.nics == ["NIC0", "NIC1"]
    assert matrix.nic_names == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert set(matrix.links.values()) == {"SYS", "PIX"}
    assert matrix.link("NIC0", "NIC1") == "PIX"  # the row ends in a trailing "X "
    assert all(_nic_row(matrix, gpu) == ["SYS", "SYS"] for gpu in range(4))
    assert matrix.cpu_affinity == dict.fromkeys(range(4), "0-127")
    assert matrix.numa_affinity == dict.fromkeys(range(4), 0)
    assert (matrix.has_legend, matrix.complete) == (True, True)


def test_eight_a100_seventeen_nics_and_a_bond():
    matrix = _topo("xuesongtap-8x-a100")
    assert matrix.gpus == list(range(8)) and matrix.nics == _nics(17)
    assert matrix.nic_names == {**{f"NIC{i}": f"mlx5_{i + 2}" for i in range(16)}, "NIC16": "mlx5_bond_0"}
    assert all(matrix.gpu_link(a, b) == "NV12" for a in range(8) for b in range(8) if a != b)
    for gpu in range(8):
        switch = gpu // 2  # each pair of GPUs shares a switch with four NICs
        assert _nic_row(matrix, gpu) == ["PXB" if i // 4 == switch and i < 16 else "SYS" for i in range(17)]
    assert (matrix.link("NIC0", "NIC1"), matrix.link("NIC0", "NIC2"), matrix.link("NIC16", "NIC0")) == (
        "PIX",
        "PXB",
        "SYS",
    )
    assert len(matrix.links) == 25 * 24
    assert matrix.cpu_affinity == dict.fromkeys(range(8), "0-103")
    assert matrix.numa_affinity == dict.fromkeys(range(8), 0)
    assert (matrix.has_legend, matrix.complete) == (True, True)


def test_p2p_matrix_read_as_a_topology_matrix_has_no_paths():
    matrix = _topo("topo-p2p-rw-GNS")
    assert matrix.gpus == [0, 1] and matrix.links == {} and matrix.complete is False


@pytest.mark.parametrize("path", TOPO, ids=lambda p: p.name)
def test_every_capture_keeps_its_shape(path):
    matrix = parse_topo_matrix(read_fixture(path))
    assert isinstance(matrix, TopoMatrix)
    labels = {f"GPU{g}" for g in matrix.gpus} | set(matrix.nics)
    for (a, b), cell in matrix.links.items():
        assert a in labels and b in labels and a != b and LINK_CELL.fullmatch(cell)
        assert matrix.links[(b, a)] == cell  # every real capture is symmetric
    assert set(matrix.cpu_affinity) <= set(matrix.gpus) and set(matrix.numa_affinity) <= set(matrix.gpus)


# --------------------------------------------------------------------------- topo -p2p


def test_p2p_gpu_not_supported_between_consumer_cards():
    p2p = parse_topo_p2p(read_fixture(fixture_named(TOPO, "topo-p2p-rw-GNS")))
    assert isinstance(p2p, P2PMatrix)
    assert p2p.gpus == [0, 1] and p2p.status == {(0, 1): "GNS", (1, 0): "GNS"} and p2p.get(1, 0) == "GNS"
    assert p2p.capability is None and p2p.error is None  # nvidia-smi prints no heading


def test_p2p_capability_from_the_command_line_synthetic():
    text = (
        "$ nvidia-smi topo -p2p n\n \tGPU0\tGPU1\tGPU2\t\n GPU0\tX\tOK\tNS\t\n GPU1\tOK\tX\tCNS\t\n"
        " GPU2\tNS\tCNS\tX\t\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n"
    )
    p2p = parse_topo_p2p(text)
    assert p2p.capability == "n" and p2p.gpus == [0, 1, 2]
    assert (p2p.get(0, 1), p2p.get(2, 0), p2p.get(1, 2), p2p.get(0, 0)) == ("OK", "NS", "CNS", None)


@pytest.mark.parametrize("text", ["", "no matrix here\n", "GPU0 GPU1\n"])
def test_p2p_nothing_to_read_synthetic(text):
    assert parse_topo_p2p(text) is None or parse_topo_p2p(text).status == {}


# --------------------------------------------------------------------------- nvlink -s


def _nvlink(name_part: str) -> dict[int, NvLinkState]:
    return parse_nvlink_status(read_fixture(fixture_named(NVLINK, name_part)))


def test_every_nvlink_capture_has_a_source():
    sources = (NVLINK_DIR / "SOURCES.md").read_text(encoding="utf-8")
    assert NVLINK and all(f"`{path.name}`" in sources for path in NVLINK)


@pytest.mark.parametrize("name_part", ["h100-80gb-hbm3-590.48.01", "h200-580.173.02"])
def test_hopper_eighteen_links_up(name_part):
    [(index, state)] = _nvlink(name_part).items()
    assert index == 0 and state.source == "nvidia-smi nvlink -s"
    assert (state.total, state.active, state.down, state.supported) == (18, 18, [], True)
    assert [port.link for port in state.ports] == list(range(18))
    assert {port.speed_gbps for port in state.ports} == {26.562}


def test_v100_with_two_links_down():
    states = _nvlink("azhpc-diagnostics-73")
    assert list(states) == [3]
    state = states[3]
    assert (state.total, state.active, state.down) == (6, 4, [3, 5])
    assert [port.speed_gbps for port in state.ports] == [25.781, 25.781, 25.781, None, 25.781, None]


def test_gb200_links_and_a_cut_paste():
    states = _nvlink("gb200")
    assert sorted(states) == [0, 1]
    assert (states[0].total, states[0].active, states[1].total) == (18, 18, 2)
    assert states[0].ports[17].speed_gbps == 53.125


@pytest.mark.parametrize("name_part", ["rtx2080super-595.71.05-all-links-inactive", "gpud-1085-b200"])
def test_all_links_inactive_is_nvlink_present_but_down(name_part):
    [state] = _nvlink(name_part).values()
    assert state.supported is True and state.ports == [] and state.active == 0
    assert "all links are inActive" in state.note


def test_card_without_nvlink():
    [(index, state)] = _nvlink("l40s").items()
    assert index == 0 and state.supported is False and state.ports == []
    assert state.note == "Device does not have or support Nvlink"


def test_capability_listing_names_links_without_their_state():
    [state] = _nvlink("nvlink-capabilities-c").values()
    assert [port.link for port in state.ports] == [0, 1, 2, 3, 4]
    assert all(port.active is None for port in state.ports) and state.down == [] and state.supported is None


@pytest.mark.parametrize(
    "text",
    ["", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", "Link 0: 25.781 GB/s\n"],
)
def test_nvlink_nothing_to_place_synthetic(text):
    assert parse_nvlink_status(text) == {}


# --------------------------------------------------------------------------- properties


@given(st.none() | non_text_json() | any_code_points() | decoded_bytes())
def test_any_input_never_raises(value):
    matrix = parse_topo_matrix(value)
    assert matrix is None or isinstance(matrix, TopoMatrix)
    p2p = parse_topo_p2p(value)
    assert p2p is None or isinstance(p2p, P2PMatrix)
    assert all(isinstance(state, NvLinkState) for state in parse_nvlink_status(value).values())


_TOKENS = [
    "GPU0",
    "GPU1",
    "GPU12",
    "NIC0",
    "NIC1",
    "mlx5_0",
    "X",
    " X ",
    "NV12",
    "NV4",
    "PIX",
    "PXB",
    "PHB",
    "NODE",
    "SYS",
    "SOC",
    "NODENODE",
    "0-63",
    "0-13,28-41",
    "0",
    "1",
    "56",
    "N/A",
    "",
    "CPU Affinity",
    "NUMA Affinity",
    "GPU NUMA ID",
    "Legend:",
    "NIC Legend:",
    "NIC0: mlx5_0",
    "OK",
    "GNS",
    "ERROR: x",
    "GPU 0: NVIDIA H100 (UUID: GPU-1)",
    "Link 0: 26.562 GB/s",
    "Link 3: <inactive>",
    "Link 1, P2P is",
]
_LINE = st.builds(
    lambda cells, sep: sep.join(cells),
    st.lists(st.sampled_from(_TOKENS), max_size=12),
    st.sampled_from(["\t", "  ", "    ", " ", "\t\t"]),
)


@given(st.lists(_LINE, max_size=25).map("\n".join))
def test_text_made_of_matrix_tokens_synthetic(text):
    matrix = parse_topo_matrix(text)
    if matrix is not None:
        labels = {f"GPU{g}" for g in matrix.gpus} | set(matrix.nics)
        assert all(a in labels and b in labels and LINK_CELL.fullmatch(cell) for (a, b), cell in matrix.links.items())
        assert set(matrix.cpu_affinity) <= set(matrix.gpus)
        assert all(isinstance(node, int) for node in matrix.numa_affinity.values())
        assert isinstance(matrix.complete, bool)
    p2p = parse_topo_p2p(text)
    if p2p is not None:
        assert set(p2p.status.values()) <= set(P2P_STATUSES)
    for state in parse_nvlink_status(text).values():
        links = [port.link for port in state.ports]
        assert links == sorted(set(links))
        assert all(port.active in (True, False, None) for port in state.ports)


@st.composite
def _generated_matrix(draw):
    """A matrix written the way nvidia-smi writes one (tabs, two before "GPU NUMA ID"), and what it says."""
    gpus = draw(st.integers(1, 8))
    nics = draw(st.integers(0, 4))
    labels = [f"GPU{i}" for i in range(gpus)] + [f"NIC{i}" for i in range(nics)]
    paths = {}
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            nv = a.startswith("GPU") and b.startswith("GPU")
            paths[(a, b)] = paths[(b, a)] = draw(
                st.sampled_from(
                    ["NV1", "NV2", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"]
                    if nv
                    else ["PIX", "PXB", "PHB", "NODE", "SYS"]
                )
            )
    cpus = {i: draw(st.sampled_from(["0-63", "0-13,28-41", "56", ""])) for i in range(gpus)}
    numa = {i: draw(st.integers(0, 7)) for i in range(gpus)}
    lines = ["\t" + "\t".join(labels + ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for row in labels:
        cells = [" X " if column == row else paths[(row, column)] for column in labels]
        if row.startswith("GPU"):
            index = int(row[3:])
            cells += [cpus[index], str(numa[index]), "", "N/A"]
        lines.append("\t".join([row] + cells))
    lines += ["", "Legend:", "", "  X    = Self", "", "NIC Legend:", ""] + [f"  NIC{i}: mlx5_{i}" for i in range(nics)]
    text = "\n".join(lines) + "\n"
    if draw(st.booleans()):
        text = text.expandtabs(8)  # a terminal's copy: tabs become spaces, empty cells vanish
    return text, gpus, nics, paths, cpus, numa


@given(_generated_matrix())
def test_generated_matrices_read_back_exactly_synthetic(case):
    text, gpus, nics, paths, cpus, numa = case
    matrix = parse_topo_matrix(text)
    assert matrix.gpus == list(range(gpus)) and matrix.nics == _nics(nics)
    assert matrix.links == paths
    assert matrix.cpu_affinity == cpus and matrix.numa_affinity == numa
    assert matrix.nic_names == {f"NIC{i}": f"mlx5_{i}" for i in range(nics)}
    assert (matrix.has_legend, matrix.complete, matrix.error) == (True, True, None)


@given(st.data())
def test_mutated_real_captures_never_raise(data):
    texts = [read_fixture(p) for p in TOPO] + [read_fixture(p) for p in NVLINK]
    if not texts:
        pytest.skip("real captures not found")
    names = [p.name for p in TOPO] + [p.name for p in NVLINK]
    text = data.draw(mutated(texts, names, noise_alphabet="\t XNVSYPIHB0-9:/<>"))
    matrix = parse_topo_matrix(text)
    assert matrix is None or all(LINK_CELL.fullmatch(cell) for cell in matrix.links.values())
    p2p = parse_topo_p2p(text)
    assert p2p is None or set(p2p.status.values()) <= set(P2P_STATUSES)
    assert isinstance(parse_nvlink_status(text), dict)
