"""``xpu-smi discovery`` in each of its forms, read from the real captures in ../shared/fixtures/H-intel."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.xpu_smi import parse_xpu_smi
from tests.helpers.fixtures import fixture_text

TABLE = "H-intel/xpumanager-doc-xpu-smi-discovery-table-1x-ats-0x020a-preproduction.txt"
JSON = "H-intel/xpumanager-doc-xpu-smi-discovery-json-1x-ats-0x020a-preproduction.txt"
DETAIL = "H-intel/xpumanager-doc-xpu-smi-discovery-d-detail-ats-0x020a-2-tiles-32GiB.txt"
BORDERLESS = "H-intel/xpu-smi-discovery-d-arc-a770-borderless-new-format-excerpt-llamacpp-pr28725.txt"


def test_boxed_table_lists_one_device_with_its_bus_address() -> None:
    report = parse_xpu_smi(fixture_text(TABLE))
    assert len(report.devices) == 1
    device = report.devices[0]
    assert device.device_id == 0
    assert device.name == "Intel(R) Graphics [0x020a]"
    assert device.vendor == "Intel(R) Corporation"
    assert device.uuid == "00000000-0000-0000-0000-020a00008086"
    assert device.bus_id == "0000:4d:00.0"
    assert device.function_type == "physical"


def test_json_device_list() -> None:
    report = parse_xpu_smi(fixture_text(JSON))
    assert [d.device_id for d in report.devices] == [0]
    device = report.devices[0]
    assert device.pci_device_id == "0x20a"
    assert device.device_type == "GPU"
    assert device.bus_id == "0000:4d:00.0"


def test_detail_reads_memory_tiles_eus_pcie_driver_firmware_and_xe_links() -> None:
    device = parse_xpu_smi(fixture_text(DETAIL)).devices[0]
    assert device.memory_mib == 32768
    assert device.tiles == 2
    assert device.eus == 512
    assert (device.pcie_generation, device.pcie_max_width) == (4, 16)
    assert device.driver_version == "16929133"
    assert device.firmware_version == "ATS0_1.1"
    assert device.xe_link_ports == 16


def test_borderless_new_layout_padded_to_66_columns() -> None:
    text = fixture_text(BORDERLESS)
    assert all(len(line) == 66 for line in text.splitlines()[1:])  # the layout this test is about
    report = parse_xpu_smi(text)
    assert len(report.devices) == 1
    device = report.devices[0]
    assert device.device_type == "Discrete GPU"
    assert device.name == "Intel(R) Arc(TM) A770 Graphics"
    assert device.pci_device_id == "0x56a0"
    assert device.driver_version == "17013219"
    assert device.firmware_version == "DG02_1.3253"
    assert device.kernel_version == "6.17.0-35-generic"


def test_synthetic_two_device_json_and_a_tool_error() -> None:
    # Synthetic: two devices in -j form, and the one-line answer of a tool that found none.
    text = json.dumps({"device_list": [{"device_id": 0, "device_name": "A"}, {"device_id": 1, "device_name": "B"}]})
    assert [d.name for d in parse_xpu_smi(text).devices] == ["A", "B"]
    empty = parse_xpu_smi("No device discovered\n")
    assert empty.devices == () and empty.error == "No device discovered"
    assert parse_xpu_smi(None).devices == ()


@given(st.text(max_size=3000))
def test_any_text_parses_without_raising(text: str) -> None:
    parse_xpu_smi(text)


@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=20),
        lambda c: st.lists(c) | st.dictionaries(st.text(max_size=20), c),
        max_leaves=30,
    )
)
def test_any_json_parses_without_raising(value: object) -> None:
    parse_xpu_smi(json.dumps({"device_list": value}))
    parse_xpu_smi(json.dumps(value))
