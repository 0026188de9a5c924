"""The NVML probe's topology and health fields against the REAL libnvidia-ml of this machine.

Here the NVIDIA user space is installed but no kernel module is loaded, so NVML's init fails with
NVML_ERROR_DRIVER_NOT_LOADED exactly as on a machine whose driver isn't loaded.  The record must say
so and hold none of the per-GPU fields; every parser of it must answer "nothing known".  Where
libnvidia-ml is missing (LIBRARY_NOT_FOUND) or a driver is loaded, these tests skip.
"""

from __future__ import annotations

import json
import os

import pytest

from gpudoctor.evidence.collect import collect_source
from gpudoctor.evidence.model import Evidence
from gpudoctor.evidence.sources import source_by_name
from gpudoctor.facts.gpu_health import gpu_health, health_from_nvml
from gpudoctor.facts.nvml import parse_nvml_json
from gpudoctor.facts.nvml_topology import NvmlTopology, nvml_topology

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def live_record() -> dict:
    if os.path.exists("/proc/driver/nvidia/version"):
        pytest.skip("an NVIDIA kernel module is loaded here: this test is for a machine without one")
    item = collect_source(source_by_name("nvml.json"), timeout=30)
    record = item.json()
    assert isinstance(record, dict), f"the probe printed no JSON: {item.text!r} {item.stderr!r}"
    if not record.get("bindings", {}).get("importable"):
        pytest.skip("nvidia-ml-py is not importable here")
    if record["init"].get("error", {}).get("name") == "NVML_ERROR_LIBRARY_NOT_FOUND":
        pytest.skip("libnvidia-ml is not installed (scripts/install-nvidia-userspace.sh)")
    return record


def test_real_probe_says_the_driver_is_not_loaded(live_record):
    assert live_record["init"]["ok"] is False
    assert live_record["init"]["error"]["code"] == 9
    assert live_record["init"]["error"]["name"] == "NVML_ERROR_DRIVER_NOT_LOADED"
    # nothing was asked of a GPU, so no per-GPU or per-pair field is there at all
    for field in ("devices", "pairs", "device_count", "driver_version"):
        assert field not in live_record


def test_real_probe_record_gives_no_topology_and_no_health(live_record):
    assert nvml_topology(live_record) == NvmlTopology()
    assert health_from_nvml(live_record) == []
    facts = parse_nvml_json(live_record)
    assert facts.init_ok is False and facts.gpus == [] and facts.lost_gpus == []


def test_real_evidence_of_this_machine_gives_no_gpu_health(live_record):
    """The real probe, nvidia-smi and nvidia-smi -q -x, all failing the way they fail without a driver."""
    evidence = Evidence(origin={"kind": "live"})
    for name in ("nvml.json", "nvidia-smi.txt", "nvidia-smi-q-x.xml"):
        evidence.add(collect_source(source_by_name(name), timeout=30))
    assert json.loads(evidence.text("nvml.json"))["init"]["ok"] is False
    assert gpu_health(evidence) == []
