"""lspci: device listings (``-D -nn -k`` and plainer forms) and LnkCap/LnkSta link state."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.lspci import LINK_KEYS, link_fields, parse_link_status, parse_link_statuses, parse_lspci
from gpudoctor.facts.model import PciDevice
from gpudoctor.kb.gpu_specs import pcie_gen_for_speed
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import line_mutations, non_text_json

LSPCI_FILES = fixture_files("D", "lspci-*.txt")

# Written from the documented `lspci -D -nn -k` format, not captured (the device
# line is the one quoted in pciutils-style bug reports for an RTX 3090).
SYNTHETIC_RTX3090 = """\
0000:00:00.0 Host bridge [0600]: Intel Corporation Device [8086:0d57]
0000:01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)
\tSubsystem: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:147d]
\tKernel driver in use: nvidia
\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
0000:01:00.1 Audio device [0403]: NVIDIA Corporation GA102 High Definition Audio Controller [10de:1aef] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:147d]
\tKernel driver in use: snd_hda_intel
\tKernel modules: snd_hda_intel
"""
# Written from the documented format, not captured: `lspci -k` without -D and -nn.
SYNTHETIC_PLAIN = """\
01:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 40GB] (rev a1)
\tSubsystem: NVIDIA Corporation Device 134f
\tKernel driver in use: nouveau
02:00.0 VGA compatible controller: NVIDIA Corporation TU104 [GeForce RTX 2080 SUPER] (rev a1) (prog-if 00 [VGA controller])
"""
# Written from the documented `lspci -vv` format, not captured: two devices, the
# first at full speed, the second with an older pciutils that prints no "(downgraded)".
SYNTHETIC_VV = """\
0000:00:01.0 PCI bridge: Intel Corporation Device 1901 (rev 07)
\t\tLnkCap:\tPort #2, Speed 8GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <256ns, L1 <8us
\t\tLnkSta:\tSpeed 8GT/s (ok), Width x16 (ok)
0000:01:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)
\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported
\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+
\t\tLnkSta:\tSpeed 16GT/s, Width x8
\t\tLnkCap2: Supported Link Speeds: 2.5-16GT/s, Crosslink- Retimer+ 2Retimers+ DRS-
\t\tLnkSta2: Current De-emphasis Level: -3.5dB, EqualizationComplete+
"""

# Real, not hand-written: the GPU function's link lines as the club-3090 report script printed them
# (`lspci -vvv -s 0000:01:00.0 | grep ...`), https://github.com/noonghunna/club-3090/issues/1028 (RTX 3090,
# TP=4 rig).  Tab-indented with a tab after the colon; the block's device line was not part of the paste.
REAL_CLUB3090_1028_GPU_LINK = (
    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <512ns, L1 <4us\n"
    "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x16\n"
)


def _live_lspci() -> str:
    binary = shutil.which("lspci")
    if binary is None:
        pytest.skip("no lspci here")
    try:
        result = subprocess.run([binary, "-D", "-nn", "-k"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("lspci did not run")
    if not result.stdout.strip():
        pytest.skip("lspci listed nothing")
    return result.stdout


# --- device listings -----------------------------------------------------------------------------------------


def test_rtx3090_block() -> None:
    devices = parse_lspci(SYNTHETIC_RTX3090)
    assert [d.address for d in devices] == ["0000:00:00.0", "0000:01:00.0", "0000:01:00.1"]
    gpu = devices[1]
    assert gpu == PciDevice(
        address="0000:01:00.0",
        vendor_id="10de",
        device_id="2204",
        class_code="0300",
        description="NVIDIA Corporation GA102 [GeForce RTX 3090]",
        driver="nvidia",
    )
    assert gpu.is_gpu
    audio = devices[2]
    assert (audio.class_code, audio.driver, audio.is_gpu) == ("0403", "snd_hda_intel", False)
    assert devices[0].driver is None  # no "Kernel driver in use" line: nothing bound


def test_without_domain_and_numeric_ids() -> None:
    devices = parse_lspci(SYNTHETIC_PLAIN)
    assert [d.address for d in devices] == ["0000:01:00.0", "0000:02:00.0"]
    assert devices[0].description == "NVIDIA Corporation GA100 [A100 SXM4 40GB]"
    assert (devices[0].vendor_id, devices[0].device_id, devices[0].class_code) == (None, None, None)
    assert devices[0].driver == "nouveau"
    assert devices[1].description == "NVIDIA Corporation TU104 [GeForce RTX 2080 SUPER]"


def test_live_lspci_lists_every_function() -> None:
    text = _live_lspci()
    devices = parse_lspci(text)
    device_lines = [line for line in text.splitlines() if re.match(r"[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.\d ", line)]
    assert len(devices) == len(device_lines)
    assert all(re.fullmatch(r"[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d.address) for d in devices)
    assert all(d.class_code and d.vendor_id and d.device_id for d in devices)  # -nn was given


@pytest.mark.parametrize("text", ["", "lspci: command not found", "pcilib: Cannot open /proc/bus/pci"])
def test_nothing_listed(text: str) -> None:
    assert parse_lspci(text) == []


# --- link state ------------------------------------------------------------------------------------------------


def test_riser_downgraded_to_2_5_gts() -> None:
    if not LSPCI_FILES:
        pytest.skip("fixture not available")
    path = next((p for p in LSPCI_FILES if "downgraded" in p.name), None)
    if path is None:
        pytest.skip("fixture not available")
    status = parse_link_status(read_fixture(path))
    assert status == {
        "cap_speed_gts": 16.0,
        "cap_width": 16,
        "sta_speed_gts": 2.5,
        "sta_width": 16,
        "speed_downgraded": True,
        "width_downgraded": False,
        "downgraded": True,
    }


def test_link_statuses_per_device_and_computed_downgrade() -> None:
    statuses = parse_link_statuses(SYNTHETIC_VV)
    assert set(statuses) == {"0000:00:01.0", "0000:01:00.0"}
    assert statuses["0000:00:01.0"]["downgraded"] is False
    gpu = statuses["0000:01:00.0"]
    # LnkCap2/LnkSta2 must not be read as LnkCap/LnkSta.
    assert (gpu["cap_speed_gts"], gpu["cap_width"], gpu["sta_speed_gts"], gpu["sta_width"]) == (16.0, 16, 16.0, 8)
    assert (gpu["speed_downgraded"], gpu["width_downgraded"], gpu["downgraded"]) == (False, True, True)


def test_vv_device_blocks_fill_the_link_fields() -> None:
    devices = parse_lspci(SYNTHETIC_VV)
    bridge, gpu = devices
    assert (bridge.max_link_speed, bridge.max_link_width, bridge.current_link_speed, bridge.current_link_width) == (
        "8GT/s",
        16,
        "8GT/s",
        16,
    )
    # LnkCap2/LnkSta2 ("2.5-16GT/s") must not overwrite LnkCap/LnkSta.
    assert (gpu.max_link_speed, gpu.max_link_width, gpu.current_link_speed, gpu.current_link_width) == (
        "16GT/s",
        16,
        "16GT/s",
        8,
    )
    assert pcie_gen_for_speed(gpu.max_link_speed) == 4 and pcie_gen_for_speed(bridge.current_link_speed) == 3


def test_riser_block_without_its_device_line() -> None:
    path = next((p for p in LSPCI_FILES if "downgraded" in p.name), None)
    if path is None:
        pytest.skip("fixture not available")
    text = read_fixture(path)
    assert parse_lspci(text) == []  # 4-space indented LnkCap/LnkSta only: no device line to hang them on
    fields = link_fields(text)
    assert fields == {
        "max_link_speed": "16GT/s",
        "max_link_width": 16,
        "current_link_speed": "2.5GT/s",
        "current_link_width": 16,
    }
    # The lspci spelling and the sysfs spelling name the same generations.
    assert pcie_gen_for_speed(fields["max_link_speed"]) == pcie_gen_for_speed("16.0 GT/s PCIe") == 4
    assert pcie_gen_for_speed(fields["current_link_speed"]) == pcie_gen_for_speed("2.5 GT/s PCIe") == 1


def test_tab_separated_link_lines_of_a_real_report() -> None:
    assert link_fields(REAL_CLUB3090_1028_GPU_LINK) == {
        "max_link_speed": "16GT/s",
        "max_link_width": 16,
        "current_link_speed": "2.5GT/s",
        "current_link_width": 16,
    }
    assert parse_link_status(REAL_CLUB3090_1028_GPU_LINK)["speed_downgraded"] is True


@pytest.mark.parametrize(
    "text",
    [
        "",
        "LnkCap2: Supported Link Speeds: 2.5-16GT/s, Crosslink- Retimer+",
        "LnkCtl: ASPM Disabled; RCB 64 bytes",
        "LnkSta2: Current De-emphasis Level: -6dB",
    ],
)
def test_link_fields_not_fooled_by_other_link_lines(text: str) -> None:
    assert link_fields(text) == {}


def test_link_status_only_cap_known() -> None:
    status = parse_link_status("LnkCap: Port #0, Speed 8GT/s, Width x16\n")
    assert status["cap_speed_gts"] == 8.0 and status["sta_speed_gts"] is None and status["downgraded"] is None
    assert set(status) == set(LINK_KEYS)


@pytest.mark.parametrize("text", ["", "LnkCtl: ASPM Disabled", "LnkCap2: Supported Link Speeds: 2.5-16GT/s"])
def test_link_status_unknown(text: str) -> None:
    assert parse_link_status(text) == {}


# --- properties --------------------------------------------------------------------------------------------------


@given(st.text())
def test_any_text(text: str) -> None:
    devices = parse_lspci(text)
    assert all(isinstance(d, PciDevice) and d.address for d in devices)
    status = parse_link_status(text)
    assert status == {} or set(status) == set(LINK_KEYS)
    assert all(set(s) == set(LINK_KEYS) for s in parse_link_statuses(text).values())
    fields = link_fields(text)
    assert all(isinstance(fields[k], int) for k in ("max_link_width", "current_link_width") if k in fields)
    assert all(fields[k].endswith("GT/s") for k in ("max_link_speed", "current_link_speed") if k in fields)


@given(non_text_json())
def test_any_json_value_is_unknown_not_an_error(value: object) -> None:
    assert parse_lspci(value) == [] and parse_link_status(value) == {} and parse_link_statuses(value) == {}
    assert link_fields(value) == {}


@pytest.mark.parametrize(
    "text", [SYNTHETIC_RTX3090, SYNTHETIC_PLAIN, SYNTHETIC_VV] + [read_fixture(p) for p in LSPCI_FILES]
)
@given(data=st.data())
def test_mutated_inputs_never_raise(text: str, data: st.DataObject) -> None:
    mutated = data.draw(line_mutations(text))
    assert isinstance(parse_lspci(mutated), list)
    assert isinstance(parse_link_status(mutated), dict)
    assert isinstance(parse_link_statuses(mutated), dict)
    assert isinstance(link_fields(mutated), dict)


@given(
    bus=st.integers(0, 255),
    dev=st.integers(0, 31),
    fn=st.integers(0, 7),
    vendor=st.from_regex(r"[0-9a-f]{4}", fullmatch=True),
    device=st.from_regex(r"[0-9a-f]{4}", fullmatch=True),
    klass=st.from_regex(r"[0-9a-f]{4}", fullmatch=True),
    name=st.from_regex(r"[A-Za-z][A-Za-z0-9 ,.]{0,30}[A-Za-z0-9]", fullmatch=True),
    driver=st.one_of(st.none(), st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True)),
)
def test_generated_device_lines_round_trip(
    bus: int, dev: int, fn: int, vendor: str, device: str, klass: str, name: str, driver: str | None
) -> None:
    text = f"{bus:02x}:{dev:02x}.{fn} Some class [{klass}]: {name} [{vendor}:{device}] (rev a1)\n"
    if driver:
        text += f"\tKernel driver in use: {driver}\n"
    (parsed,) = parse_lspci(text)
    assert parsed == PciDevice(
        address=f"0000:{bus:02x}:{dev:02x}.{fn}",
        vendor_id=vendor,
        device_id=device,
        class_code=klass,
        description=name,
        driver=driver,
    )
