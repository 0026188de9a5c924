"""NVML's word on the wiring: CPU lists, the NVML probe's topology and health fields, and their parsing.

Every NVML record here is SYNTHETIC (``tests/synthetic/nvml_records.py``): this machine has no GPU,
and no capture of the probe on one exists yet.  The probe's own logic runs against
``SyntheticNvml``, a SYNTHETIC stand-in for nvidia-ml-py; the real binding is exercised by
``tests/integration/test_nvml_probe_live.py``.
"""

from __future__ import annotations

import copy
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence import nvml_probe
from gpudoctor.facts.gpu_health import health_from_nvml
from gpudoctor.facts.nvml import parse_nvml_json
from gpudoctor.facts.nvml_topology import NvmlTopology, cpu_list, nvml_topology, parse_cpu_list
from gpudoctor.facts.topology_model import nvlink_count
from tests.helpers.strategies import json_like, mutated_json
from tests.synthetic import nvml_records
from tests.synthetic.nvml_records import SyntheticNvml

# --------------------------------------------------------------------------- CPU lists


def test_cpu_list_forms():
    assert cpu_list(list(range(14)) + list(range(28, 42))) == "0-13,28-41"
    assert cpu_list([5, 3, 4, 9, 3]) == "3-5,9"
    assert cpu_list([7]) == "7" and cpu_list([]) == "" and cpu_list(None) == ""
    assert cpu_list([1, "2", True, -1, 2.0, 3]) == "1,3"  # only real CPU ids count


def test_parse_cpu_list_forms():
    assert parse_cpu_list("0-13,28-41") == set(range(14)) | set(range(28, 42))
    assert parse_cpu_list(" 56\n") == {56}  # as sysfs local_cpulist ends
    for garbage in ("", "N/A", "0-", "3-1", "1,,2", "0x3", "1 2", "0-99999999", None, 12):
        assert parse_cpu_list(garbage) == set()


@given(st.sets(st.integers(0, 4095), max_size=300))
def test_cpu_list_round_trip(cpus):
    text = cpu_list(sorted(cpus))
    assert parse_cpu_list(text) == cpus
    assert cpu_list(sorted(parse_cpu_list(text))) == text


@given(st.text(alphabet="0123456789-, x\n", max_size=40))
def test_parse_cpu_list_takes_any_text(text):
    cpus = parse_cpu_list(text)
    assert parse_cpu_list(cpu_list(sorted(cpus))) == cpus


# --------------------------------------------------------------------------- records -> topology


def test_synthetic_hgx_h100_every_pair_nv18_through_the_switches():
    topology = nvml_topology(nvml_records.healthy_8x_h100_sxm())
    assert sorted(topology.gpus) == list(range(8)) and bool(topology)
    assert len(topology.pairs) == 28
    assert {pair.path for pair in topology.pairs.values()} == {"NV18"}
    assert all(
        nvlink_count(pair.path) == 18 and pair.p2p_read == "OK" and pair.p2p_nvlink == "OK"
        for pair in topology.pairs.values()
    )
    gpu = topology.gpu(5)
    assert gpu.numa_node == 1 and gpu.cpu_affinity == "56-111,168-223" and gpu.bus_id == "0000:ab:00.0"
    assert gpu.nvlink.source == "nvml" and (gpu.nvlink.total, gpu.nvlink.active, gpu.nvlink.down) == (18, 18, [])
    assert {port.remote_type for port in gpu.nvlink.ports} == {"switch"}
    assert gpu.pcie.source == "nvml" and gpu.pcie.replay_count == 0 and gpu.pcie.width_current == 16
    assert {gpu.fabric_state for gpu in topology.gpus.values()} == {"completed"}
    assert topology.gpu(0).cpu_affinity == "0-55,112-167"


def test_synthetic_link_down_shows_in_the_gpu_and_its_pairs():
    topology = nvml_topology(nvml_records.h100_with_one_link_down())
    assert topology.gpu(3).nvlink.down == [7, 12] and topology.gpu(3).nvlink.active == 16
    assert topology.pair(3, 6).path == "NV16" and topology.pair(1, 3).path == "NV16"
    assert topology.pair(0, 1).path == "NV18"


def test_synthetic_pcie_only_paths_and_p2p_words():
    topology = nvml_topology(nvml_records.pcie_quad())
    paths = {(pair.a, pair.b): pair.path for pair in topology.pairs.values()}
    assert paths == {(0, 1): "PIX", (0, 2): "SYS", (0, 3): "SYS", (1, 2): "SYS", (1, 3): "SYS", (2, 3): "PXB"}
    assert topology.pair(1, 0).p2p_read == "OK" and topology.pair(0, 2).p2p_read == "NS"
    assert topology.pair(3, 2).p2p_nvlink == "NS"
    assert all(gpu.nvlink is None for gpu in topology.gpus.values())
    slow = topology.gpu(1).pcie
    assert (slow.gen_current, slow.gen_max, slow.width_current, slow.width_max, slow.replay_count) == (4, 5, 8, 16, 211)
    assert {gpu.fabric_state for gpu in topology.gpus.values()} == {None}


def test_synthetic_nvlink_bridge_counts_links_to_the_other_gpu():
    topology = nvml_topology(nvml_records.nvlink_bridge_pair())
    [pair] = topology.pairs.values()
    assert (pair.a, pair.b, pair.path) == (0, 1, "NV4")
    assert topology.gpu(0).nvlink.ports[0].remote_bus_id == "0000:41:00.0"


def test_synthetic_lost_gpu_has_no_link_facts():
    topology = nvml_topology(nvml_records.lost_gpu())
    lost = topology.gpu(1)
    assert lost.bus_id is None and lost.pcie.source is None and lost.nvlink is None and lost.numa_node is None
    assert topology.pairs == {} and sorted(topology.gpus) == [0, 1]


def test_driver_not_loaded_is_an_empty_topology():
    assert nvml_topology(nvml_records.driver_not_loaded()) == NvmlTopology()
    assert not nvml_topology(None)


RECORDS = [
    nvml_records.healthy_8x_h100_sxm(),
    nvml_records.pcie_quad(),
    nvml_records.nvlink_bridge_pair(),
    nvml_records.lost_gpu(),
    nvml_records.v100_retired_pages(),
]


@given(json_like())
def test_topology_takes_any_json(value):
    assert isinstance(nvml_topology(value), NvmlTopology)


@given(st.sampled_from(range(len(RECORDS))).flatmap(lambda i: mutated_json(copy.deepcopy(RECORDS[i]))))
def test_topology_takes_damaged_records(value):
    topology = nvml_topology(value)
    for (a, b), pair in topology.pairs.items():
        assert a == pair.a < pair.b == b
        assert pair.path is None or pair.path in ("X", "PIX", "PXB", "PHB", "NODE", "SYS") or nvlink_count(pair.path)
    for index, gpu in topology.gpus.items():
        assert gpu.index == index
        assert gpu.cpu_affinity is None or parse_cpu_list(gpu.cpu_affinity) or gpu.cpu_affinity == ""
    assert isinstance(parse_nvml_json(value).lost_gpus, list)


# --------------------------------------------------------------------------- the probe, on a synthetic binding

SYNTHETIC_GPUS = [
    {"bus": 0x18, "links": [(0x05, 2)] * 18, "cpus": [0, 1, 2, 3, 8], "numa": 0},
    {"bus": 0x2A, "links": [(0x05, 2)] * 16 + [None, None], "mig_devices": 3, "replays": 12},
    {"bus": 0x3A, "lost": True},
    {"bus": 0x5D, "lost_handle": True},
    {"bus": 0x9A, "links": None, "unsupported": ["ecc_mode", "fabric"], "inforom_corrupt": True, "retired": (68, 2)},
]


@pytest.fixture
def synthetic_probe(monkeypatch):
    binding = SyntheticNvml(SYNTHETIC_GPUS)
    monkeypatch.setitem(sys.modules, "pynvml", binding)
    record = json.loads(json.dumps(nvml_probe.probe()))  # what the subprocess prints, read back
    return binding, record


def test_probe_on_synthetic_binding_walks_links_until_nvml_says_stop(synthetic_probe):
    binding, record = synthetic_probe
    first, second, _, _, no_nvlink = record["devices"]
    assert [port["link"] for port in first["nvlink"]] == list(range(18))
    assert first["nvlink"][0] == {
        "link": 0,
        "active": True,
        "version": 4,
        "remote_bus_id": "00000000:05:00.0",
        "remote_type": "switch",
    }
    assert [port["active"] for port in second["nvlink"][15:]] == [True, False, False]
    assert second["nvlink"][17]["remote_bus_id"] is None  # an inactive link's far end is not asked for
    assert no_nvlink["nvlink"] is None and no_nvlink["errors"]["nvlink"]["name"] == "NVML_ERROR_NOT_SUPPORTED"
    # 18 + 18 links, and one call to learn GPU 4 has none; the binding's MAX_LINKS (18) caps the walk
    assert binding.calls.count("nvlink_state") == 37
    assert "nvlink18_state" not in first["errors"]


def test_probe_on_synthetic_binding_health_fields(synthetic_probe):
    _, record = synthetic_probe
    first, second, _, _, fifth = record["devices"]
    assert first["numa_node"] == 0 and first["cpu_affinity"] == [0, 1, 2, 3, 8]
    assert second["pcie"]["replay_count"] == 12
    health = first["health"]
    assert health["ecc_mode"] == {"current": 1, "pending": 1}
    assert health["ecc_errors"] == {
        "volatile_corrected": 0,
        "volatile_uncorrected": 0,
        "aggregate_corrected": 7,
        "aggregate_uncorrected": 0,
    }
    assert health["inforom"] == {"valid": True, "error": None, "image": "G520.0200.00.05"}
    assert health["temperature"] == {"current": 33, "slowdown": 87, "shutdown": 92}
    assert health["clock_reasons"] == 0x5  # from the throttle-reasons fallback: the binding lacks "event reasons"
    assert "clock_reasons" not in first["errors"]
    assert health["compute_processes"] == 2 and health["mig_instances"] is None
    assert health["fabric"] == {"state": 3, "status": 0}
    assert second["health"]["mig_instances"] == 3
    fifth_health = fifth["health"]
    assert fifth_health["ecc_mode"] is None and fifth_health["ecc_errors"] is None  # no counters asked for
    assert fifth_health["retired_pages"] == {"sbe": 68, "dbe": 2, "pending": 0}
    assert fifth_health["inforom"]["valid"] is False
    assert fifth_health["inforom"]["error"] == "NVML_ERROR_CORRUPTED_INFOROM"
    assert fifth_health["fabric"] is None and fifth["errors"]["fabric"]["code"] == 3


def test_probe_on_synthetic_binding_stops_asking_a_lost_gpu(synthetic_probe):
    binding, record = synthetic_probe
    lost_midway, lost_handle = record["devices"][2], record["devices"][3]
    assert lost_midway["lost"] is True and list(lost_midway["errors"]) == ["name"]
    assert lost_midway["health"]["ecc_mode"] is None
    assert lost_handle == {
        "index": 3,
        "errors": {"handle": lost_handle["errors"]["handle"]},
        "lost": True,
        "reset_required": False,
    }
    assert lost_handle["errors"]["handle"]["code"] == 15
    # pairs only between GPUs with a working handle: 0, 1 and 4; the READ index tuple did not break the call
    assert [(pair["a"], pair["b"]) for pair in record["pairs"]] == [(0, 1), (0, 4), (1, 4)]
    assert all(pair["p2p"] == {"read": 0, "nvlink": 0} and pair["errors"] == {} for pair in record["pairs"])
    assert binding.calls.count("p2p") == 6


def test_probe_record_reads_back_into_facts(synthetic_probe):
    _, record = synthetic_probe
    topology = nvml_topology(record)
    assert topology.pair(0, 1).path == "NV16" and topology.pair(0, 4).path == "SYS"
    assert topology.gpu(0).cpu_affinity == "0-3,8"
    health = health_from_nvml(record)
    assert [gpu.lost for gpu in health] == [False, False, True, True, False]
    assert health[0].clock_reasons_active == ["gpu_idle", "sw_power_cap"]
    facts = parse_nvml_json(record)
    assert facts.lost_gpus == [2, 3] and facts.reset_required_gpus == []
    assert facts.gpus[0].brand == "Tesla"
