"""Property tests: the JSON-record parsers, the sniffer, snapshot reading and every check take garbage.

"unknown" is a value, never an exception: whatever a snapshot holds, the
facts parse and the checks run without crashing.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.api import CheckContext
from gpudoctor.errors import UsageError
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.snapshot import read_snapshot
from gpudoctor.evidence.sniff import guess_source_name
from gpudoctor.evidence.sources import SOURCES
from gpudoctor.facts.container import ContainerFacts, parse_container
from gpudoctor.facts.device_nodes import DeviceNodeFacts, parse_device_nodes
from gpudoctor.facts.environment import EnvFacts, VisibleDevices, parse_env_json, resolve_visible_devices
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.nvml import NvmlFacts, cuda_version_from_int, parse_nvml_json
from gpudoctor.registry import load_registry
from gpudoctor.results import Status
from gpudoctor.runner import run_check

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=25,
)

# Shapes close to the real records, with any value in any slot: reaches deeper than random JSON.
nvml_like = st.fixed_dictionaries(
    {
        "init": st.fixed_dictionaries({"ok": json_values, "error": json_values}),
        "driver_version": json_values,
        "cuda_driver_version": json_values,
        "device_count": json_values,
        "devices": st.lists(
            st.dictionaries(
                st.sampled_from(
                    [
                        "index",
                        "name",
                        "uuid",
                        "pci_bus_id",
                        "memory_total_bytes",
                        "compute_capability",
                        "compute_mode",
                        "persistence_mode",
                        "mig_mode",
                        "pcie",
                        "errors",
                    ]
                ),
                json_values,
                max_size=8,
            ),
            max_size=3,
        ),
    }
)


@given(json_values)
def test_nvml_parser_takes_any_json(value):
    assert isinstance(parse_nvml_json(value), NvmlFacts)


@given(nvml_like)
def test_nvml_parser_takes_nvml_shaped_garbage(value):
    facts = parse_nvml_json(value)
    assert isinstance(facts, NvmlFacts)
    assert all(g.compute_capability is None or isinstance(g.compute_capability, str) for g in facts.gpus)


@given(json_values)
def test_cuda_version_from_int(value):
    result = cuda_version_from_int(value)
    assert result is None or result.count(".") == 1


def test_cuda_version_from_int_known_values():
    assert cuda_version_from_int(12020) == "12.2" and cuda_version_from_int(13010) == "13.1"
    assert cuda_version_from_int(True) is None and cuda_version_from_int(-5) is None


@given(json_values)
def test_env_parser_takes_any_json(value):
    assert isinstance(parse_env_json(value), EnvFacts)


@given(json_values)
def test_device_node_parser_takes_any_json(value):
    assert isinstance(parse_device_nodes(value), DeviceNodeFacts)


@given(json_values, st.one_of(st.none(), st.text()))
def test_container_parser_takes_any_json(value, proc_version):
    assert isinstance(parse_container(value, proc_version), ContainerFacts)


@given(st.one_of(st.none(), st.text()), st.integers(0, 16), st.lists(st.text(max_size=40), max_size=4))
def test_visible_devices_takes_any_value(raw, count, uuids):
    resolved = resolve_visible_devices(raw, count, uuids)
    assert isinstance(resolved, VisibleDevices)
    assert len(resolved.visible) <= len(resolved.entries)


@given(st.text())
def test_sniffer_takes_any_text(text):
    assert guess_source_name(text) in (None, *(s.name for s in SOURCES))


@settings(max_examples=60)
@given(st.binary(max_size=2000))
def test_single_file_snapshot_is_evidence_or_one_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("snap") / "pasted.txt"
    path.write_bytes(data)
    try:
        evidence = read_snapshot(str(path))
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(evidence.items) == 1


@settings(max_examples=60)
@given(st.binary(max_size=3000))
def test_archive_named_snapshot_is_evidence_or_one_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("snap") / "snap.tar.gz"
    path.write_bytes(b"\x1f\x8b" + data)
    try:
        read_snapshot(str(path))
    except UsageError as exc:
        assert "\n" not in str(exc)


sources_with_garbage = st.dictionaries(
    st.sampled_from([s.name for s in SOURCES]),
    st.one_of(st.text(max_size=300), json_values.map(json.dumps)),
    max_size=len(SOURCES),
)


@settings(max_examples=40)
@given(sources_with_garbage)
def test_no_check_crashes_on_any_evidence(sources):
    evidence = Evidence(origin={"kind": "snapshot"})
    kinds = {s.name: s.kind for s in SOURCES}
    for name, text in sources.items():
        evidence.add(EvidenceItem(name=name, kind=kinds[name], text=text))
    facts = Facts(evidence)
    options = CheckContext(
        {
            "require_gpu": True,
            "min_gpus": 2,
            "min_compute_capability": "8.0",
            "min_gpu_memory": 16.0,
            "min_driver": "535",
            "cuda": "12.4",
        }
    )
    for spec in load_registry().checks:
        result = run_check(spec, facts, options)
        assert result.status is not Status.CRASHED, (spec.code, result.traceback)
