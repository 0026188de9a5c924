"""Integration tier: the real Debian nvidia-smi and libnvidia-ml, with no kernel module loaded.

This is exactly a machine whose driver isn't loaded, so the real tools fail the
way they fail for users.  `scripts/install-nvidia-userspace.sh` installs them;
where they are absent these tests skip.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from gpudoctor.evidence.collect import collect
from gpudoctor.evidence.model import Evidence
from gpudoctor.evidence.run_command import run_command
from gpudoctor.evidence.sources import source_by_name
from gpudoctor.facts.nvidia_smi_text import parse_nvidia_smi_text
from tests.synthetic.evidence import pci_scan

pytestmark = pytest.mark.integration

HAVE_SMI = shutil.which("nvidia-smi") is not None
HAVE_NVML = ctypes.util.find_library("nvidia-ml") is not None
DRIVER_LOADED = os.path.exists("/proc/driver/nvidia/version")

needs_unloaded_userspace = pytest.mark.skipif(
    not (HAVE_SMI and HAVE_NVML) or DRIVER_LOADED,
    reason="needs the real nvidia-smi and libnvidia-ml with no kernel module (scripts/install-nvidia-userspace.sh)",
)


def _libnvidia_ml_version() -> str:
    for directory in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64"):
        path = os.path.join(directory, "libnvidia-ml.so.1")
        if os.path.exists(path):
            return os.path.realpath(path).rsplit("libnvidia-ml.so.", 1)[1]
    pytest.skip("libnvidia-ml.so.1 not in a standard directory")


@needs_unloaded_userspace
def test_real_nvidia_smi_says_it_cannot_reach_the_driver():
    item = run_command("nvidia-smi.txt", ["nvidia-smi"], timeout=10)
    assert item.exit_code == 9
    report = parse_nvidia_smi_text(item.output)
    assert report.error is not None and report.error.kind == "couldnt_communicate"
    assert report.gpus == []


@needs_unloaded_userspace
def test_real_nvml_reports_driver_not_loaded():
    result = subprocess.run(
        [sys.executable, "-m", "gpudoctor.evidence.nvml_probe"], capture_output=True, text=True, timeout=30
    )
    record = json.loads(result.stdout)
    assert record["init"]["ok"] is False
    assert record["init"]["error"]["code"] == 9
    assert record["init"]["error"]["name"] == "NVML_ERROR_DRIVER_NOT_LOADED"


@needs_unloaded_userspace
def test_live_check_describes_userspace_without_kernel_module():
    result = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--format", "json"], capture_output=True, text=True, timeout=120
    )
    report = json.loads(result.stdout)
    by_code = {r["code"]: r for r in report["results"]}
    version = _libnvidia_ml_version()
    assert by_code["DRV004"]["status"] == "ok"
    assert by_code["DRV004"]["data"]["version"] == version
    assert "Driver Not Loaded" in by_code["NVML001"]["summary"]
    if not report["machine"]["gpus_on_bus"]:
        # This workplace: user space installed, no GPU, no module. Say exactly that, without alarm.
        assert by_code["DRV001"]["status"] == "not_applicable"
        assert "no NVIDIA GPU on the bus" in by_code["DRV001"]["summary"]
        assert version in by_code["DRV001"]["summary"]
        assert by_code["NVML001"]["status"] == "not_applicable"
        assert report["machine"]["driver_version"] == f"not loaded (user space {version} installed)"


@needs_unloaded_userspace
def test_gpus_on_the_bus_without_a_driver_is_a_problem_with_the_fix():
    """Real nvidia-smi, NVML and files from this machine; the PCI scan is SYNTHETIC (2 GPUs, no driver bound)."""
    live = collect(timeout=10)
    evidence = Evidence(items=dict(live.items), origin=live.origin)
    scan = source_by_name("pci-devices.json")
    evidence.items[scan.name].text = json.dumps(
        pci_scan(("0000:17:00.0", "0x2330", None), ("0000:65:00.0", "0x2330", None))
    )
    from gpudoctor.commands.report import build_report

    report, _ = build_report(evidence, {"require_gpu": True})
    by_code = {r.code: r for r in report.results}
    assert by_code["PCI001"].status.value == "ok" and "2 NVIDIA GPUs" in by_code["PCI001"].summary
    assert by_code["PCI002"].status.value == "problem"
    assert "no kernel driver bound" in by_code["PCI002"].findings[0].message
    # One root cause, one problem: the module not loaded is PCI002's finding; DRV001 and NVML001 say the same
    # cause, or what follows from it, and are folded under it (their fix kept).
    assert by_code["DRV001"].status.value == "consequence"
    assert by_code["DRV001"].findings[0].consequence_of == "PCI002"
    assert any("modprobe nvidia" in c for c in by_code["DRV001"].findings[0].fix.commands)
    assert by_code["NVML001"].status.value == "consequence"
    assert "kernel module is not loaded" in by_code["NVML001"].summary
    assert by_code["GATE001"].status.value == "problem"
    assert report.exit_code() == 1
