"""EvidenceKey: the typed names of the evidence sources, one per source of the catalogue."""

from __future__ import annotations

import json

import pytest

from gpudoctor.evidence.keys import EvidenceKey, framework_key
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.sources import SOURCES


def test_every_catalogued_source_has_exactly_one_key() -> None:
    assert {source.name for source in SOURCES} == {key.value for key in EvidenceKey}


def test_a_key_reads_as_its_snapshot_file_name_everywhere_a_string_is_expected() -> None:
    key = EvidenceKey.NVIDIA_SMI
    assert str(key) == f"{key}" == "nvidia-smi.txt"
    assert f"{key:>16}" == "  nvidia-smi.txt"
    assert ", ".join((key, EvidenceKey.NVML)) == "nvidia-smi.txt, nvml.json"
    assert json.dumps({"evidence": [key]}) == '{"evidence": ["nvidia-smi.txt"]}'
    evidence = Evidence()
    evidence.add(EvidenceItem("nvidia-smi.txt", "command", text="table"))
    assert evidence.items[key].text == "table"  # hashes as the file name: it keys the evidence dict


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax", "cupy"])
def test_framework_key(framework: str) -> None:
    assert framework_key(framework).value == f"framework-{framework}.json"


def test_framework_key_refuses_an_unknown_framework() -> None:
    with pytest.raises(ValueError):
        framework_key("mxnet")
