"""PLAT001/PLAT002 (where the machine runs, the GPUs its instance type should have), PCI001's deference to them,
the smoke checks judged against the instance type, and the report's machine line.

Every record here is SYNTHETIC: platform.json in the shape of ``gpudoctor.evidence.scan_platform`` with the
DMI an AWS Nitro instance shows (sys_vendor "Amazon EC2", product_name the instance type), NVML records built
with the synthetic builders of ``tests/synthetic/nvml_records.py``, hand-written GPU bus ids.
What the types should have is read from the knowledge base itself (``gpudoctor.kb.cloud_instances``), never
restated here; only SYNTHETIC_ROW, a hand-written row, feeds the pure choice of the link to judge against.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.api import Severity
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.platform_model import CloudInstance, NotebookPlatform, PlatformFacts
from gpudoctor.kb.cloud_instances import (
    InstanceType,
    expected_host_link,
    gpu_type_suggestions,
    instance_type,
    instance_types,
)
from gpudoctor.render.common import machine_summary_parts, platform_text
from gpudoctor.results import Status
from gpudoctor_checks import _smoke, _smoke_instance, smoke_acceleration, smoke_bandwidth
from gpudoctor_checks import pci as pci_checks
from gpudoctor_checks import platform as plat
from tests.helpers.strategies import json_like
from tests.synthetic import nvml_records
from tests.synthetic import smoke_json as smoke
from tests.synthetic.evidence import NO_GPU_SCAN, judge, make_evidence, messages, pci_scan

# SYNTHETIC PCI addresses for eight A100s (hand-written; the tests only need eight distinct functions).
P4D_BUSES = ("10:1c", "10:1d", "20:1c", "20:1d", "90:1c", "90:1d", "a0:1c", "a0:1d")
A100_40GB = "NVIDIA A100-SXM4-40GB"
# SYNTHETIC kernel log line in the driver's Xid format (gpudoctor.facts.kernel_log): GPU 0000:a0:1d fell off.
SYNTHETIC_XID_79 = "[ 4242.123456] NVRM: Xid (PCI:0000:a0:1d): 79, pid=0, name=python, GPU has fallen off the bus.\n"


def synthetic_platform(product: str, vendor: str = "Amazon EC2") -> dict[str, Any]:
    """SYNTHETIC platform.json of an AWS Nitro instance: DMI names the instance type."""
    return {
        "dmi": {"sys_vendor": vendor, "product_name": product, "bios_vendor": vendor},
        "cloud_init": None,
        "exists": [],
        "files": {},
        "dirs": {},
    }


def synthetic_nvml(count: int, name: str = A100_40GB, buses: tuple[str, ...] = P4D_BUSES) -> dict[str, Any]:
    """SYNTHETIC nvml.json with the first ``count`` GPUs of ``buses``."""
    devices = [
        nvml_records._device(
            i,
            name,
            0,
            pci_bus_id=f"00000000:{bus.upper()}.0",
            compute_capability=[8, 0],
            memory_total_bytes=42949672960,
        )
        for i, bus in enumerate(buses[:count])
    ]
    return nvml_records._record(devices, [])


def synthetic_bus(count: int = 8) -> dict[str, Any]:
    """SYNTHETIC sysfs scan with ``count`` A100 SXM4 40GB functions (device 0x20b0) held by nvidia."""
    return pci_scan(*((f"0000:{bus}.0", "0x20b0", "nvidia") for bus in P4D_BUSES[:count]))


def driver_name(model: str) -> str:
    """The name the driver reports for a kb model ("A10G" or "NVIDIA A10G" -> "NVIDIA A10G")."""
    return model if model.startswith("NVIDIA") else f"NVIDIA {model}"


def p4d(**sources: Any):
    return make_evidence(platform_json=synthetic_platform("p4d.24xlarge"), **sources)


def _row(provider: str, name: str):
    row = instance_type(provider, name)
    assert row is not None, f"the knowledge base should list {provider} {name}"
    return row


# ------------------------------------------------------------------------------------------------ PLAT001


def test_synthetic_plat001_names_the_provider_and_type_and_where_it_was_read() -> None:
    result = judge(plat.where_it_runs, p4d(nvml_json=synthetic_nvml(8)))
    assert result.status is Status.OK
    assert result.summary == "AWS p4d.24xlarge (read from DMI)"
    assert result.data["provider"] == "aws" and result.data["instance_type"] == "p4d.24xlarge"
    assert result.data["type_source"]
    assert result.data["notebook"] is None and result.data["image"] is None


def test_synthetic_plat001_is_not_applicable_on_a_machine_nothing_recognises() -> None:
    evidence = make_evidence(platform_json=synthetic_platform("X11DPG-QT", vendor="Supermicro"))
    result = judge(plat.where_it_runs, evidence)
    assert result.status is Status.NOT_APPLICABLE
    assert "Supermicro X11DPG-QT" in result.summary
    assert "not readable" in judge(plat.where_it_runs, make_evidence()).summary


# ------------------------------------------------------------------------------------------------ PLAT002


def test_synthetic_p4d_with_all_eight_gpus_is_ok() -> None:
    result = judge(plat.instance_gpus, p4d(nvml_json=synthetic_nvml(8), pci_devices_json=synthetic_bus(8)))
    assert result.status is Status.OK, result.summary
    assert result.data["visible"] == 8 and result.data["missing"] == []
    assert _row("aws", "p4d.24xlarge").expected in result.summary


def test_synthetic_seven_in_nvml_eight_on_the_bus_names_the_missing_function() -> None:
    result = judge(plat.instance_gpus, p4d(nvml_json=synthetic_nvml(7), pci_devices_json=synthetic_bus(8)))
    assert result.status is Status.PROBLEM
    assert "7 are visible" in result.summary
    assert "0000:a0:1d.0" in result.summary and "not seen by the driver" in result.summary
    assert result.data["missing"] == ["0000:a0:1d.0"]
    fix = result.findings[0].fix
    assert fix is not None and "stop and start the instance" in fix.summary
    assert "reinstall" not in fix.summary.lower() and "driver" in fix.summary  # "a fault of the host, not the driver"
    assert fix.url and fix.url.startswith("https://docs.aws.amazon.com/")


def test_synthetic_seven_and_seven_with_an_xid_79_names_that_address() -> None:
    evidence = p4d(nvml_json=synthetic_nvml(7), pci_devices_json=synthetic_bus(7), dmesg_nvidia_txt=SYNTHETIC_XID_79)
    result = judge(plat.instance_gpus, evidence)
    assert result.status is Status.PROBLEM
    assert "0000:a0:1d.0 is missing (Xid 79: fallen off the bus)" in result.summary
    assert result.findings[0].cause == "gpu-fallen-off-bus"


def test_synthetic_seven_and_nothing_naming_the_eighth_counts_it() -> None:
    result = judge(plat.instance_gpus, p4d(nvml_json=synthetic_nvml(7)))
    assert result.status is Status.PROBLEM
    assert "1 GPU is missing" in result.summary and result.data["missing"] == []


def test_synthetic_a_container_given_one_gpu_is_a_warning_not_a_host_fault() -> None:
    evidence = p4d(
        nvml_json=synthetic_nvml(1),
        pci_devices_json=synthetic_bus(8),
        container_json={"dockerenv": True, "containerenv": False, "cgroup": ""},
    )
    assert Facts(evidence).container.in_container
    result = judge(plat.instance_gpus, evidence)
    assert result.status is Status.WARNING
    assert "--gpus all" in (result.findings[0].fix.summary if result.findings[0].fix else "")


def test_synthetic_a_different_model_than_the_type_has_is_a_warning() -> None:
    result = judge(plat.instance_gpus, p4d(nvml_json=synthetic_nvml(8, name="NVIDIA H100 80GB HBM3")))
    assert result.status is Status.WARNING
    assert "NVIDIA H100 80GB HBM3" in result.summary and "snapshot mixes two machines" in result.summary


def test_synthetic_more_gpus_than_the_type_has_is_a_warning() -> None:
    one = next(r for r in instance_types("aws") if r.gpu_vendor == "nvidia" and r.gpu_count == 1)
    evidence = make_evidence(
        platform_json=synthetic_platform(one.name), nvml_json=synthetic_nvml(2, name=driver_name(one.gpu_model))
    )
    result = judge(plat.instance_gpus, evidence)
    assert result.status is Status.WARNING and "2 show" in result.summary


def test_synthetic_g5_with_no_gpu_is_a_problem_and_pci001_defers() -> None:
    evidence = make_evidence(platform_json=synthetic_platform("g5.xlarge"), pci_devices_json=NO_GPU_SCAN)
    result = judge(plat.instance_gpus, evidence)
    assert result.status is Status.PROBLEM
    assert "0 are visible" in result.summary and _row("aws", "g5.xlarge").expected in result.summary
    pci = judge(pci_checks.gpu_on_bus, evidence)
    assert pci.status is Status.NOT_APPLICABLE and "PLAT002" in pci.summary


def test_synthetic_unknown_type_is_not_applicable() -> None:
    result = judge(plat.instance_gpus, make_evidence(platform_json=synthetic_platform("r7iz.large")))
    assert result.status is Status.NOT_APPLICABLE
    outside = judge(plat.instance_gpus, make_evidence(platform_json=synthetic_platform("X11", vendor="Supermicro")))
    assert outside.status is Status.NOT_APPLICABLE and "not a cloud instance" in outside.summary


def synthetic_azure_platform(size: str) -> dict[str, Any]:
    """SYNTHETIC platform.json of an Azure VM: DMI says only "Virtual Machine"; cloud-init names the size."""
    record = synthetic_platform("Virtual Machine", vendor="Microsoft Corporation")
    record["dmi"]["chassis_asset_tag"] = "7783-7084-3265-9085-8269-3286-77"
    record["cloud_init"] = {"cloud_name": "azure", "platform": "azure", "instance_type": size}
    return record


def test_synthetic_a_fractional_vgpu_type_is_judged_by_its_one_device_not_by_count() -> None:
    share = next((r for r in instance_types("azure") if 0 < r.gpu_count < 1), None)
    if share is None:
        pytest.skip("the knowledge base lists no fractional GPU type")
    platform = synthetic_azure_platform(share.name)
    vgpu = synthetic_nvml(1, name=f"{driver_name(share.gpu_model)}-4Q", buses=("00:02",))  # a vGPU profile name
    result = judge(plat.instance_gpus, make_evidence(platform_json=platform, nvml_json=vgpu))
    assert result.status is Status.OK, result.summary
    assert "its share of one GPU is visible" in result.summary
    none = judge(plat.instance_gpus, make_evidence(platform_json=platform, pci_devices_json=NO_GPU_SCAN))
    assert none.status is Status.PROBLEM and "0 are visible" in none.summary


# ------------------------------------------------------------------------------------------------ PCI001


def test_synthetic_m5_without_gpus_gets_a_warning_naming_gpu_types() -> None:
    evidence = make_evidence(platform_json=synthetic_platform("m5.large"), pci_devices_json=NO_GPU_SCAN)
    result = judge(pci_checks.gpu_on_bus, evidence)
    assert result.status is Status.WARNING
    assert "AWS m5.large, an instance type without GPUs" in result.summary
    fix = result.findings[0].fix
    assert fix is not None and fix.summary.startswith("AWS m5.large has no GPU: pick a GPU type")
    suggestions = gpu_type_suggestions("aws")
    assert suggestions and suggestions[0] in fix.summary
    assert judge(plat.instance_gpus, evidence).status is Status.NOT_APPLICABLE


def test_synthetic_a_type_of_a_family_that_takes_attached_gpus_gets_the_choices_without_a_verdict() -> None:
    platform = synthetic_platform("Google Compute Engine", vendor="Google")
    platform["cloud_init"] = {"cloud_name": "gce", "instance_type": "n1-standard-4"}
    result = judge(pci_checks.gpu_on_bus, make_evidence(platform_json=platform, pci_devices_json=NO_GPU_SCAN))
    assert result.status is Status.WARNING and "(Google Cloud n1-standard-4)" in result.summary
    fix = result.findings[0].fix
    assert fix is not None and "attach GPUs where Google Cloud allows it" in fix.summary
    assert "has no GPU" not in fix.summary


def test_synthetic_pci001_defers_to_the_notebook_platform() -> None:
    # The notebook is another module's fact (facts.notebook); here it is set directly on the typed facts.
    facts = Facts(make_evidence(pci_devices_json=NO_GPU_SCAN))
    facts.__dict__["platform"] = PlatformFacts(collected=True, notebook=NotebookPlatform("colab", "Google Colab"))
    from gpudoctor.api import CheckContext

    outcome = pci_checks.gpu_on_bus.func(facts, CheckContext())
    assert not outcome.applicable and "PLAT010" in outcome.summary


# ------------------------------------------------------------------------------------------------ smoke


def _one_gpu_type_with_host_link():
    for row in instance_types("aws"):
        link = expected_host_link("aws", row.name)
        if row.gpu_vendor == "nvidia" and row.gpu_count == 1 and link and "Gen" in link:
            return row, link
    pytest.skip("the knowledge base names no host link for a one-GPU AWS type")


def test_synthetic_bandwidth_is_judged_against_the_types_link_when_the_vm_reports_an_odd_one() -> None:
    row, host_link = _one_gpu_type_with_host_link()
    name = driver_name(row.gpu_model)
    nvml = synthetic_nvml(1, name=name, buses=("00:1e",))
    # The VM reports a Gen1 x16 link (max Gen1): below what the type is built with.
    nvml["devices"][0]["pcie"] = {"gen_current": 1, "gen_max": 1, "width_current": 16, "width_max": 16}
    record = smoke.single_gpu_bandwidth(name, "0000:00:1e.0", h2d=20.0, d2h=20.0)
    evidence = make_evidence(
        platform_json=synthetic_platform(row.name), nvml_json=nvml, smoke_json=copy.deepcopy(record)
    )
    result = judge(smoke_bandwidth.bandwidth_vs_link, evidence)
    shown = " ".join(messages(result))
    assert f"judged against the AWS {row.name}'s {host_link}" in shown
    assert "a VM often reports an odd link" in shown


# A SYNTHETIC kb row with a host link (the committed table may name none): the choice of link is a pure function.
SYNTHETIC_ROW = InstanceType("aws", "g5.xlarge", "nvidia", "NVIDIA A10G", 1, 24.0, host_link="PCIe Gen4 x16")
SYNTHETIC_CLOUD = CloudInstance("aws", "AWS", "g5.xlarge", "dmi")


def test_synthetic_a_link_read_lower_than_the_types_is_replaced_by_the_types() -> None:
    typed = _smoke_instance.instance_link(SYNTHETIC_ROW, SYNTHETIC_CLOUD)
    assert typed is not None and typed[0] == "the AWS g5.xlarge's PCIe Gen4 x16"
    odd = _smoke_instance.choose_link(_smoke.Link(1, 16, 1, 16, "nvidia-smi", numa_node=1), typed)
    assert odd is not None and (odd.gen_now, odd.width_now, odd.source, odd.numa_node) == (4, 16, "instance type", 1)
    assert odd.note and "a VM often reports an odd link" in odd.note
    unknown = _smoke_instance.choose_link(None, typed)
    assert unknown is not None and unknown.note and "not in the evidence" in unknown.note
    full = _smoke.Link(4, 16, 4, 16, "nvidia-smi")
    assert _smoke_instance.choose_link(full, typed) is full
    trained_down = _smoke.Link(4, 8, 4, 16, "nvidia-smi")  # the GPU can do the type's link: judged as read
    assert _smoke_instance.choose_link(trained_down, typed) is trained_down


@given(host_link=st.one_of(st.none(), st.text(max_size=40)))
def test_instance_link_takes_any_host_link_text(host_link: str | None) -> None:
    row = InstanceType("aws", "x", "nvidia", "NVIDIA A10G", 1, host_link=host_link)
    typed = _smoke_instance.instance_link(row, SYNTHETIC_CLOUD)
    assert typed is None or typed[1].rate_now


def test_synthetic_smoke_notes_a_gpu_that_is_not_the_types_model() -> None:
    evidence = p4d(nvml_json=nvml_records.healthy_8x_h100_sxm(), smoke_json=smoke.SYNTHETIC_SMOKE_H100_HEALTHY)
    result = judge(smoke_acceleration.acceleration_real, evidence)
    notes = messages(result, Severity.INFO)
    assert any(_row("aws", "p4d.24xlarge").gpu_model in m and "not the" in m for m in notes), notes


# ------------------------------------------------------------------------------------------------ machine line


def test_synthetic_machine_line_says_what_the_type_should_have() -> None:
    from gpudoctor.commands.report import machine_summary

    facts = Facts(make_evidence(platform_json=synthetic_platform("g5.xlarge"), pci_devices_json=NO_GPU_SCAN))
    summary = machine_summary(facts, None)
    record = summary["platform"]
    assert record is not None and record["provider_name"] == "AWS" and record["instance_type"] == "g5.xlarge"
    expected = _row("aws", "g5.xlarge").expected
    assert record["expected"] == expected
    assert machine_summary_parts(summary)[0] == f"AWS g5.xlarge: {expected} expected"
    assert machine_summary(Facts(make_evidence()), None)["platform"] is None


@given(record=json_like())
def test_platform_text_takes_any_record(record: object) -> None:
    text = platform_text({"platform": record})  # type: ignore[typeddict-item]
    assert text is None or isinstance(text, str)


@given(name=st.one_of(st.none(), st.text(max_size=40)), model=st.text(max_size=40))
def test_model_matches_takes_any_text(name: str | None, model: str) -> None:
    assert plat.model_matches(name, model) in (True, False, None)


@pytest.mark.parametrize(
    ("name", "model", "same"),
    [
        ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", True),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM4-40GB", False),
        ("NVIDIA A10G", "A10G", True),
        ("NVIDIA A100-SXM4-40GB", "A10G", False),
        ("NVIDIA A10-4Q", "A10", True),  # a vGPU profile of an A10
        ("Tesla T4", "T4", True),
        ("NVIDIA H100 80GB HBM3", "A100-SXM4-40GB", False),
    ],
)
def test_synthetic_model_names_match_as_the_driver_spells_them(name: str, model: str, same: bool) -> None:
    assert plat.model_matches(name, model) is same
