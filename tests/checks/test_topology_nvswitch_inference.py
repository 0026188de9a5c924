"""Topology claims no further than the evidence (issue 17): NVSwitches implied by the matrix, link state unknown.

Matrices are REAL (shared fixtures B/, read in place); the H100 VM is the REAL `gpudoctor collect` snapshot in
tests/recorded/h100-80gb-hbm3-vm.  The sysfs scans (GPUs on the bus, no NVSwitch bridge listed, as in a VM or a
container) and the systemctl answers are SYNTHETIC, named so.
"""

from __future__ import annotations

import pathlib

import pytest

from gpudoctor.api import CheckContext
from gpudoctor.evidence.snapshot import read_snapshot
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Severity, Status
from gpudoctor.runner import run_check
from gpudoctor_checks import topology
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import judge, make_evidence, pci_scan

H100_NV18 = "B/stas00-mleng-8x-h100-nv18-ht-affinity.txt"
H200_NV18 = "B/nchc-nano4-8x-h200-nv18-10nics-slurm-cgroup-cpu-affinity-empty.txt"
A100_NV12 = "B/xuesongtap-8x-a100-nv12-17nics-mlx5-bond-full.txt"
H100_NV18_TABS = "B/nccl-1453-h100-nv18-9nics-tabs-excerpt.txt"
A100_NV12_GARBLED = "B/nccl-820-a100-nv12-mlx5x10-garbled-columns-excerpt.txt"
DGX1_MESH = "B/nccl-tests-29-dgx1-v100-nv1-nv2-hybrid-cube-mesh-excerpt.txt"
H100_VM = pathlib.Path(__file__).resolve().parents[1] / "recorded" / "h100-80gb-hbm3-vm"

SYNTHETIC_FM_STOPPED = "LoadState=loaded\nActiveState=inactive\nSubState=dead\n"
SYNTHETIC_FM_RUNNING = "LoadState=loaded\nActiveState=active\nSubState=running\n"


def synthetic_scan_without_switches(device_id: str) -> dict:
    """SYNTHETIC sysfs record: eight GPUs on the bus and no NVSwitch bridge (a VM or container shows none)."""
    return pci_scan(
        *[(f"0000:{bus:02x}:00.0", device_id, "nvidia") for bus in (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)]
    )


def _evidence(matrix: str, device_id: str = "0x2330", fabric: str | None = None):
    sources = {
        "nvidia_smi_topo_m_txt": fixture_text(matrix),
        "pci_devices_json": synthetic_scan_without_switches(device_id),
    }
    if fabric is not None:
        sources["fabricmanager_txt"] = fabric
    return make_evidence(**sources)


@pytest.mark.parametrize(
    "matrix, links",
    [
        (H100_NV18, "NV18"),
        (H100_NV18_TABS, "NV18"),
        (H200_NV18, "NV18"),
        (A100_NV12, "NV12"),
        (A100_NV12_GARBLED, "NV12"),
    ],
)
def test_nv_links_at_switch_counts_imply_nvswitches_though_the_bus_lists_none(matrix, links):
    result = judge(topology.fabric_manager, _evidence(matrix))
    assert "no NVSwitch" not in result.summary
    assert f"NVSwitches implied by {links} between every GPU pair" in result.summary
    # Nothing says whether the fabric manager runs: the check says so rather than judging.
    assert result.status is Status.NOT_APPLICABLE
    assert "whether the fabric manager runs, as it must for them to route, is not known" in result.summary
    assert result.data["nvswitches_implied_by"]


def test_a_stopped_fabric_manager_on_an_implied_switch_fabric_is_a_problem():
    result = judge(topology.fabric_manager, _evidence(A100_NV12, "0x20b2", SYNTHETIC_FM_STOPPED))
    assert result.status is Status.PROBLEM
    finding = result.findings[0]
    assert finding.cause == "fabric-manager" and "nvidia-fabricmanager is inactive" in finding.message
    assert finding.fix is not None and "sudo systemctl enable --now nvidia-fabricmanager" in finding.fix.commands


def test_a_running_fabric_manager_on_an_implied_switch_fabric_is_ok():
    result = judge(topology.fabric_manager, _evidence(H100_NV18, fabric=SYNTHETIC_FM_RUNNING))
    assert result.status is Status.OK and "fabric manager active" in result.summary


def test_a_hybrid_cube_mesh_implies_no_switch():
    result = judge(topology.fabric_manager, _evidence(DGX1_MESH, "0x1db1"))
    assert result.status is Status.NOT_APPLICABLE
    assert "no GPU pair is linked as through one" in result.summary


def _recorded_h100_vm(check):
    if not H100_VM.is_dir():
        pytest.skip("tests/recorded/h100-80gb-hbm3-vm not present")
    result = run_check(check, Facts(read_snapshot(str(H100_VM))), CheckContext())
    assert result.status is not Status.CRASHED, result.traceback
    return result


def test_a_single_h100_in_a_vm_does_not_call_its_unreported_nvlinks_ok():
    result = _recorded_h100_vm(topology.nvlinks)
    assert result.status is Status.NOT_APPLICABLE, result.summary
    assert "not known" in result.summary and "18 NVLinks" in result.summary
    assert not [f for f in result.findings if f.severity is not Severity.INFO]


def test_a_single_h100_in_a_vm_does_not_claim_the_host_has_no_switch():
    result = _recorded_h100_vm(topology.fabric_manager)
    assert result.status is Status.NOT_APPLICABLE
    assert "no NVSwitch on this machine" not in result.summary and "host" in result.summary
