"""GPU conditions (clock-event reasons, power limits, processes) and the topology matrix, from real captures."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.gpu_state import GpuState, parse_gpu_states_text, parse_gpu_states_xml
from gpudoctor.facts.nvidia_smi_topo import parse_topo_matrix
from gpudoctor.facts.topology_model import TopoMatrix, nvlink_count
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, fixture_named, mutated

XML = fixture_files("A")
TABLES = fixture_files("C")
TOPO = fixture_files("B")


# --------------------------------------------------------------------------- nvidia-smi -q -x


def test_lowered_power_limit_of_a_real_rtx3090():
    [state] = parse_gpu_states_xml(read_fixture(fixture_named(XML, "rtx3090-525")))
    assert (state.power_limit_w, state.default_power_limit_w, state.max_power_limit_w) == (200.0, 350.0, 375.0)
    assert state.power_capped
    assert state.clock_reasons_active == ["gpu_idle"] and state.slowing_reasons == []
    assert state.performance_state == "P8" and state.bus_id == "0000:00:10.0"


def test_power_cap_and_processes_of_a_busy_v100s_box():
    states = parse_gpu_states_xml(read_fixture(fixture_named(XML, "8x-tesla-v100s")))
    assert len(states) == 8 and [s.index for s in states] == list(range(8))
    capped = [s.index for s in states if "sw_power_cap" in s.slowing_reasons]
    assert capped and all(not s.power_capped for s in states)  # at its limit, the limit itself is the default
    assert all(s.processes_known and s.processes[0].pid == 37305 and s.processes[0].name == "python" for s in states)
    assert states[0].processes[0].used_mib == 31683 and states[0].utilization_pct == 97


def test_event_reasons_of_new_schemas_and_mig():
    [ada] = parse_gpu_states_xml(read_fixture(fixture_named(XML, "rtx4000-sff-ada-595")))
    assert ada.clock_reasons_active == ["gpu_idle"]  # the *_counters section is not a reason
    assert ada.processes[0].name == "cosmic-comp" and ada.processes[0].type == "G"
    [mig] = parse_gpu_states_xml(read_fixture(fixture_named(XML, "a100-sxm4-40gb-mig")))
    assert mig.mig_enabled is True


@pytest.mark.parametrize("path", XML, ids=lambda p: p.name)
def test_every_real_xml_reads(path):
    states = parse_gpu_states_xml(read_fixture(path))
    assert states and all(isinstance(s, GpuState) for s in states)
    for state in states:
        assert state.power_limit_w is None or state.power_limit_w > 0
        assert all(reason.islower() for reason in state.clock_reasons_active)


# --------------------------------------------------------------------------- the plain table


def test_table_power_and_no_processes():
    states = parse_gpu_states_text(read_fixture(fixture_named(TABLES, "gls-8x-h100-sxm")))
    assert [s.index for s in states] == list(range(8))
    first = states[0]
    assert (first.bus_id, first.performance_state, first.power_draw_w, first.power_limit_w) == (
        "0000:18:00.0",
        "P0",
        100.0,
        700.0,
    )
    assert first.memory_total_mib == 81559 and first.processes == [] and first.processes_known


def test_table_processes_are_attached_to_their_gpu():
    [state] = parse_gpu_states_text(read_fixture(fixture_named(TABLES, "h100-mig-enabled-590.48.01-load")))
    assert [(p.pid, p.name, p.used_mib) for p in state.processes] == [
        (21180, "/root/tools/memhog", 2296),
        (21181, "/root/tools/memhog", 1272),
        (21198, "./gpu_burn", 7484),
    ]
    windows = parse_gpu_states_text(read_fixture(fixture_named(TABLES, "windows-wddm-rtx2080super-610.62-load")))
    assert len(windows[0].processes) > 10 and windows[0].processes[0].type == "C+G"


def test_old_layout_without_process_list():
    [state] = parse_gpu_states_text(read_fixture(fixture_named(TABLES, "issue-gtx780")))
    assert state.processes == [] and state.processes_known is False  # "Not Supported" says nothing


# --------------------------------------------------------------------------- topology
# The exact reading of every topo -m capture is in test_topology_parsers.py; these are the facts the
# smoke checks lean on (pair paths by GPU index, NVLink counts, NUMA nodes).


def test_pcie_matrix_with_two_numa_nodes():
    topo = parse_topo_matrix(read_fixture(fixture_named(TOPO, "nccl-1439")))
    assert topo.gpus == list(range(8))
    assert (topo.gpu_link(0, 1), topo.gpu_link(0, 2), topo.gpu_link(0, 4), topo.gpu_link(4, 0)) == (
        "PIX",
        "PHB",
        "SYS",
        "SYS",
    )
    assert topo.numa_affinity == {0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 1, 7: 1}
    assert topo.cpu_affinity[4] == "14-27,42-55"


def test_nvlink_matrices():
    h100 = parse_topo_matrix(read_fixture(fixture_named(TOPO, "nccl-1453-h100")))  # tab-separated, NIC columns
    assert h100.gpu_link(3, 6) == "NV18" and nvlink_count(h100.gpu_link(3, 6)) == 18
    assert h100.numa_affinity[7] == 1
    dgx1 = parse_topo_matrix(read_fixture(fixture_named(TOPO, "dgx1-v100")))
    assert (dgx1.gpu_link(0, 1), dgx1.gpu_link(0, 3), dgx1.gpu_link(0, 5)) == ("NV2", "NV1", "SYS")
    assert nvlink_count("SYS") is None and nvlink_count(None) is None


def test_garbled_and_cut_matrices_keep_the_gpu_cells():
    garbled = parse_topo_matrix(read_fixture(fixture_named(TOPO, "garbled-columns")))
    assert garbled.gpu_link(0, 7) == "NV12" and garbled.gpu_link(5, 4) == "NV12" and garbled.complete is False
    single = parse_topo_matrix(read_fixture(fixture_named(TOPO, "single-visible")))
    assert single.gpus == [0] and single.links == {} and single.numa_affinity == {0: 0}
    error = parse_topo_matrix(read_fixture(fixture_named(TOPO, "topo-m-error")))
    assert error.gpus == [] and error.error.startswith("ERROR: Option -m is missing its value")


@pytest.mark.parametrize("path", TOPO, ids=lambda p: p.name)
def test_every_real_matrix_is_symmetric_where_both_cells_exist(path):
    topo = parse_topo_matrix(read_fixture(path))
    if topo is None:
        return
    for (a, b), cell in topo.links.items():
        if (b, a) in topo.links:
            assert topo.links[(b, a)] == cell


# --------------------------------------------------------------------------- garbage


@given(st.none() | any_code_points())
def test_any_text_never_raises(text):
    assert isinstance(parse_gpu_states_xml(text), list)
    assert isinstance(parse_gpu_states_text(text), list)
    topo = parse_topo_matrix(text)
    assert topo is None or isinstance(topo, TopoMatrix)


@given(st.data())
def test_mutated_real_captures_never_raise(data):
    if not (XML and TABLES and TOPO):
        pytest.skip("real captures not found")
    xml = data.draw(mutated([read_fixture(p) for p in XML[:6]], [p.name for p in XML[:6]], noise_alphabet="<>/ W%"))
    assert all(isinstance(s, GpuState) for s in parse_gpu_states_xml(xml))
    table = data.draw(
        mutated([read_fixture(p) for p in TABLES[:8]], [p.name for p in TABLES[:8]], noise_alphabet="| /WMiB%")
    )
    assert all(isinstance(s, GpuState) for s in parse_gpu_states_text(table))
    topo = data.draw(mutated([read_fixture(p) for p in TOPO], [p.name for p in TOPO], noise_alphabet="\t NVXSYS0"))
    result = parse_topo_matrix(topo)
    assert result is None or all(isinstance(cell, str) for cell in result.links.values())
