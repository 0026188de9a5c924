"""TOPO checks per scenario: real captured outputs (shared fixtures B/D, tests/captured) where they exist,
SYNTHETIC NVML / sysfs records (named so) where no real capture of gpudoctor's own probes exists."""

from __future__ import annotations

import copy
import pathlib

import pytest

from gpudoctor.results import Severity, Status
from gpudoctor_checks import topology
from tests.helpers.fixtures import fixture_text
from tests.synthetic import nvml_records
from tests.synthetic.evidence import judge, make_evidence, messages, pci_scan

CAPTURED = pathlib.Path(__file__).resolve().parent.parent / "captured" / "nvlink-status"


# --- TOPO001: PCIe links -----------------------------------------------------------------------------------------


def test_pasted_lspci_block_with_a_downgraded_link_is_a_warning_with_its_cost():
    evidence = make_evidence(
        lspci_txt=fixture_text("D/lspci-lnkcap-lnksta-rtx4090-riser-downgraded-2.5GTs-jan-183.txt")
    )
    result = judge(topology.pcie_links, evidence)
    assert result.status is Status.WARNING
    [message] = messages(result, Severity.WARNING)
    # 2.5 GT/s is Gen1: 4 GB/s per direction at x16 instead of Gen4's 31.5, and the idle caveat is said.
    assert "Gen1 x16" in message and "Gen4 x16" in message and "4 GB/s instead of 31.5 GB/s" in message
    assert "idle" in message and "gpudoctor smoke" in message
    fix = result.findings[0].fix
    assert "<bus id>" in fix.commands[0]  # the paste names no device: never a made-up address


def test_xml_link_at_half_width_warns_even_when_idle():
    # datakit GTX 1050: max width 16x, current 8x, gpu_idle active.
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-gtx1050-515.65.01-nodtd.txt"))
    result = judge(topology.pcie_links, evidence)
    assert result.status is Status.WARNING
    assert any("x8 of x16" in m for m in messages(result, Severity.WARNING))
    assert result.data["0"]["width_current"] == 8 and result.data["0"]["idle"] is True


def test_full_width_links_at_idle_are_ok_and_say_why_the_generation_is_low():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"))
    result = judge(topology.pcie_links, evidence)
    assert result.status is Status.OK, result.summary
    assert "8 GPU links at full width" in result.summary


def test_sysfs_alone_judges_the_link_without_any_driver():
    """SYNTHETIC sysfs record: no driver loaded, the GPU's link trained to x4 of x16."""
    scan = pci_scan(("0000:3b:00.0", "0x2684", None))
    scan["devices"][0].update(
        current_link_speed="16.0 GT/s PCIe",
        max_link_speed="16.0 GT/s PCIe",
        current_link_width="4",
        max_link_width="16",
    )
    result = judge(topology.pcie_links, make_evidence(pci_devices_json=scan))
    assert result.status is Status.WARNING
    assert any("x4 of x16" in m and "7.875 GB/s instead of 31.5 GB/s" in m for m in messages(result))


def test_nvml_link_trained_down_under_load_is_a_warning_from_nvml():
    """SYNTHETIC NVML record: GPU 1 of the PCIe quad runs Gen4 x8 of Gen4 x16, 211 replays."""
    result = judge(topology.pcie_links, make_evidence(nvml_json=nvml_records.pcie_quad()))
    assert result.status is Status.WARNING
    assert result.data["1"]["source"] == "nvml" and result.data["1"]["replay_count"] == 211
    assert [m for m in messages(result, Severity.WARNING) if m.startswith("GPU 1:")]
    assert not [m for m in messages(result, Severity.WARNING) if m.startswith("GPU 0:")]


# --- TOPO002: GPU pairs -----------------------------------------------------------------------------------------


def test_two_socket_pcie_machine_warns_about_the_sys_pairs_and_offers_one_socket_per_job():
    evidence = make_evidence(nvidia_smi_topo_m_txt=fixture_text("B/nccl-1439-8gpu-pcie-pix-phb-sys-2socket.txt"))
    result = judge(topology.gpu_pairs, evidence)
    assert result.status is Status.WARNING
    assert "16× SYS" in result.summary and "4× PIX" in result.summary
    [finding] = result.findings
    assert finding.message.startswith("16 GPU pairs cross the CPU sockets")
    assert finding.fix.commands == (
        "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py  # NUMA node 0",
        "CUDA_VISIBLE_DEVICES=4,5,6,7 python train.py  # NUMA node 1",
    )


@pytest.mark.parametrize(
    "name", ["B/xuesongtap-8x-a100-nv12-17nics-mlx5-bond-full.txt", "B/stas00-mleng-8x-h100-nv18-ht-affinity.txt"]
)
def test_all_nvlink_machines_are_ok(name):
    result = judge(topology.gpu_pairs, make_evidence(nvidia_smi_topo_m_txt=fixture_text(name)))
    assert result.status is Status.OK and result.summary.startswith("GPU pairs: 28× NV1")


def test_geforce_pair_without_p2p_is_information_not_a_fault(tmp_path):
    evidence = make_evidence(
        nvidia_smi_topo_m_txt=fixture_text("B/club3090-1229-2x-rtx5090-phb-full.txt"),
        nvidia_smi_topo_p2p_r_txt=fixture_text("B/club3090-1229-2x-rtx5090-topo-p2p-rw-GNS.txt"),
    )
    result = judge(topology.gpu_pairs, evidence)
    assert result.status is Status.OK
    [note] = messages(result, Severity.INFO)
    assert "GPU0↔GPU1" in note and "GPU does not support it" in note
    assert result.data["pairs"] == [
        {
            "a": 0,
            "b": 1,
            "path": "PHB",
            "path_source": "nvidia-smi topo -m",
            "p2p_read": "GNS",
            "p2p_source": "nvidia-smi topo -p2p r",
        }
    ]


def test_platform_refusing_peer_access_is_a_warning_with_the_acs_fix():
    """SYNTHETIC NVML record: PCIe quad whose socket-crossing pairs NVML reports as P2P NOT_SUPPORTED."""
    result = judge(topology.gpu_pairs, make_evidence(nvml_json=nvml_records.pcie_quad()))
    assert result.status is Status.WARNING
    warning = next(f for f in result.findings if "peer-to-peer" in f.message)
    assert "NS: not supported" in warning.message and "ACS" in warning.fix.summary
    paths = {(p["a"], p["b"]): p["path"] for p in result.data["pairs"]}
    assert paths[(0, 1)] == "PIX" and paths[(2, 3)] == "PXB" and paths[(0, 2)] == "SYS"


def test_windows_topo_error_is_not_applicable_not_a_crash():
    evidence = make_evidence(
        nvidia_smi_topo_m_txt=fixture_text("B/gpuexporter-windows-rtx2080s-591.86-topo-m-error.txt")
    )
    assert judge(topology.gpu_pairs, evidence).status is Status.NOT_APPLICABLE


# --- TOPO003: NVLinks ----------------------------------------------------------------------------------------------


def captured(name: str) -> str:
    return (CAPTURED / name).read_text()


def test_v100_with_two_nvlinks_down_is_a_problem_naming_the_links():
    evidence = make_evidence(
        nvidia_smi_nvlink_s_txt=captured("azhpc-diagnostics-73-v100-sxm2-links-3-5-inactive-excerpt.txt")
    )
    result = judge(topology.nvlinks, evidence)
    assert result.status is Status.PROBLEM
    [message] = messages(result, Severity.PROBLEM)
    assert message == "GPU 3: NVLink(s) 3, 5 down — 4 of 6 active"
    assert result.data["3"]["expected"] == 6  # V100 SXM2: 300 GB/s at 50 GB/s a link
    assert "sudo nvidia-smi -r -i 3" in result.findings[0].fix.commands


def test_h100_with_all_18_links_up_is_ok():
    evidence = make_evidence(nvidia_smi_nvlink_s_txt=captured("gpuexporter-h100-80gb-hbm3-590.48.01-18-links-up.txt"))
    result = judge(topology.nvlinks, evidence)
    assert result.status is Status.OK and result.summary == "18 of 18 NVLinks active on 1 GPU"


def test_card_without_nvlink_is_not_applicable():
    evidence = make_evidence(nvidia_smi_nvlink_s_txt=captured("gpuexporter-l40s-595.80-no-nvlink.txt"))
    assert judge(topology.nvlinks, evidence).status is Status.NOT_APPLICABLE


def test_hgx_with_links_down_from_nvml_is_a_problem():
    """SYNTHETIC NVML record: HGX H100, GPU 3 has links 7 and 12 down."""
    result = judge(topology.nvlinks, make_evidence(nvml_json=nvml_records.h100_with_one_link_down()))
    assert result.status is Status.PROBLEM
    assert messages(result, Severity.PROBLEM) == ["GPU 3: NVLink(s) 7, 12 down — 16 of 18 active"]
    assert result.summary == "142 of 144 NVLinks active on 8 GPUs"


def test_sxm_gpus_reaching_each_other_over_pcie_only_is_a_problem():
    """SYNTHETIC NVML record: the HGX H100 with no NVLink state and PCIe-only common ancestors."""
    record = nvml_records.healthy_8x_h100_sxm()
    for device in record["devices"]:
        device["nvlink"] = None
    result = judge(topology.nvlinks, make_evidence(nvml_json=record))
    assert result.status is Status.PROBLEM
    [message] = messages(result, Severity.PROBLEM)
    assert "built with NVLink but reach each other over PCIe only" in message


def test_topo_matrix_with_nvlink_paths_but_no_link_state_is_ok():
    evidence = make_evidence(
        nvidia_smi_topo_m_txt=fixture_text("B/nchc-nano4-8x-h200-nv18-10nics-slurm-cgroup-cpu-affinity-empty.txt")
    )
    result = judge(topology.nvlinks, evidence)
    assert result.status is Status.OK and "28 GPU pairs (NV18)" in result.summary


# --- TOPO004: fabric manager ---------------------------------------------------------------------------------------


def nvswitch_scan() -> dict:
    """SYNTHETIC sysfs record: four NVSwitch bridges (class 0680) beside the GPUs."""
    scan = pci_scan(*[(f"0000:{bus:02x}:00.0", "0x2330", "nvidia") for bus in nvml_records.H100_BUSES])
    for bus in nvml_records.NVSWITCH_BUSES:
        scan["devices"].append(
            {
                "address": f"0000:{bus:02x}:00.0",
                "vendor": "0x10de",
                "device": "0x22a3",
                "class": "0x068000",
                "driver": "nvidia",
            }
        )
    return scan


def test_nvswitch_system_without_fabric_manager_is_a_problem_with_the_matching_package():
    evidence = make_evidence(
        nvml_json=nvml_records.healthy_8x_h100_sxm(),
        pci_devices_json=nvswitch_scan(),
        fabricmanager_txt="LoadState=not-found\nActiveState=inactive\nSubState=dead\n",
        proc_driver_nvidia_version_txt="NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
        "550.54.15  Tue Mar  5 22:23:56 UTC 2024\n",
    )
    result = judge(topology.fabric_manager, evidence)
    assert result.status is Status.PROBLEM
    assert "4 NVSwitch(es) on the bus but nvidia-fabricmanager is not installed" in messages(result)
    assert result.findings[0].fix.commands[0].startswith("sudo apt-get install -y nvidia-fabricmanager-550=550.54.15-1")


def test_unfinished_fabric_registration_names_error_802():
    """SYNTHETIC NVML record: fabric state in progress on every GPU, the service active."""
    record = nvml_records.healthy_8x_h100_sxm()
    for device in record["devices"]:
        device["health"]["fabric"] = {"state": 2, "status": 0}
    evidence = make_evidence(
        nvml_json=record,
        pci_devices_json=nvswitch_scan(),
        fabricmanager_txt="LoadState=loaded\nActiveState=active\nSubState=running\n",
    )
    result = judge(topology.fabric_manager, evidence)
    assert result.status is Status.PROBLEM
    assert "Error 802" in result.summary and "in progress" in result.summary


def test_running_fabric_manager_with_completed_registration_is_ok():
    evidence = make_evidence(
        nvml_json=nvml_records.healthy_8x_h100_sxm(),
        pci_devices_json=nvswitch_scan(),
        fabricmanager_txt="LoadState=loaded\nActiveState=active\nSubState=running\n",
    )
    result = judge(topology.fabric_manager, evidence)
    assert result.status is Status.OK, result.summary


def test_no_nvswitch_is_not_applicable():
    evidence = make_evidence(nvml_json=nvml_records.pcie_quad())
    assert judge(topology.fabric_manager, evidence).status is Status.NOT_APPLICABLE


# --- TOPO005: CPU affinity -------------------------------------------------------------------------------------------


def test_slurm_job_whose_cpus_are_far_from_half_the_gpus_warns():
    evidence = make_evidence(
        nvidia_smi_topo_m_txt=fixture_text("B/nchc-nano4-8x-h200-nv18-10nics-slurm-cgroup-cpu-affinity-empty.txt")
    )
    result = judge(topology.cpu_affinity, evidence)
    assert result.status is Status.WARNING
    assert "GPU(s) 0, 1, 2, 3 (empty CPU Affinity)" in result.summary
    assert result.findings[0].fix.commands[0] == "numactl --cpunodebind=0 --membind=0 python train.py"


def test_windows_topo_with_every_affinity_empty_says_nothing_false():
    evidence = make_evidence(
        nvidia_smi_topo_m_txt=fixture_text("B/gpuexporter-windows-rtx2080s-610.62-empty-affinity.txt")
    )
    result = judge(topology.cpu_affinity, evidence)
    assert result.status is not Status.WARNING


def test_process_pinned_to_the_other_socket_warns():
    """SYNTHETIC: NVML places the 4 PCIe GPUs on two sockets; this process may only use socket 1's CPUs 56-111."""
    evidence = make_evidence(
        nvml_json=nvml_records.pcie_quad(),
        cpu_topology_json={
            "process_cpus": list(range(56, 112)),
            "cpu_count": 224,
            "numa_nodes": {"0": "0-55,112-167", "1": "56-111,168-223"},
        },
    )
    result = judge(topology.cpu_affinity, evidence)
    assert result.status is Status.WARNING
    assert "none of them near GPU(s) 0, 1 (NUMA node 0)" in result.summary


def test_unpinned_process_on_two_sockets_is_ok_with_a_binding_hint():
    evidence = make_evidence(
        nvml_json=nvml_records.pcie_quad(),
        cpu_topology_json={
            "process_cpus": list(range(224)),
            "cpu_count": 224,
            "numa_nodes": {"0": "0-55,112-167", "1": "56-111,168-223"},
        },
    )
    result = judge(topology.cpu_affinity, evidence)
    assert result.status is Status.OK and "0-223" in result.summary
    assert any("numactl" in m for m in messages(result, Severity.INFO))


def test_every_topo_check_survives_every_real_topology_fixture():
    from tests.helpers.fixtures import fixture_files

    files = fixture_files("B") + sorted(CAPTURED.glob("*.txt"))
    if not files:
        pytest.skip("no fixtures")
    for path in files:
        text = path.read_text(errors="replace")
        for evidence in (
            make_evidence(nvidia_smi_topo_m_txt=text),
            make_evidence(nvidia_smi_nvlink_s_txt=text),
            make_evidence(nvidia_smi_topo_p2p_r_txt=text),
        ):
            for spec in (
                topology.pcie_links,
                topology.gpu_pairs,
                topology.nvlinks,
                topology.fabric_manager,
                topology.cpu_affinity,
            ):
                judge(spec, copy.deepcopy(evidence))
