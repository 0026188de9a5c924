"""Every vendor's GPUs and TPUs on the PCI bus: real lspci captures, and a synthetic sysfs tree."""

from __future__ import annotations

import json
import pathlib

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.system_scan import scan_pci
from gpudoctor.facts.accelerators import Vendor, describe_accelerators
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.pci_accelerators import accelerator_functions, functions_of
from gpudoctor.kb.accelerator_pci import is_accelerator_function, tpu_generation
from tests.helpers.fixtures import fixture_text


def test_lspci_without_ids_two_mi210_display_controllers() -> None:
    """`lspci | grep MI` (no -nn): vendor and class come from lspci's own words."""
    text = fixture_text("G-amd/lspci-grep-mi-2x-mi210-aldebaran-display-controller-rocm-6281.txt")
    devices = accelerator_functions(None, text)
    assert [d.address for d in devices] == ["0000:83:00.0", "0000:c3:00.0"]
    assert all(d.vendor_id == "1002" and d.class_code == "0380" for d in devices)
    assert "Instinct MI210" in (devices[0].description or "")


def test_lspci_nn_navi31_is_an_amd_vga_controller() -> None:
    text = fixture_text("G-amd/lspci-nn-navi31-rx7900xtx-1002-744c-one-line-radeontop-pr159.txt")
    (device,) = accelerator_functions(None, text)
    assert (device.vendor_id, device.device_id, device.class_code) == ("1002", "744c", "0300")


def test_hdmi_audio_function_of_an_amd_igpu_is_not_a_gpu() -> None:
    text = fixture_text("G-amd/lspci-nn-rembrandt-radeon-680m-igpu-plus-hdmi-audio-function-isc30-pr119.txt")
    devices = accelerator_functions(None, text)
    assert [d.device_id for d in devices] == ["1681"]  # the 1640 audio function (class 0403) is left out


def test_intel_battlemage_from_lspci_vvv_excerpt() -> None:
    text = fixture_text("H-intel/lspci-s-vvv-arc-b580-battlemage-g21-excerpt-lact-890.txt")
    devices = functions_of(accelerator_functions(None, text), "intel")
    assert len(devices) == 1
    assert "Arc B580" in (devices[0].description or "")


def _sysfs_function(root: pathlib.Path, address: str, vendor: str, device: str, klass: str) -> None:
    base = root / "sys" / "bus" / "pci" / "devices" / address
    base.mkdir(parents=True)
    for name, value in (("vendor", vendor), ("device", device), ("class", klass)):
        (base / name).write_text(value + "\n")


def test_sysfs_scan_keeps_every_vendors_accelerators_and_nothing_else(tmp_path: pathlib.Path) -> None:
    """Synthetic sysfs tree: an MI210, an Arc A770, a TPU v4, Google's gVNIC, an Intel NIC and an AMD audio function."""
    _sysfs_function(tmp_path, "0000:83:00.0", "0x1002", "0x740f", "0x038000")
    _sysfs_function(tmp_path, "0000:83:00.1", "0x1002", "0xab28", "0x040300")
    _sysfs_function(tmp_path, "0000:03:00.0", "0x8086", "0x56a0", "0x030000")
    _sysfs_function(tmp_path, "0000:04:00.0", "0x8086", "0x1563", "0x020000")
    _sysfs_function(tmp_path, "0000:05:00.0", "0x1ae0", "0x005e", "0x120000")
    _sysfs_function(tmp_path, "0000:06:00.0", "0x1ae0", "0x0042", "0x020000")
    record = scan_pci(str(tmp_path))
    scanned = {d["address"] for d in record["devices"]}  # type: ignore[union-attr,index]
    assert scanned == {"0000:83:00.0", "0000:03:00.0", "0000:05:00.0", "0000:06:00.0"}
    evidence = Evidence()
    evidence.add(EvidenceItem(name=Ev.PCI_DEVICES.value, kind="json", text=json.dumps(record)))
    facts = Facts(evidence)
    found = {d.address: d for d in facts.pci_accelerators}
    assert set(found) == {"0000:83:00.0", "0000:03:00.0", "0000:05:00.0"}  # gVNIC is no TPU
    assert facts.pci_devices == []  # the NVIDIA view stays NVIDIA's
    vendors = sorted(a.vendor.value for a in facts.accelerators)
    assert vendors == ["amd", "google", "intel"]
    assert all(not a.driver_sees and a.source == "pci" for a in facts.accelerators)


def test_tpu_generation_and_accelerator_classes() -> None:
    assert tpu_generation("0x005E") == "v4"
    assert tpu_generation("0042") is None
    assert is_accelerator_function("1002", "740f", "1200")
    assert not is_accelerator_function("1002", "ab28", "0403")
    assert not is_accelerator_function("14e4", "1639", "0300")
    assert not is_accelerator_function("8086", "56a0", None)


def test_describe_folds_identical_devices() -> None:
    from gpudoctor.facts.accelerators import Accelerator

    mi210 = Accelerator(Vendor.AMD, 0, "AMD Instinct MI210", None, 65520, "gfx90a", True, "driver")
    assert describe_accelerators((mi210, mi210)) == "2 × AMD Instinct MI210 (gfx90a)"
    assert describe_accelerators(()) is None


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=2000), st.one_of(st.none(), st.dictionaries(st.text(max_size=8), st.text(max_size=8))))
def test_garbage_never_raises(text: str, record: object) -> None:
    accelerator_functions(record, text)
