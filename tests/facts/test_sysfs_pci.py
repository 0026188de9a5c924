"""sysfs_pci: the ``pci-devices.json`` record of ``scan_pci``, live and hand-made, and any JSON at all."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.system_scan import scan_pci
from gpudoctor.facts.model import PciDevice
from gpudoctor.facts.sysfs_pci import parse_pci_devices_json
from tests.helpers.strategies import json_like, mutated_json

# Written in the shape scan_pci produces (sysfs attribute files, stripped), not captured.
SYNTHETIC_SCAN = {
    "readable": True,
    "scanned": 12,
    "devices": [
        {
            "address": "0000:01:00.0",
            "vendor": "0x10de",
            "device": "0x2204",
            "class": "0x030000",
            "subsystem_vendor": "0x10de",
            "subsystem_device": "0x147d",
            "numa_node": "-1",
            "current_link_speed": "2.5 GT/s PCIe",
            "current_link_width": "16",
            "max_link_speed": "16.0 GT/s PCIe",
            "max_link_width": "16",
            "driver": "nvidia",
        },
        {
            "address": "0000:01:00.1",
            "vendor": "0x10de",
            "device": "0x1aef",
            "class": "0x040300",
            "subsystem_vendor": "0x10de",
            "subsystem_device": "0x147d",
            "numa_node": "0",
            "current_link_speed": None,
            "current_link_width": None,
            "max_link_speed": None,
            "max_link_width": None,
            "driver": None,
        },
        {
            "address": "0000:41:00.0",
            "vendor": "0x10de",
            "device": "0x20b0",
            "class": "0x030200",
            "numa_node": "1",
            "current_link_speed": "Unknown",
            "current_link_width": "0",
            "driver": "vfio-pci",
        },
    ],
    "dmi": {"sys_vendor": None, "product_name": None},
}


def test_synthetic_scan() -> None:
    gpu, audio, passthrough = parse_pci_devices_json(SYNTHETIC_SCAN)
    assert gpu == PciDevice(
        address="0000:01:00.0",
        vendor_id="10de",
        device_id="2204",
        class_code="0300",
        driver="nvidia",
        current_link_speed="2.5 GT/s PCIe",
        max_link_speed="16.0 GT/s PCIe",
        current_link_width=16,
        max_link_width=16,
        numa_node=None,
    )
    assert gpu.is_gpu
    assert (audio.class_code, audio.is_gpu, audio.numa_node, audio.driver) == ("0403", False, 0, None)
    assert (passthrough.class_code, passthrough.driver, passthrough.numa_node) == ("0302", "vfio-pci", 1)
    assert passthrough.current_link_width == 0 and passthrough.max_link_width is None


def test_bare_device_list_and_missing_address() -> None:
    devices = parse_pci_devices_json([{"vendor": "0x10de"}, {"address": "0000:02:00.0", "class": "bogus"}, "x"])
    assert devices == [PciDevice(address="0000:02:00.0")]


def test_unreadable_scan() -> None:
    assert parse_pci_devices_json({"readable": False, "error": "Permission denied", "scanned": 0, "devices": []}) == []


def test_live_scan() -> None:
    record = scan_pci()
    devices = parse_pci_devices_json(record)
    assert len(devices) == len(record.get("devices", []))
    assert all(device.vendor_id == "10de" for device in devices)


@given(json_like())
def test_any_json_value(value: object) -> None:
    devices = parse_pci_devices_json(value)
    assert isinstance(devices, list) and all(isinstance(d, PciDevice) for d in devices)
    devices = parse_pci_devices_json({"devices": value})
    assert isinstance(devices, list) and all(isinstance(d, PciDevice) for d in devices)


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                [
                    "address",
                    "vendor",
                    "device",
                    "class",
                    "driver",
                    "numa_node",
                    "current_link_speed",
                    "current_link_width",
                    "max_link_speed",
                    "max_link_width",
                ]
            ),
            json_like(),
        ),
        max_size=5,
    )
)
def test_records_with_wrong_types(records: list[dict]) -> None:
    for device in parse_pci_devices_json({"devices": records}):
        assert isinstance(device.address, str)
        assert device.numa_node is None or device.numa_node >= 0
        assert device.current_link_width is None or isinstance(device.current_link_width, int)


@given(data=st.data())
def test_mutated_scan_never_raises(data: st.DataObject) -> None:
    mutated = data.draw(mutated_json(copy.deepcopy(SYNTHETIC_SCAN)))
    assert isinstance(parse_pci_devices_json(mutated), list)
