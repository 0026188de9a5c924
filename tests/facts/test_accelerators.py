"""The vendor-neutral accelerator list: what the NVIDIA driver reports, plus GPUs only the PCI bus shows.

Inputs are SYNTHETIC model values (GpuInfo, PciDevice) built here."""

from __future__ import annotations

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.accelerators import Vendor, nvidia_accelerators
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.model import GpuInfo, PciDevice


def test_driver_gpus_first_then_gpus_the_driver_does_not_answer_for() -> None:
    gpus = [GpuInfo(index=0, name="NVIDIA A100-SXM4-80GB", bus_id="0000:07:00.0", memory_total_mib=81920)]
    bus = [
        PciDevice(address="0000:07:00.0", vendor_id="10de", class_code="0302"),
        PciDevice(address="0000:0F:00.0", vendor_id="10de", class_code="0302", description="GA100 [A100 SXM4 80GB]"),
    ]
    found = nvidia_accelerators(gpus, bus)
    assert [(a.bus_id, a.driver_sees, a.source) for a in found] == [
        ("0000:07:00.0", True, "driver"),
        ("0000:0F:00.0", False, "pci"),
    ]
    assert found[0].vendor is Vendor.NVIDIA and found[0].nvidia is gpus[0] and found[0].memory_total_mib == 81920
    assert found[1].name == "GA100 [A100 SXM4 80GB]" and found[1].nvidia is None


def test_no_driver_loaded_still_lists_the_gpus_on_the_bus() -> None:
    bus = [PciDevice(address="0000:01:00.0", vendor_id="10de", class_code="0300")]
    (only,) = nvidia_accelerators([], bus)
    assert not only.driver_sees and only.index is None


def test_a_pasted_table_without_bus_ids_is_not_doubled_by_the_bus() -> None:
    gpus = [GpuInfo(index=0, name="NVIDIA GeForce RTX 4090")]
    bus = [PciDevice(address="0000:01:00.0", vendor_id="10de", class_code="0300")]
    assert [a.source for a in nvidia_accelerators(gpus, bus)] == ["driver"]


def test_facts_expose_the_accelerators() -> None:
    evidence = Evidence()
    evidence.add(
        EvidenceItem(
            "pci-devices.json",
            "json",
            text='{"readable": true, "devices": [{"address": "0000:01:00.0", "vendor": "0x10de", '
            '"device": "0x2204", "class": "0x030000", "driver": null}]}',
        )
    )
    (gpu,) = Facts(evidence).accelerators
    assert gpu.vendor is Vendor.NVIDIA and gpu.bus_id == "0000:01:00.0" and not gpu.driver_sees
