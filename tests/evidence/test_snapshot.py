"""Snapshot writing and reading: redaction, round trips, and never clobbering a user's file."""

from __future__ import annotations

import json
import tarfile

import pytest

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.snapshot import SnapshotError, read_snapshot, write_snapshot
from tests.helpers.fixtures import real_fixtures_dir

UUID = "GPU-d6889ff6-2523-9142-ca3c-1ca3f396a625"


def _xml_evidence() -> Evidence:
    path = real_fixtures_dir() / "A/telegraf-rtx3060-570.124.04-v12.txt"
    if not path.exists():
        pytest.skip("real fixture not available")
    evidence = Evidence(origin={"kind": "live"})
    evidence.add(
        EvidenceItem(
            name="nvidia-smi-q-x.xml",
            kind="command",
            text=path.read_text(),
            argv=["nvidia-smi", "-q", "-x"],
            exit_code=0,
            duration_s=0.2,
        )
    )
    evidence.add(
        EvidenceItem(
            name="nvidia-smi-topo-m.txt",
            kind="command",
            argv=["nvidia-smi", "topo", "-m"],
            error="nvidia-smi did not answer within 1 s and was stopped",
            timed_out=True,
            exit_code=-9,
            duration_s=1.0,
        )
    )
    return evidence


@pytest.mark.parametrize("name", ["snap", "snap.tar.gz"])
def test_uuids_are_redacted_unless_asked(tmp_path, name):
    evidence = _xml_evidence()
    redacted = write_snapshot(evidence, str(tmp_path / f"r-{name}"))
    kept = write_snapshot(evidence, str(tmp_path / f"k-{name}"), redacted=False)
    assert UUID not in read_snapshot(redacted).text("nvidia-smi-q-x.xml")
    assert "GPU-REDACTED" in read_snapshot(redacted).text("nvidia-smi-q-x.xml")
    assert UUID in read_snapshot(kept).text("nvidia-smi-q-x.xml")


def test_round_trip_keeps_the_manifest_facts(tmp_path):
    path = write_snapshot(_xml_evidence(), str(tmp_path / "snap.tar.gz"))
    assert tarfile.is_tarfile(path)
    back = read_snapshot(path)
    assert back.origin["kind"] == "snapshot"
    hung = back.get("nvidia-smi-topo-m.txt")
    assert hung.timed_out and hung.text is None and hung.exit_code == -9
    assert hung.argv == ["nvidia-smi", "topo", "-m"]
    assert back.get("nvidia-smi-q-x.xml").exit_code == 0


def test_existing_paths_are_never_replaced_without_force(tmp_path):
    target = tmp_path / "snap"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(SnapshotError):
        write_snapshot(_xml_evidence(), str(target))
    assert (target / "keep.txt").read_text() == "mine"


def test_corrupt_manifest_is_a_clear_error(tmp_path):
    (tmp_path / "nvidia-smi.txt").write_text("No devices were found\n")
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(SnapshotError, match=r"manifest\.json"):
        read_snapshot(str(tmp_path))


def test_manifest_marks_sources_that_produced_nothing(tmp_path):
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "schema": 1,
                "sources": {
                    "nvcc-version.txt": {
                        "kind": "command",
                        "argv": ["nvcc", "--version"],
                        "exit_code": None,
                        "error": "command not found: nvcc",
                        "present": False,
                    }
                },
            }
        )
    )
    (tmp_path / "os-release").write_text('ID=debian\nVERSION_ID="12"\n')
    evidence = read_snapshot(str(tmp_path))
    assert evidence.get("nvcc-version.txt").error == "command not found: nvcc"
    assert evidence.collected("nvcc-version.txt") and not evidence.collected("nvidia-smi.txt")
