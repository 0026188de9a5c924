"""rocm-smi parsed from real captures (shared fixtures G-amd, INDEX.md section G2): concise tables, -a text and
--json of ROCm 4.3 to 6.1; never raises on garbage."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.facts.amd_model import AmdToolReport
from gpudoctor.facts.rocm_smi import parse_rocm_smi
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture
from tests.helpers.strategies import fixture_named, json_like, mutated

ROCM_SMI_FILES = [p for p in fixture_files("G-amd") if "rocm-smi" in p.name]
GIB_32 = 34342961152 // 1048576


def test_concise_rocm6_four_mi300x_with_name_lines() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/gls-rocm-smi-concise-4x-mi300x-sriov.txt"))
    assert [g.index for g in report.gpus] == [0, 1, 2, 3]
    assert {(g.device_id, g.name, g.memory_partition, g.compute_partition) for g in report.gpus} == {
        ("74a1", "AMD Instinct MI300X", "NPS1", "SPX")
    }


def test_concise_rocm6_one_mi300x() -> None:
    (gpu,) = parse_rocm_smi(fixture_text("G-amd/gls-rocm-smi-concise-1x-mi300x.txt")).gpus
    assert gpu.name == "AMD Instinct MI300X" and gpu.device_id == "74a1"


def test_concise_legacy_one_header_layout_four_mi100() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/rocm-smi-concise-legacy-format-4x-mi100-rocm-docker-116.txt"))
    assert [g.index for g in report.gpus] == [0, 1, 2, 3]
    assert all(g.name is None for g in report.gpus)  # this layout names no GPU


def test_showallinfo_text_four_mi300x() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/gls-rocm-smi-a-4x-mi300x-sriov-driver-6.7.0.txt"))
    assert report.driver_version == "6.7.0" and len(report.gpus) == 4
    gpu = report.gpus[0]
    assert gpu.device_id == "74a1" and gpu.unique_id == "0x8d1457e2c20f59d2" and gpu.vbios == "113-MI3SRIOV-001"
    assert gpu.name == "AMD Instinct MI300X OAM" and gpu.bus_id == "0000:26:00.0"
    assert gpu.compute_partition == "SPX" and gpu.memory_partition == "NPS1"


def test_json_rocm5_keys_six_mi100() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/telegraf-rocm-smi-json-6x-mi100-rocm5.7.1-amdgpu-6.2.4.txt"))
    assert report.driver_version == "6.2.4" and len(report.gpus) == 6  # the PID entry under "system" is no GPU
    assert {(g.device_id, g.name, g.vram_mib) for g in report.gpus} == {
        ("738c", "Arcturus GL-XL [Instinct MI100]", GIB_32)
    }


def test_json_rocm6_0_device_id_key_four_mi100() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/telegraf-rocm-smi-json-4x-mi100-rocm6.0.2-amdgpu-6.3.6.txt"))
    assert report.driver_version == "6.3.6" and len(report.gpus) == 4
    assert report.gpus[0].device_id == "738c" and report.gpus[0].unique_id == "0x79ccd55167a2124a"
    assert report.gpus[0].bus_id == "0000:83:00.0" and report.gpus[0].numa_node == 1


@pytest.mark.parametrize(
    ("name", "series"),
    [
        ("rocm4.3.0", None),  # "Card series": "0x1002" is a vendor id, not a name
        ("rocm5.7.1", "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),
        ("rocm6.0.2", "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),
        ("rocm6.1.2", "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),
    ],
)
def test_json_rx6700xt_read_by_four_rocm_smi_versions(name: str, series: str | None) -> None:
    report = parse_rocm_smi(fixture_text(f"G-amd/telegraf-rocm-smi-json-rx6700xt-{name}-driver-6.3.6.txt"))
    (gpu,) = report.gpus
    assert report.driver_version == "6.3.6"
    assert gpu.device_id == "73df" and gpu.vram_mib == 12868124672 // 1048576 and gpu.name == series
    assert gpu.bus_id == "0000:07:00.0"


def test_json_rocm6_1_gfx_version() -> None:
    (gpu,) = parse_rocm_smi(fixture_text("G-amd/telegraf-rocm-smi-json-rx6700xt-rocm6.1.2-driver-6.3.6.txt")).gpus
    assert gpu.gfx_target == "gfx1031" and gpu.kfd_node == 1


def test_json_oldest_vega10_layout_has_no_series() -> None:
    report = parse_rocm_smi(fixture_text("G-amd/telegraf-rocm-smi-json-vega10-xt-0x6861-driver-5.9.25.txt"))
    (gpu,) = report.gpus
    assert gpu.device_id == "6861" and gpu.name is None and gpu.vram_mib == 17163091968 // 1048576
    assert report.driver_version == "5.9.25"


def test_json_name_from_the_tool_not_the_file_name() -> None:
    path = "G-amd/telegraf-rocm-smi-json-vega20-0x66a1-series-mi50-32gb-driver-5.9.17.txt"
    report = parse_rocm_smi(fixture_text(path))
    (gpu,) = report.gpus
    assert gpu.device_id == "66a1" and gpu.name == "Radeon Instinct MI50 32GB" and gpu.vram_mib == GIB_32
    assert report.driver_version == "5.9.17"


def test_an_error_is_kept_verbatim_synthetic() -> None:
    # SYNTHETIC text: what rocm-smi prints when the driver is not loaded.
    report = parse_rocm_smi("ERROR:root:Driver not initialized (amdgpu not found in modules)\n")
    assert report.gpus == () and report.error == "ERROR:root:Driver not initialized (amdgpu not found in modules)"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_text(text: str) -> None:
    assert isinstance(parse_rocm_smi(text), AmdToolReport)


@settings(max_examples=60, deadline=None)
@given(json_like())
def test_never_raises_on_json(value: object) -> None:
    assert isinstance(parse_rocm_smi(json.dumps(value)), AmdToolReport)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_never_raises_on_damaged_captures(data: st.DataObject) -> None:
    fixture_named(ROCM_SMI_FILES, "rocm-smi")
    damaged = data.draw(
        mutated(
            [read_fixture(p) for p in ROCM_SMI_FILES], [p.name for p in ROCM_SMI_FILES], noise_alphabet='"{}:[]\t\n'
        )
    )
    assert isinstance(parse_rocm_smi(str(damaged)), AmdToolReport)
