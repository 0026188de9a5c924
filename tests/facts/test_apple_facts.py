"""Apple facts: the Mac and its Python from collect_env reports (I-apple), system_profiler, macos.json and probes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.accelerators import Vendor, describe_accelerators
from gpudoctor.facts.apple import mac_platform, parse_mps_repl
from gpudoctor.facts.apple_model import MpsRepl
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import PythonTarget
from tests.helpers.fixtures import fixture_text
from tests.helpers.strategies import json_like

ROSETTA = "I-apple/collect_env-rosetta-x86_64-anaconda-python-on-m2-pro-macos-10.16-excerpt-pytorch-146236.txt"
M2_MAX = "I-apple/collect_env-macos13.7.4-arm64-m2-max-2.10-nightly-cpu-section-pytorch-164943.txt"
M1_12_2 = "I-apple/collect_env-macos12.2.1-arm64-m1-conda-forge-py39-mps-unavailable-pytorch-78343.txt"
M3 = "I-apple/system_profiler-SPDisplaysDataType-apple-m3-10-core-metal3-smctemp-26.txt"
VEGA = "I-apple/system_profiler-SPDisplaysDataType-intel-imac-pro-radeon-pro-vega64-amd-gpu-cpu_info-17.txt"


def facts_of(**items: str) -> Facts:
    evidence = Evidence()
    for key, text in items.items():
        name = Ev[key].value
        evidence.add(EvidenceItem(name=name, kind="json" if name.endswith(".json") else "file", text=text))
    return Facts(evidence)


def test_rosetta_collect_env_is_an_x86_64_python_translated_on_an_m2_pro() -> None:
    # INDEX.md: OS macOS 15.3 (x86_64) while CPU Apple M2 Pro; Python platform macOS-10.16-x86_64-i386-64bit.
    mac = facts_of(TORCH_COLLECT_ENV=fixture_text(ROSETTA)).apple.platform
    assert mac is not None
    assert (mac.macos_version, mac.python_macos) == ("15.3", "10.16")
    assert (mac.chip, mac.apple_silicon, mac.python_arch, mac.translated) == ("Apple M2 Pro", True, "x86_64", True)
    assert mac.translated_because and "Apple M2 Pro" in mac.translated_because


def test_native_m2_max_report_names_the_chip_and_its_gpu() -> None:
    # INDEX.md: OS macOS 13.7.4 (arm64); the chip, Apple M2 Max, only in the CPU block.
    facts = facts_of(TORCH_COLLECT_ENV=fixture_text(M2_MAX))
    mac = facts.apple.platform
    assert mac is not None
    assert (mac.macos_version, mac.chip, mac.apple_silicon, mac.python_arch, mac.translated) == (
        "13.7.4",
        "Apple M2 Max",
        True,
        "arm64",
        False,
    )
    (gpu,) = facts.accelerators
    assert (gpu.vendor, gpu.name, gpu.source) == (Vendor.APPLE, "Apple M2 Max", "chip")


def test_m1_report_without_a_chip_line_is_still_apple_silicon_by_its_arm64_python() -> None:
    # INDEX.md: macOS 12.2.1 (arm64), Python platform macOS-12.2.1-arm64-arm-64bit; no CPU block in that version.
    facts = facts_of(TORCH_COLLECT_ENV=fixture_text(M1_12_2))
    mac = facts.apple.platform
    assert mac is not None
    assert (mac.macos_version, mac.chip, mac.apple_silicon, mac.translated) == ("12.2.1", None, True, False)
    assert facts.accelerators == ()  # no chip name: nothing to call its GPU


def test_system_profiler_m3_is_one_apple_accelerator() -> None:
    facts = facts_of(MAC_DISPLAYS=fixture_text(M3))
    (gpu,) = facts.accelerators
    assert (gpu.vendor, gpu.name, gpu.architecture, gpu.source) == (
        Vendor.APPLE,
        "Apple M3",
        "Metal 3",
        "system_profiler",
    )
    assert gpu.apple is not None and gpu.apple.cores == 10
    assert describe_accelerators(facts.accelerators) == "1 × Apple M3"
    assert facts.apple.platform is not None and facts.apple.platform.apple_silicon is True
    assert facts.apple.present


def test_intel_mac_amd_gpu_is_an_apple_accelerator_not_an_amd_one() -> None:
    # Decided: on macOS an AMD GPU runs only through Apple's Metal driver (no ROCm), so ROCm checks must not see it.
    facts = facts_of(MAC_DISPLAYS=fixture_text(VEGA))
    (gpu,) = facts.accelerators
    assert gpu.vendor is Vendor.APPLE and gpu.apple is not None and gpu.apple.vendor == "amd"
    assert gpu.memory_total_mib == 16384
    assert not [a for a in facts.accelerators if a.vendor is Vendor.AMD]


# Synthetic macos.json records, in the shape scan_macos writes.
ROSETTA_SCAN = {
    "platform": "darwin",
    "is_macos": True,
    "machine": "x86_64",
    "mac_version": "10.16",
    "sysctl_readable": True,
    "proc_translated": 1,
    "hw_optional_arm64": 1,
    "cpu_brand": "Apple M1",
    "os_product_version": "14.4.1",
    "kernel_release": "23.4.0",
}
INTEL_SCAN = {
    "platform": "darwin",
    "is_macos": True,
    "machine": "x86_64",
    "mac_version": "13.6",
    "sysctl_readable": True,
    "proc_translated": None,
    "hw_optional_arm64": None,
    "cpu_brand": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz",
}


def test_synthetic_scan_under_rosetta_reads_the_real_macos_not_10_16() -> None:
    mac = facts_of(MACOS=json.dumps(ROSETTA_SCAN)).apple.platform
    assert mac is not None
    assert (mac.macos_version, mac.python_macos, mac.chip, mac.translated) == ("14.4.1", "10.16", "Apple M1", True)


def test_synthetic_scan_of_an_intel_mac() -> None:
    mac = facts_of(MACOS=json.dumps(INTEL_SCAN)).apple.platform
    assert mac is not None
    assert (mac.apple_silicon, mac.translated, mac.macos_version) == (False, False, "13.6")


def test_a_probed_arm64_python_outweighs_gpudoctors_own_translated_python() -> None:
    # Synthetic: gpudoctor itself ran under Rosetta, but the target Python is native arm64.
    target = PythonTarget(platform="darwin", machine="arm64", mac_version="14.4.1", translated=False)
    mac = mac_platform(ROSETTA_SCAN, target, None)
    assert mac is not None and (mac.python_arch, mac.translated) == ("arm64", False)
    x86 = PythonTarget(platform="darwin", machine="x86_64", mac_version="10.16")
    mac = mac_platform(ROSETTA_SCAN, x86, None)
    assert mac is not None and mac.translated is True and mac.macos_version == "14.4.1"


def test_nothing_mac_like_is_not_a_mac() -> None:
    assert Facts(Evidence()).apple.platform is None
    assert (
        facts_of(MACOS=json.dumps({"platform": "linux", "is_macos": False, "note": "not macOS"})).apple.platform is None
    )
    assert mac_platform(None, PythonTarget(platform="linux", machine="x86_64"), None) is None
    assert Facts(Evidence()).apple.present is False


@given(json_like())
def test_any_scan_record_gives_facts_without_raising(value: object) -> None:
    mac_platform(value, None, None)
    facts_of(MACOS=json.dumps(value)).apple  # noqa: B018 - the property is what is tested


REPL_78343 = "I-apple/python-repl-mps-is_built-true-is_available-false-macos12.2.1-m1-pytorch-78343.txt"
REPL_146236 = "I-apple/python-repl-rosetta-is_macos_or_newer-15-false-on-macos-15.3-pytorch-146236.txt"


def test_pasted_session_with_is_built_true_and_is_available_false() -> None:
    # INDEX.md: torch 1.13.0.dev20220525, is_built() True, is_available() False.
    repl = parse_mps_repl(fixture_text(REPL_78343))
    assert repl == MpsRepl("1.13.0.dev20220525", True, False, ())
    assert facts_of(PASTE=fixture_text(REPL_78343)).apple.repl == repl


def test_pasted_session_asking_is_macos_or_newer() -> None:
    # INDEX.md: is_macos_or_newer(15, 0) and (14, 0) False, (13, 0) True (on macOS 15.3, under Rosetta).
    repl = parse_mps_repl(fixture_text(REPL_146236))
    assert repl is not None and repl.macos_or_newer == (("15.0", False), ("14.0", False), ("13.0", True))
    assert (repl.torch_version, repl.mps_built, repl.mps_available) == (None, None, None)


def test_a_session_that_asks_nothing_about_mps_is_none() -> None:
    assert parse_mps_repl(">>> import torch\n>>> torch.cuda.is_available()\nFalse\n") is None
    assert parse_mps_repl(fixture_text(M2_MAX)) is None
    assert parse_mps_repl(None) is None


@given(st.text())
def test_any_text_as_a_session_parses_without_raising(text: str) -> None:
    parse_mps_repl(text)
    parse_mps_repl(">>> torch.backends.mps.is_built()\n" + text)
