"""system_profiler SPDisplaysDataType: the real text captures (I-apple), a synthetic -json, and anything at all."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.apple_model import AppleGpu
from gpudoctor.facts.system_profiler import parse_system_profiler, parse_system_profiler_json
from tests.helpers.fixtures import fixture_text
from tests.helpers.strategies import json_like, mutated_json

M3 = "I-apple/system_profiler-SPDisplaysDataType-apple-m3-10-core-metal3-smctemp-26.txt"
VEGA = "I-apple/system_profiler-SPDisplaysDataType-intel-imac-pro-radeon-pro-vega64-amd-gpu-cpu_info-17.txt"


def test_apple_m3_as_index_md_says() -> None:
    # INDEX.md: Chipset Model Apple M3, Type GPU, Bus Built-In, 10 cores, Vendor Apple (0x106b), Metal 3, 2 displays;
    # the capture starts with its shell prompt line.
    (gpu,) = parse_system_profiler(fixture_text(M3))
    assert gpu == AppleGpu(
        name="Apple M3",
        vendor="apple",
        cores=10,
        metal="Metal 3",
        vram_mib=None,
        bus="Built-In",
        vendor_id="0x106b",
        device_id=None,
        displays=2,
    )


def test_intel_imac_pro_radeon_vega_as_index_md_says() -> None:
    # INDEX.md: Bus PCIe x16, VRAM (Total) 16 GB, Vendor AMD (0x1002), Device ID 0x6860, the older "Metal:" key.
    (gpu,) = parse_system_profiler(fixture_text(VEGA))
    assert gpu.name == "Radeon Pro Vega 64"
    assert (gpu.vendor, gpu.vendor_id, gpu.device_id) == ("amd", "0x1002", "0x6860")
    assert gpu.vram_mib == 16 * 1024
    assert gpu.bus == "PCIe"
    assert gpu.metal == "Supported, feature set macOS GPUFamily2 v1"
    assert gpu.cores is None
    assert gpu.displays == 1


def test_two_gpus_in_one_text_are_two_blocks() -> None:
    # Synthetic: the Vega block twice under one heading, renamed, as a two-GPU Mac would list them.
    body = fixture_text(VEGA)
    second = body.split("Graphics/Displays:", 1)[1].replace("Radeon Pro Vega 64", "Radeon Pro 580X")
    gpus = parse_system_profiler(body + second)
    assert [g.name for g in gpus] == ["Radeon Pro Vega 64", "Radeon Pro 580X"]


# Synthetic: no whole real `system_profiler SPDisplaysDataType -json` capture was found.  The key names and value
# spellings are the ones public parsers of it read (sppci_model, sppci_cores, spdisplays_mtlgpufamilysupport
# "spdisplays_metal3", spdisplays_vendor "sppci_vendor_Apple", sppci_bus "spdisplays_builtin", spdisplays_vram).
SYNTHETIC_JSON = {
    "SPDisplaysDataType": [
        {
            "_name": "kHW_AppleM1Item",
            "spdisplays_mtlgpufamilysupport": "spdisplays_metal3",
            "spdisplays_ndrvs": [{"_name": "Color LCD"}],
            "spdisplays_vendor": "sppci_vendor_Apple",
            "sppci_bus": "spdisplays_builtin",
            "sppci_cores": "7",
            "sppci_device_type": "spdisplays_gpu",
            "sppci_model": "Apple M1",
        },
        {"_name": "Radeon Pro 5500M", "sppci_model": "AMD Radeon Pro 5500M", "spdisplays_vram": "8 GB"},
    ]
}


def test_synthetic_json_form() -> None:
    m1, radeon = parse_system_profiler(json.dumps(SYNTHETIC_JSON, indent=2))
    assert m1 == AppleGpu(name="Apple M1", vendor="apple", cores=7, metal="Metal 3", bus="Built-In", displays=1)
    assert (radeon.name, radeon.vendor, radeon.vram_mib, radeon.cores) == ("AMD Radeon Pro 5500M", "amd", 8192, None)


def test_not_system_profiler_output_gives_nothing() -> None:
    assert parse_system_profiler(None) == ()
    assert parse_system_profiler("") == ()
    assert parse_system_profiler("nvidia-smi: command not found") == ()
    assert parse_system_profiler('{"SPDisplaysDataType": "nope"}') == ()
    assert parse_system_profiler("{not json") == ()


@given(st.text())
def test_any_text_parses_without_raising(text: str) -> None:
    assert isinstance(parse_system_profiler(text), tuple)


@given(st.text(alphabet=" \t:\nChipset ModelVendorDisplays()0x1ab", max_size=400))
def test_tree_like_text_parses_without_raising(text: str) -> None:
    assert isinstance(parse_system_profiler(text), tuple)


@given(json_like())
def test_any_json_parses_without_raising(value: object) -> None:
    assert isinstance(parse_system_profiler_json(json.dumps(value)), tuple)


@given(st.data())
def test_mutated_synthetic_json_parses_without_raising(data: st.DataObject) -> None:
    value = data.draw(mutated_json(copy.deepcopy(SYNTHETIC_JSON)))
    assert isinstance(parse_system_profiler(json.dumps(value)), tuple)
