"""`gpudoctor topo --format json` states the machine as `check` does: OS, kernel and container filled from the
facts, live and from a snapshot, not left null (issue 17)."""

from __future__ import annotations

import json
import os

from tests.e2e.test_cli import as_json, gpudoctor


def test_live_topo_json_names_os_kernel_and_container():
    machine = as_json(gpudoctor("topo", "--format", "json"))["machine"]
    check = as_json(gpudoctor("check", "--select", "ENV004", "--format", "json"))["machine"]
    if os.path.exists("/etc/os-release") or os.path.exists("/usr/lib/os-release"):
        assert machine["os"] and machine["os"] == check["os"]
    assert machine["kernel"] and machine["kernel"] == check["kernel"]
    assert machine["container"] == check["container"]
    assert machine["wsl"] == check["wsl"]


def test_topo_from_a_snapshot_names_them_too(tmp_path):
    snapshot = tmp_path / "snapshot"
    collected = gpudoctor("collect", "-o", str(snapshot), "--frameworks", "none", timeout=300)
    assert collected.returncode == 0, collected.stderr
    machine = as_json(gpudoctor("topo", "--from", str(snapshot), "--format", "json"))["machine"]
    manifest = json.loads((snapshot / "manifest.json").read_text())
    assert machine["kernel"], manifest
    assert (
        machine["kernel"]
        == as_json(gpudoctor("check", "--from", str(snapshot), "--format", "json"))["machine"]["kernel"]
    )
