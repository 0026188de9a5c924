"""HEALTH checks (and the health parts of GPU002/GPU003) per scenario.

Real ``nvidia-smi -q -x`` captures (shared fixtures A) where the signal is in them; SYNTHETIC NVML records and
kernel-log lines, named so, for states no public capture shows (a lost GPU, a pending remap, Xid storms).
"""

from __future__ import annotations

from gpudoctor.results import Severity, Status
from gpudoctor_checks import gpus, health
from tests.helpers.fixtures import fixture_text
from tests.synthetic import nvml_records
from tests.synthetic.evidence import judge, make_evidence, messages

# SYNTHETIC kernel-log lines in the driver's own format (failure-modes #24 quotes the Xid 79 one verbatim).
SYNTHETIC_XID_LOG = (
    "[ 9120.114214] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception: ESR 0x405840\n"
    "[ 9130.004611] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception: ESR 0x405840\n"
    "[12001.551200] NVRM: Xid (PCI:0000:5e:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit "
    "error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
    "[13007.000120] NVRM: Xid (PCI:0000:86:00): 79, pid=1911, name=python3, GPU has fallen off the bus.\n"
)


# --- HEALTH001: lost GPUs ----------------------------------------------------------------------------------------------


def test_lost_gpu_from_nvml_is_a_problem_with_the_reboot_fix():
    result = judge(health.gpu_answers, make_evidence(nvml_json=nvml_records.lost_gpu()))
    assert result.status is Status.PROBLEM
    [message] = messages(result, Severity.PROBLEM)
    assert message.startswith("GPU 1 is lost") and "GPU_IS_LOST" in message
    assert result.findings[0].fix.commands[0] == "sudo reboot"


def test_gpu_fallen_off_the_bus_in_the_kernel_log_is_a_problem_even_when_nvml_answers():
    evidence = make_evidence(nvml_json=nvml_records.pcie_quad(), dmesg_nvidia_txt=SYNTHETIC_XID_LOG)
    result = judge(health.gpu_answers, evidence)
    assert result.status is Status.PROBLEM
    assert "fallen off the bus (0000:86:00)" in result.summary


def test_healthy_real_capture_answers():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"))
    result = judge(health.gpu_answers, evidence)
    assert result.status is Status.OK and result.summary == "8 GPUs answer"


# --- HEALTH002: persistence ---------------------------------------------------------------------------------------------


def test_persistence_off_on_real_datacenter_gpus_is_a_warning_with_the_daemon_fix():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"))
    result = judge(health.persistence, evidence)
    assert result.status is Status.WARNING
    assert result.summary.startswith("persistence mode off on 8 datacenter GPUs")
    assert result.findings[0].fix.commands[0] == "sudo systemctl enable --now nvidia-persistenced"


def test_persistence_off_on_a_geforce_laptop_is_fine():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/netdata-rtx3060-laptop-515.65.01-v11.txt"))
    result = judge(health.persistence, evidence)
    assert result.status is Status.OK and "not a datacenter GPU" in result.summary


# --- HEALTH003/004/005: memory and InfoROM ----------------------------------------------------------------------------


def test_a100_with_an_uncorrectable_error_and_a_pending_remap():
    """SYNTHETIC NVML record: 1 volatile uncorrectable ECC error, its row remap pending."""
    evidence = make_evidence(nvml_json=nvml_records.a100_pending_row_remap())
    ecc = judge(health.ecc, evidence)
    assert ecc.status is Status.PROBLEM
    assert "1 uncorrectable ECC error since the driver loaded" in ecc.summary
    memory = judge(health.memory_repairs, evidence)
    assert memory.status is Status.PROBLEM
    assert any("row remap is pending" in m for m in messages(memory, Severity.PROBLEM))
    assert "sudo nvidia-smi -r -i 0" in memory.findings[0].fix.commands


def test_v100_past_the_retired_page_limit_needs_an_rma_and_its_inforom_is_corrupt():
    """SYNTHETIC NVML record: 68 + 2 retired pages (DCGM's limit is 63), 1 pending, InfoROM corrupted."""
    evidence = make_evidence(nvml_json=nvml_records.v100_retired_pages())
    memory = judge(health.memory_repairs, evidence)
    assert memory.status is Status.PROBLEM
    problems = messages(memory, Severity.PROBLEM)
    assert any("70 retired pages, at or past the limit of 63" in m for m in problems)
    assert any("page retirement pending" in m for m in problems)
    rma = next(f for f in memory.findings if "limit of 63" in f.message)
    assert "RMA" in rma.fix.summary
    inforom = judge(health.inforom, evidence)
    assert inforom.status is Status.PROBLEM and "NVML_ERROR_CORRUPTED_INFOROM" in messages(inforom)[0]


def test_real_captures_with_ecc_on_and_no_errors_are_ok():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/telegraf-a10g-515.105.01-v11.txt"))
    assert judge(health.ecc, evidence).status is Status.OK
    assert judge(health.memory_repairs, evidence).status is Status.OK


def test_geforce_without_ecc_reporting_is_not_applicable():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/telegraf-rtx3090-525.147.05-v12.txt"))
    assert judge(health.ecc, evidence).status is Status.NOT_APPLICABLE


# --- HEALTH006: clocks and temperature -------------------------------------------------------------------------------


def test_hardware_thermal_slowdown_is_a_warning_and_the_power_cap_is_information():
    """SYNTHETIC NVML record: clock reasons sw_power_cap | hw_thermal_slowdown."""
    result = judge(health.clocks, make_evidence(nvml_json=nvml_records.a100_pending_row_remap()))
    assert result.status is Status.WARNING
    assert "hardware thermal slowdown" in result.summary
    assert any("software power cap" in m for m in messages(result, Severity.INFO))


def test_temperature_near_the_slowdown_threshold_warns():
    """SYNTHETIC NVML record: 84 °C against a slowdown threshold of 87 °C (gpudoctor's margin is 5 °C)."""
    record = nvml_records.pcie_quad()
    record["devices"][2]["health"]["temperature"] = {"current": 84, "slowdown": 87, "shutdown": 92}
    result = judge(health.clocks, make_evidence(nvml_json=record))
    assert result.status is Status.WARNING
    assert "84 °C, within 3 °C of its slowdown threshold (87 °C)" in result.summary


def test_idle_real_captures_are_not_held_back():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"))
    assert judge(health.clocks, evidence).status is Status.OK


# --- HEALTH007: Xid by meaning ---------------------------------------------------------------------------------------


def test_xid_events_are_grouped_and_named_by_meaning():
    result = judge(health.xid_events, make_evidence(dmesg_nvidia_txt=SYNTHETIC_XID_LOG))
    assert result.status is Status.PROBLEM
    by_code = {row["code"]: row for row in result.data["by_code"]}
    assert by_code[13]["count"] == 2 and by_code[48]["pci"] == "0000:5e:00" and 79 in by_code
    severities = {f.message.split(": ")[0]: f.severity for f in result.findings}
    assert severities == {
        "Xid 13 on 0000:3b:00 ×2": Severity.INFO,  # the application's fault
        "Xid 48 on 0000:5e:00": Severity.PROBLEM,
        "Xid 79 on 0000:86:00": Severity.PROBLEM,
    }
    fallen = next(f for f in result.findings if f.message.startswith("Xid 79"))
    assert fallen.message == "Xid 79 on 0000:86:00: GPU has fallen off the bus" and "sudo reboot" in fallen.fix.commands
    dbe = next(f for f in result.findings if f.message.startswith("Xid 48"))
    assert "sudo nvidia-smi --gpu-reset -i 0000:5e:00.0" in dbe.fix.commands  # the GPU filled into the command


def test_unknown_xid_code_is_a_warning_pointing_at_the_catalogue():
    log = "[ 1.0] NVRM: Xid (PCI:0000:01:00): 9999, something new\n"  # SYNTHETIC
    result = judge(health.xid_events, make_evidence(dmesg_nvidia_txt=log))
    assert result.status is Status.WARNING
    assert "not in the knowledge base" in result.summary
    assert result.findings[0].fix.url == "https://docs.nvidia.com/deploy/xid-errors/"


def test_clean_kernel_log_is_ok():
    result = judge(health.xid_events, make_evidence(dmesg_nvidia_txt="[ 2.1] nvidia: loading out-of-tree module\n"))
    assert result.status is Status.OK


# --- GPU002 / GPU003: a held exclusive GPU, MIG without instances ------------------------------------------------------


def test_exclusive_gpu_already_held_is_a_problem():
    """SYNTHETIC NVML record: GPU 0 Exclusive_Process with 2 CUDA processes on it."""
    record = nvml_records.pcie_quad()
    record["devices"][0]["compute_mode"] = "Exclusive_Process"
    record["devices"][0]["health"]["compute_processes"] = 2
    record["devices"][1]["compute_mode"] = "Exclusive_Process"
    result = judge(gpus.compute_mode, make_evidence(nvml_json=record))
    assert result.status is Status.PROBLEM
    problems, warnings = messages(result, Severity.PROBLEM), messages(result, Severity.WARNING)
    assert len(problems) == 1 and problems[0].startswith(
        "GPU 0 is in Exclusive_Process mode and already held by 2 CUDA process(es)"
    )
    assert len(warnings) == 1 and warnings[0].startswith("GPU 1 is in Exclusive_Process mode")


def test_mig_enabled_without_instances_is_a_problem():
    """SYNTHETIC NVML record: an A100 with MIG on and no GPU instance created."""
    record = nvml_records.a100_pending_row_remap()
    record["devices"][0]["mig_mode"] = {"current": 1, "pending": 1}
    record["devices"][0]["health"]["mig_instances"] = 0
    result = judge(gpus.mig_mode, make_evidence(nvml_json=record))
    assert result.status is Status.PROBLEM
    assert "MIG is enabled but no MIG instance exists" in messages(result)[0]
    assert "sudo nvidia-smi mig -i 0 -lgip" in result.findings[0].fix.commands


def test_real_mig_capture_with_instances_is_not_a_problem():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/netdata-a100-sxm4-40gb-mig-enabled-510.47.03-v11.txt"))
    result = judge(gpus.mig_mode, evidence)
    assert result.status is Status.OK and "MIG enabled on 1 of 1" in result.summary
