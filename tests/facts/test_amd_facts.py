"""AMD facts merged from every source (amd-smi, rocm-smi, rocminfo, KFD, the PCI bus) and the accelerators they
make: real captures from the shared fixtures G-amd where they exist, SYNTHETIC evidence (named so) elsewhere."""

from __future__ import annotations

import json
import pathlib
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.scan_amd import scan_kfd_topology
from gpudoctor.facts.accelerators import Vendor, describe_accelerators
from gpudoctor.facts.amd import amd_accelerators, amd_facts
from gpudoctor.facts.facts import Facts
from tests.helpers.fixtures import fixture_text, real_fixtures_dir
from tests.helpers.strategies import json_like

MI300X_A = "G-amd/gls-rocm-smi-a-4x-mi300x-sriov-driver-6.7.0.txt"
MI300X_ROCMINFO = "G-amd/gls-rocminfo-4x-mi300x-gfx942.txt"


def facts_of(*items: EvidenceItem) -> Facts:
    evidence = Evidence()
    for item in items:
        evidence.add(item)
    return Facts(evidence)


def command(name: str, fixture: str) -> EvidenceItem:
    return EvidenceItem(name=name, kind="command", text=fixture_text(fixture))


def sysfs(*devices: Mapping[str, object]) -> EvidenceItem:
    """SYNTHETIC pci-devices.json in the shape the sysfs scan writes."""
    return EvidenceItem(name="pci-devices.json", kind="json", text=json.dumps({"readable": True, "devices": devices}))


def test_rocm_smi_and_rocminfo_of_one_machine_join_on_the_bus() -> None:
    facts = facts_of(command("rocm-smi.txt", MI300X_A), command("rocminfo.txt", MI300X_ROCMINFO))
    found = amd_facts(facts)
    assert len(found.gpus) == 4
    first = found.gpus[0]
    assert first.sources == ("rocm-smi", "rocminfo") and first.index == 0 and first.bus_id == "0000:26:00.0"
    assert first.gfx == "gfx942:sramecc+:xnack-" and first.compute_units == 304 and first.kfd_node == 2
    assert first.name == "AMD Instinct MI300X OAM"  # rocm-smi before rocminfo
    assert found.driver.version == "6.7.0" and found.driver.inbox is False and found.driver.loaded is True
    assert found.tools == ("rocm-smi", "rocminfo") and found.tool_errors == {}
    assert describe_accelerators(amd_accelerators(facts)) == "4 × AMD Instinct MI300X OAM (gfx942)"


def test_concise_table_without_bus_ids_pairs_with_the_bus_in_order() -> None:
    # The real concise table; the bus is SYNTHETIC (four MI300X functions, bound to amdgpu).
    bus = sysfs(
        *(
            {
                "address": f"0000:{b}:00.0",
                "vendor": "0x1002",
                "device": "0x74a1",
                "class": "0x120000",
                "driver": "amdgpu",
            }
            for b in ("26", "46", "65", "85")
        )
    )
    facts = facts_of(command("rocm-smi.txt", "G-amd/gls-rocm-smi-concise-4x-mi300x-sriov.txt"), bus)
    gpus = amd_facts(facts).gpus
    assert [(g.index, g.bus_id, g.sources) for g in gpus] == [
        (i, f"0000:{b}:00.0", ("rocm-smi", "pci")) for i, b in enumerate(("26", "46", "65", "85"))
    ]
    assert all(a.driver_sees and a.vendor is Vendor.AMD for a in amd_accelerators(facts))


def test_gpus_only_on_the_bus_are_listed_but_not_seen() -> None:
    facts = facts_of(command("lspci.txt", "G-amd/lspci-grep-mi-2x-mi210-aldebaran-display-controller-rocm-6281.txt"))
    accelerators = amd_accelerators(facts)
    assert [(a.bus_id, a.driver_sees, a.source) for a in accelerators] == [
        ("0000:83:00.0", False, "pci"),
        ("0000:c3:00.0", False, "pci"),
    ]
    assert accelerators[0].name is not None and "Instinct MI210" in accelerators[0].name


def test_an_igpu_on_the_bus_is_recognised_and_its_audio_function_is_not_a_gpu() -> None:
    lspci = "G-amd/lspci-nn-rembrandt-radeon-680m-igpu-plus-hdmi-audio-function-isc30-pr119.txt"
    (gpu,) = amd_facts(facts_of(command("lspci.txt", lspci))).gpus
    assert gpu.device_id == "1681" and gpu.integrated is True and gpu.bus_id == "0000:74:00.0"


def test_radeon_780m_from_amd_smi_static_and_list() -> None:
    facts = facts_of(
        command("amd-smi.txt", "G-amd/amd-smi-static-text-radeon-780m-phoenix3-apu-excerpt-pve-mods-348.txt"),
        command("amd-smi-list.txt", "G-amd/amd-smi-list-radeon-780m-phoenix3-apu-pve-mods-348.txt"),
    )
    found = amd_facts(facts)
    (gpu,) = found.gpus
    assert gpu.name == "Phoenix3" and gpu.integrated is True and gpu.unique_id is not None
    assert found.driver.version == "7.0.14-17-pve" and found.driver.inbox is True
    assert found.tools == ("amd-smi",)


def test_amd_smi_proc_version_as_driver_version_is_an_inbox_driver() -> None:
    facts = facts_of(command("amd-smi.txt", "G-amd/dme-amd-smi-static-json-1x-mi210-gfx90a-gpu_data-wrapper.txt"))
    driver = amd_facts(facts).driver
    assert driver.inbox is True and driver.version == "6.14.0-24-generic"


def test_amd_smi_list_and_a_nic() -> None:
    facts = facts_of(
        command("amd-smi-list.txt", "G-amd/amd-smi-list-1x-mi210-plus-ai-nic-dev-build-rocm-systems-pr3654.txt")
    )
    (gpu,) = amd_facts(facts).gpus
    assert gpu.bus_id == "0000:23:00.0"


def test_tool_not_installed_and_tool_failing_synthetic() -> None:
    # SYNTHETIC evidence items, in the shape the hardened runner records them.
    facts = facts_of(
        EvidenceItem(name="amd-smi.txt", kind="command", text=None, error="command not found: amd-smi"),
        command(
            "rocminfo.txt", "G-amd/err-rocminfo-dev-kfd-permission-denied-rocm-terminal-container-rocm-docker-116.txt"
        ),
    )
    found = amd_facts(facts)
    assert found.gpus == () and found.tools == ()
    assert found.tools_absent == ("amd-smi",)
    assert found.tool_errors == {"rocminfo": "Unable to open /dev/kfd read-write: Permission denied"}


def test_rocm_version_stated_by_amd_smi_synthetic() -> None:
    # SYNTHETIC: an amd-smi header line naming the ROCm version above the real MI350X text.
    text = "AMDSMI Tool: 24.6.2+2b02a07 | AMDSMI Library version: 24.6.0.0 | ROCm version: 6.2.1\n" + fixture_text(
        "G-amd/amd-smi-static-text-mi350x-gfx950-redacted-serials-excerpt-rocm-systems-pr2987.txt"
    )
    found = amd_facts(facts_of(EvidenceItem(name="amd-smi.txt", kind="command", text=text)))
    assert found.rocm.version == "6.2.1" and found.rocm.source == "amd-smi"
    assert found.driver.version == "6.18.3" and found.driver.inbox is False


def test_kfd_nodes_fill_in_and_join_on_the_bus_synthetic() -> None:
    # SYNTHETIC kfd-topology.json record in the scan's shape (a CPU node and one MI300X at 0000:26:00.0, location_id
    # 0x2600), read by the real KFD parser: hive id, render minor and VRAM come from it.
    gpu = "\n".join(
        [
            "simd_count 1216",
            "simd_per_cu 4",
            "gfx_target_version 90402",
            "device_id 29857",
            "domain 0",
            "location_id 9728",
            "drm_render_minor 128",
            "hive_id 4660",
            f"local_mem_size {192 * 1024**3}",
        ]
    )
    record = {"readable": True, "nodes": {"0": {"properties": "cpu_cores_count 64\nsimd_count 0"},
                                          "1": {"properties": gpu, "gpu_id": "12345"}}}  # fmt: skip
    facts = facts_of(command("rocm-smi.txt", MI300X_A), EvidenceItem("kfd-topology.json", "json", json.dumps(record)))
    found = amd_facts(facts)
    first = found.gpus[0]
    assert first.sources == ("rocm-smi", "kfd") and first.render_minor == 128 and first.hive_id == "4660"
    assert first.vram_mib == 192 * 1024 and found.kfd is not None and len(found.kfd.gpu_nodes) == 1


def test_no_amd_anything() -> None:
    found = amd_facts(facts_of())
    assert found.gpus == () and not found.present and found.tools == () and found.driver.loaded is None
    assert amd_accelerators(facts_of()) == ()


def kfd_item(tmp_path: pathlib.Path, tree: str) -> EvidenceItem:
    """The real KFD tree scanned as /sys/class/kfd/kfd/topology of a temporary root, as its evidence item."""
    source = real_fixtures_dir() / tree
    if not source.is_dir():
        pytest.skip(f"real fixture {tree} not available")
    parent = tmp_path / "sys/class/kfd/kfd"
    parent.mkdir(parents=True)
    (parent / "topology").symlink_to(source)
    return EvidenceItem(name="kfd-topology.json", kind="json", text=json.dumps(scan_kfd_topology(str(tmp_path))))


def test_kfd_alone_names_eight_mi210_in_two_hives(tmp_path: pathlib.Path) -> None:
    facts = facts_of(kfd_item(tmp_path, "G-amd/kfd-topology-8x-mi210-gfx90a-2-xgmi-hives-properties-only"))
    found = amd_facts(facts)
    assert len(found.gpus) == 8 and {g.gfx_target for g in found.gpus} == {"gfx90a"}
    assert {g.device_id for g in found.gpus} == {"740f"} and {g.compute_units for g in found.gpus} == {104}
    assert [g.render_minor for g in found.gpus] == list(range(128, 136))
    assert len({g.hive_id for g in found.gpus}) == 2 and all(g.sources == ("kfd",) for g in found.gpus)
    assert found.driver.kfd_present is True
    assert all(a.driver_sees for a in amd_accelerators(facts))


def test_kfd_cpx_partitions_are_one_gpu_each(tmp_path: pathlib.Path) -> None:
    facts = facts_of(kfd_item(tmp_path, "G-amd/kfd-topology-8x-mi308x-gfx942-cpx-32-partitions"))
    gpus = amd_facts(facts).gpus
    # mem_banks/0 as captured: 51539607552 B (48 GiB) for 24 partitions, 51522830336 B (16 MiB less) for 8.
    assert len(gpus) == 32 and sorted(Counter(g.vram_mib for g in gpus).items()) == [(49136, 8), (49152, 24)]
    assert len({g.bus_id.rsplit(".", 1)[0] for g in gpus if g.bus_id}) == 8


def test_rocminfo_without_the_pci_domain_joins_the_bus_of_another_domain() -> None:
    # The real rocminfo (BDFIDs carry no domain); the bus in PCI domain 0001 is SYNTHETIC.
    bus = sysfs(
        *(
            {
                "address": f"0001:{b}:00.0",
                "vendor": "0x1002",
                "device": "0x74a1",
                "class": "0x120000",
                "driver": "amdgpu",
            }
            for b in ("26", "46", "65", "85")
        )
    )
    gpus = amd_facts(facts_of(command("rocminfo.txt", MI300X_ROCMINFO), bus)).gpus
    assert [(g.bus_id, g.sources) for g in gpus] == [
        (f"0001:{b}:00.0", ("rocminfo", "pci")) for b in ("26", "46", "65", "85")
    ]


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200), st.text(max_size=200), json_like(), json_like())
def test_merge_never_raises_on_garbage(smi: str, rsmi: str, info: str, kfd: object, pci: object) -> None:
    facts = facts_of(
        EvidenceItem(name="amd-smi.txt", kind="command", text=smi),
        EvidenceItem(name="rocm-smi.txt", kind="command", text=rsmi),
        EvidenceItem(name="rocminfo.txt", kind="command", text=info),
        EvidenceItem(name="kfd-topology.json", kind="json", text=json.dumps(kfd)),
        EvidenceItem(name="pci-devices.json", kind="json", text=json.dumps(pci)),
    )
    assert len(amd_accelerators(facts)) == len(facts.amd.gpus)
