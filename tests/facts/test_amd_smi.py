"""amd-smi parsed from real captures (shared fixtures G-amd, INDEX.md section G1); never raises on garbage."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.facts.amd_model import AmdToolReport
from gpudoctor.facts.amd_smi import hex_id, kernel_release_of, parse_amd_smi
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture
from tests.helpers.strategies import fixture_named, json_like, mutated

STATIC_JSON = "G-amd/dme-amd-smi-static-json-1x-mi210-gfx90a-gpu_data-wrapper.txt"
MI350X_TEXT = "G-amd/amd-smi-static-text-mi350x-gfx950-redacted-serials-excerpt-rocm-systems-pr2987.txt"
RADEON_780M_TEXT = "G-amd/amd-smi-static-text-radeon-780m-phoenix3-apu-excerpt-pve-mods-348.txt"
LIST_780M = "G-amd/amd-smi-list-radeon-780m-phoenix3-apu-pve-mods-348.txt"
LIST_AI_NIC = "G-amd/amd-smi-list-1x-mi210-plus-ai-nic-dev-build-rocm-systems-pr3654.txt"
AMD_SMI_FILES = [p for p in fixture_files("G-amd") if "amd-smi" in p.name]


def test_static_json_with_the_gpu_data_wrapper_mi210() -> None:
    report = parse_amd_smi(fixture_text(STATIC_JSON))
    (gpu,) = report.gpus
    assert gpu.index == 0 and gpu.name == "AMD Instinct MI210" and gpu.device_id == "740f"
    assert gpu.gfx_target == "gfx90a" and gpu.compute_units == 104
    assert gpu.vram_mib == 65520 and gpu.numa_node == 1 and gpu.sources == ("amd-smi",)
    # driver.version is /proc/version with its spaces removed: an inbox amdgpu, the kernel release inside.
    assert report.driver_version is not None and report.driver_version.startswith("Linuxversion6.14.0-24-generic(")
    assert report.kernel_release == "6.14.0-24-generic"
    assert report.error is None


def test_static_json_as_a_bare_list_synthetic_unwrapped_from_the_real_records() -> None:
    # SYNTHETIC layout: the real MI210 record, printed the way older amd-smi does (a bare list, no wrapper).
    records = json.loads(fixture_text(STATIC_JSON))["gpu_data"]
    (gpu,) = parse_amd_smi(json.dumps(records, indent=4)).gpus
    assert gpu.name == "AMD Instinct MI210" and gpu.gfx_target == "gfx90a" and gpu.vram_mib == 65520


def test_static_text_mi350x_excerpt() -> None:
    report = parse_amd_smi(fixture_text(MI350X_TEXT))
    (gpu,) = report.gpus  # the excerpt stops inside GPU 0's RAS block
    assert gpu.name == "AMD Instinct MI350X" and gpu.device_id == "75a0" and gpu.gfx_target == "gfx950"
    assert gpu.compute_units == 128 and gpu.bus_id == "0000:05:00.0"
    assert report.driver_version == "6.18.3" and report.kernel_release == "5.15.0-164-generic"


def test_static_text_radeon_780m_older_layout() -> None:
    report = parse_amd_smi(fixture_text(RADEON_780M_TEXT))
    (gpu,) = report.gpus
    assert gpu.name == "Phoenix3" and gpu.device_id == "1900" and gpu.bus_id == "0000:65:00.0"
    assert gpu.gfx_target is None and gpu.compute_units is None  # no such lines in this layout
    assert report.driver_version == "7.0.14-17-pve"


def test_list_old_layout() -> None:
    report = parse_amd_smi(fixture_text(LIST_780M))
    (gpu,) = report.gpus
    assert gpu.index == 0 and gpu.bus_id == "0000:65:00.0"
    assert gpu.unique_id == "00ff1900-0000-1000-8000-000000000000"


def test_list_new_layout_an_ai_nic_is_not_a_gpu() -> None:
    report = parse_amd_smi(fixture_text(LIST_AI_NIC))
    (gpu,) = report.gpus
    assert gpu.bus_id == "0000:23:00.0" and gpu.kfd_node == 2 and gpu.partition_id == 0
    assert report.other_devices == ("AI_NIC: 0",)


def test_a_failure_is_kept_verbatim_synthetic() -> None:
    # SYNTHETIC text: an error line in place of a report.
    report = parse_amd_smi("ERROR:root:Unable to initialize amdsmi\n")
    assert report.gpus == () and report.error == "ERROR:root:Unable to initialize amdsmi"


def test_helpers() -> None:
    assert hex_id("0x740F") == "740f" and hex_id(29711) == "740f" and hex_id("N/A") is None
    assert kernel_release_of("Linux version 6.8.0-45-generic (buildd@x) #45") == "6.8.0-45-generic"
    assert kernel_release_of("6.3.6") is None


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_text(text: str) -> None:
    assert isinstance(parse_amd_smi(text), AmdToolReport)


@settings(max_examples=60, deadline=None)
@given(json_like())
def test_never_raises_on_json(value: object) -> None:
    assert isinstance(parse_amd_smi(json.dumps(value)), AmdToolReport)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_never_raises_on_damaged_captures(data: st.DataObject) -> None:
    path = fixture_named(AMD_SMI_FILES, "amd-smi")
    texts = [read_fixture(p) for p in AMD_SMI_FILES] or [read_fixture(path)]
    names = [p.name for p in AMD_SMI_FILES] or [path.name]
    damaged = data.draw(mutated(texts, names, noise_alphabet=':{}[]"0x \n'))
    assert isinstance(parse_amd_smi(str(damaged)), AmdToolReport)
