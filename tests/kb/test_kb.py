"""Knowledge-base lookups: expected values come straight from the tables (CUDA Table 3, the
minor-version-compatibility table, NVIDIA's compute-capability pages) and from the GPU names
in the real captured fixtures."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor import kb
from tests.helpers.fixtures import REPO, fixture_files, read_fixture

# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("535.54.03", (535, 54, 3)),
        ("570.26", (570, 26, 0)),
        ("595.84", (595, 84, 0)),
        ("418.43", (418, 43, 0)),
        (" 570.124.06\n", (570, 124, 6)),
        ("", None),
        ("N/A", None),
        ("535", None),
        ("535.54.03.1", None),
        ("Driver Version: 535.54.03", None),
        ("R535", None),
        (None, None),
        (535.54, None),
    ],
)
def test_parse_driver_version(text, expected):
    assert kb.parse_driver_version(text) == expected


def test_driver_versions_compare_numerically_not_as_text():
    assert kb.parse_driver_version("570.124.06") > kb.parse_driver_version("570.26")
    assert kb.parse_driver_version("535.104.05") > kb.parse_driver_version("535.54.03")
    assert kb.parse_driver_version("595.84") > kb.parse_driver_version("595.58.03")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12.2", (12, 2, None)),
        ("12.2.2", (12, 2, 2)),
        ("cu128", (12, 8, None)),
        ("cu92", (9, 2, None)),
        ("12", None),
        ("x", None),
    ],
)
def test_parse_cuda_version(text, expected):
    assert kb.parse_cuda_version(text) == expected


# --------------------------------------------------------------------------- driver vs CUDA


@pytest.mark.parametrize(
    ("driver", "expected"),
    [
        ("535.54.03", "12.2"),  # 12.2 GA needs 535.54.03, 12.3 GA 545.23.06
        ("535.86.05", "12.2"),
        ("470.256.02", "11.4"),  # 11.4 GA 470.42.01, 11.5 GA 495.29.05
        ("590.48.01", "13.1"),  # 13.1 GA 590.44.01
        ("595.84", "13.2"),  # 13.2 GA 595.45.04 (secondary row)
        ("610.57.04", "13.3"),  # 13.3 GA 610.43.02 (secondary row)
        ("565.57.01", "12.6"),  # the driver reports 12.7, which no toolkit shipped as
        ("550.127.05", "12.4"),
        ("525.125.06", "12.0"),
        ("510.47.03", "11.6"),
        ("440.33.01", "10.2"),
        ("418.43", "10.1"),
        ("410.48", "10.0"),
        ("375.66", None),  # older than CUDA 10.0's 410.48: before the table
        ("junk", None),
    ],
)
def test_max_cuda_for_driver_linux(driver, expected):
    assert kb.max_cuda_for_driver(driver) == expected


def test_max_cuda_for_driver_windows_uses_the_windows_column():
    assert kb.max_cuda_for_driver("536.40", "windows") == "12.2"  # 12.2 GA Windows 536.25
    assert kb.max_cuda_for_driver("516.59", "windows") == "11.7"  # 11.7 GA Windows 516.01
    assert kb.max_cuda_for_driver("536.40", "wsl") == "12.2"  # WSL runs the Windows driver
    assert kb.max_cuda_for_driver("535.54.03", "macos") is None


@pytest.mark.parametrize(
    ("cuda", "platform", "expected"),
    [
        ("12.2", "linux", "535.54.03"),  # the GA row
        ("12.2.0", "linux", "535.54.03"),
        ("12.2.2", "linux", "535.104.05"),  # the exact update row
        ("12.2", "windows", "536.25"),
        ("12.8", "linux", "570.26"),
        ("cu128", "linux", "570.26"),
        ("12.8.1", "linux", "570.124.06"),
        ("13.0", "linux", "580.65.06"),
        ("13.0.2", "linux", "580.95.05"),
        ("11.0", "linux", "450.51.05"),  # GA, not the 11.0.1 RC
        ("10.0", "linux", "410.48"),
        ("12.4.3", "linux", "550.54.14"),  # unlisted patch: the GA row
        ("12.2.91", "linux", "535.54.03"),  # nvcc's component version of 12.2 GA, not "Update 91"
        ("10.2.89", "linux", "440.33"),
        ("13.0", "windows", None),  # Table 3: N/A
        ("13.4", "linux", None),  # driver minimum not confirmed
        ("12.7", "linux", None),  # no such toolkit
        ("9.0", "linux", None),
        ("abc", "linux", None),
        ("12.2", "solaris", None),
    ],
)
def test_min_driver_for_cuda(cuda, platform, expected):
    assert kb.min_driver_for_cuda(cuda, platform) == expected


@pytest.mark.parametrize(
    ("major", "platform", "expected"),
    [
        (11, "linux", "450.80.02"),
        (12, "linux", "525.60.13"),
        (13, "linux", "580.65.06"),
        (11, "windows", "452.39"),
        (12, "windows", "527.41"),
        (13, "windows", None),
        (10, "linux", None),
        ("12", "linux", "525.60.13"),
        ("x", "linux", None),
        (True, "linux", None),
    ],
)
def test_mvc_floor(major, platform, expected):
    assert kb.mvc_floor(major, platform) == expected


def test_native():
    verdict = kb.driver_runs_cuda("535.54.03", "12.2")
    assert verdict.status == "native"
    assert verdict.needs_driver == "535.54.03"
    assert "fully supports" in verdict.message
    assert "T3_131" in verdict.sources


def test_newer_driver_runs_older_cuda_natively():
    assert kb.driver_runs_cuda("590.48.01", "12.8").status == "native"
    assert kb.driver_runs_cuda("580.65.06", "13.0").status == "native"


def test_minor_version_compat_within_the_major():
    verdict = kb.driver_runs_cuda("525.85.12", "12.4")
    assert verdict.status == "minor_version_compat"
    assert verdict.needs_driver == "550.54.14"  # 12.4 GA, for full support
    assert verdict.mvc_floor == "525.60.13"
    assert "PTX" in verdict.message and "550.54.14" in verdict.message
    assert "MVC" in verdict.sources


def test_minor_version_compat_11x():
    verdict = kb.driver_runs_cuda("450.80.02", "11.8")
    assert verdict.status == "minor_version_compat"
    assert verdict.mvc_floor == "450.80.02"


def test_too_old_for_any_12x_reports_both_numbers():
    verdict = kb.driver_runs_cuda("470.256.02", "12.2")
    assert verdict.status == "too_old"
    assert verdict.needs_driver == "535.54.03"
    assert verdict.mvc_floor == "525.60.13"
    assert verdict.driver_max_cuda == "11.4"
    assert "535.54.03" in verdict.message and "525.60.13" in verdict.message and "11.4" in verdict.message


def test_575_cannot_run_13x():
    verdict = kb.driver_runs_cuda("575.57.08", "13.0")
    assert verdict.status == "too_old"
    assert verdict.mvc_floor == "580.65.06"
    assert verdict.driver_max_cuda == "12.9"


def test_10x_has_no_minor_version_compat():
    verdict = kb.driver_runs_cuda("410.48", "10.2")
    assert verdict.status == "too_old"
    assert verdict.needs_driver == "440.33"
    assert verdict.mvc_floor is None


def test_unconfirmed_toolkit_row_still_runs_under_mvc():
    verdict = kb.driver_runs_cuda("590.48.01", "13.4")
    assert verdict.status == "minor_version_compat"
    assert verdict.needs_driver is None
    assert "not in the table" in verdict.message


@pytest.mark.parametrize(
    ("driver", "cuda", "platform"),
    [
        ("junk", "12.2", "linux"),
        ("535.54.03", "abc", "linux"),
        ("535.54.03", "12.2", "amiga"),
        ("610.62", "13.0", "windows"),
        ("535.54.03", "9.0", "linux"),
    ],
)
def test_unknown(driver, cuda, platform):
    verdict = kb.driver_runs_cuda(driver, cuda, platform)
    assert verdict.status == "unknown"
    assert verdict.message


def test_verdict_to_dict_is_json_ready():
    import json

    data = kb.driver_runs_cuda("525.85.12", "12.4").to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["status"] == "minor_version_compat"


# --------------------------------------------------------------------------- GPU names

# Every GPU name in the real fixtures (A: XML product_name, C: table rows and -L, E: collect_env).
FIXTURE_NAMES = {
    "GeForce GTX 1070 Ti": "6.1",
    "GeForce GTX 780": "3.5",
    "Graphics Device": None,  # a board this old driver did not know
    "NVIDIA A100-SXM4-40GB": "8.0",
    "NVIDIA A100-SXM4-80GB": "8.0",
    "NVIDIA A10G": "8.6",
    "NVIDIA A40": "8.6",
    "NVIDIA GH200 480GB": "9.0",
    "NVIDIA GeForce ...": None,  # cut short by the old table layout: could be anything
    "NVIDIA GeForce GTX 1050": "6.1",
    "NVIDIA GeForce GTX 1050 Ti": "6.1",
    "NVIDIA GeForce RTX 2080": "7.5",
    "NVIDIA GeForce RTX 2080 ...": "7.5",  # 2080 / SUPER / Ti all 7.5
    "NVIDIA GeForce RTX 3060": "8.6",
    "NVIDIA GeForce RTX 3060 Laptop GPU": "8.6",
    "NVIDIA GeForce RTX 3080": "8.6",
    "NVIDIA GeForce RTX 3090": "8.6",
    "NVIDIA GeForce RTX 4080 ...": "8.9",
    "NVIDIA GeForce RTX 4080 Laptop GPU": "8.9",
    "NVIDIA GeForce RTX 4090": "8.9",
    "NVIDIA GeForce RTX 5090": "12.0",
    "NVIDIA GeForce RTX 5090 D": "12.0",
    "NVIDIA H100 80GB HBM3": "9.0",
    "NVIDIA H100 NVL": "9.0",
    "NVIDIA H20": "9.0",
    "NVIDIA H200": "9.0",
    "NVIDIA L4": "8.9",
    "NVIDIA L40S": "8.9",
    "NVIDIA RTX 4000 SFF Ada Generation": "8.9",
    "Quadro P2000": "6.1",
    "Quadro P400": "6.1",
    "Tesla P100-PCIE-12GB": "6.0",
    "Tesla P100-PCIE-16GB": "6.0",
    "Tesla T4": "7.5",
    "Tesla V100-PCIE-32GB": "7.0",
    "Tesla V100-SXM2-16GB": "7.0",
    "Tesla V100S-PCIE-32GB": "7.0",
}

_TABLE_ROW = re.compile(r"^\s*\|\s+\d+\s+(\S.*?)\s{2,}(?:On|Off|WDDM|TCC)\s")
_LIST_ROW = re.compile(r"GPU \d+: (NVIDIA [^\n(]+?|GeForce [^\n(]+?)\s*(?:\(UUID.*)?$", re.M)
_XML_NAME = re.compile(r"<product_name>([^<]*)</product_name>")


def _fixture_gpu_names() -> set[str]:
    names: set[str] = set()
    for path in fixture_files("A"):
        names.update(name.strip() for name in _XML_NAME.findall(read_fixture(path)))
    for path in fixture_files("C") + fixture_files("E"):
        text = read_fixture(path)
        for line in text.splitlines():
            match = _TABLE_ROW.match(line)
            if match:
                names.add(match.group(1).strip())
        names.update(name.strip() for name in _LIST_ROW.findall(text))
    return names


def test_every_fixture_gpu_name_is_expected(fixtures_dir):
    if not any((fixtures_dir / part).is_dir() for part in ("A", "C", "E")):
        pytest.skip(f"the nvidia-smi captures (A, C, E) are not in {fixtures_dir}")
    names = _fixture_gpu_names()
    assert names, "no GPU names found in the fixtures"
    assert names <= set(FIXTURE_NAMES), f"new GPU names in the fixtures: {sorted(names - set(FIXTURE_NAMES))}"


@pytest.mark.parametrize(("name", "cc"), sorted(FIXTURE_NAMES.items()))
def test_fixture_names_resolve(name, cc):
    result = kb.compute_capability_for_name(name)
    if cc is None:
        assert result is None
    else:
        assert result is not None, name
        assert result.compute_capability == cc
        assert result.architecture == kb.architecture_for_cc(cc)
        assert result.sources


@pytest.mark.parametrize(
    ("name", "cc", "arch"),
    [
        ("NVIDIA A10G", "8.6", "Ampere"),
        ("NVIDIA A10", "8.6", "Ampere"),
        ("NVIDIA A100-SXM4-80GB", "8.0", "Ampere"),  # "A10" must not answer for "A100"
        ("NVIDIA A100 80GB PCIe", "8.0", "Ampere"),
        ("NVIDIA A30", "8.0", "Ampere"),
        ("NVIDIA A2", "8.6", "Ampere"),
        ("NVIDIA RTX A2000 12GB", "8.6", "Ampere"),
        ("Quadro RTX 4000", "7.5", "Turing"),
        ("NVIDIA RTX 4000 SFF Ada Generation", "8.9", "Ada Lovelace"),
        ("NVIDIA RTX 4000 Ada Generation", "8.9", "Ada Lovelace"),
        ("NVIDIA RTX 6000 Ada Generation", "8.9", "Ada Lovelace"),
        ("Quadro RTX 6000", "7.5", "Turing"),
        ("NVIDIA RTX A6000", "8.6", "Ampere"),
        ("NVIDIA GeForce RTX 3060 Ti", "8.6", "Ampere"),
        ("NVIDIA GeForce GTX 1660", "7.5", "Turing"),
        ("NVIDIA GeForce GTX 1660 Ti", "7.5", "Turing"),
        ("NVIDIA GeForce GTX 1660 SUPER", "7.5", "Turing"),
        ("NVIDIA GeForce RTX 2080 SUPER", "7.5", "Turing"),
        ("NVIDIA GeForce RTX 4080 SUPER", "8.9", "Ada Lovelace"),
        ("NVIDIA GeForce GTX 1080 Ti", "6.1", "Pascal"),
        ("NVIDIA GeForce GTX 680", "3.0", "Kepler"),
        ("Tesla K80", "3.7", "Kepler"),
        ("NVIDIA TITAN X (Pascal)", "6.1", "Pascal"),
        ("GeForce GTX TITAN X", "5.2", "Maxwell"),
        ("NVIDIA TITAN Xp", "6.1", "Pascal"),
        ("NVIDIA T4", "7.5", "Turing"),
        ("NVIDIA H100 PCIe", "9.0", "Hopper"),
        ("NVIDIA H200 NVL", "9.0", "Hopper"),
        ("NVIDIA B200", "10.0", "Blackwell"),
        ("NVIDIA GB200", "10.0", "Blackwell"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "Blackwell"),
        ("nvidia geforce rtx 3090", "8.6", "Ampere"),
        ("RTX3090", "8.6", "Ampere"),
        ("NVIDIA Corporation GA106 [GeForce RTX 3060 Lite Hash Rate] (rev a1)", "8.6", "Ampere"),
        ("NVIDIA RTX 4000 SFF Ada ...", "8.9", "Ada Lovelace"),
    ],
)
def test_compute_capability_for_name(name, cc, arch):
    result = kb.compute_capability_for_name(name)
    assert result is not None, name
    assert (result.compute_capability, result.architecture) == (cc, arch)
    found_cc, found_arch = result  # unpacks like a (cc, architecture) pair
    assert (found_cc, found_arch) == (cc, arch)


@pytest.mark.parametrize(
    "name",
    [
        "Graphics Device",
        "NVIDIA Graphics Device",
        "NVIDIA GeForce ...",
        "NVIDIA GeForce RTX 4090 D",  # a suffix marks a different product; no sourced row
        "NVIDIA GeForce GTX 1650 Ti",  # not in the sourced tables
        "AMD Instinct MI300X",
        "",
        "   ",
        "...",
    ],
)
def test_unknown_names(name):
    assert kb.compute_capability_for_name(name) is None


def test_sources_and_secondary_flag():
    primary = kb.compute_capability_for_name("NVIDIA H100 80GB HBM3")
    assert "CC" in primary.sources and not primary.secondary_only
    secondary = kb.compute_capability_for_name("NVIDIA GeForce RTX 3060")
    assert secondary.secondary_only and secondary.note and "secondary" in secondary.note.lower()
    cut = kb.compute_capability_for_name("NVIDIA GeForce RTX 2080 ...")
    assert cut.truncated_name and "RTX 2080 SUPER" in cut.note
    assert kb.compute_capability_for_name("NVIDIA A10").to_dict()["compute_capability"] == "8.6"


@pytest.mark.parametrize(
    ("cc", "arch"),
    [
        ("8.6", "Ampere"),
        ("8.0", "Ampere"),
        ("8.9", "Ada Lovelace"),
        ("9.0", "Hopper"),
        ("12.0", "Blackwell"),
        ("10.3", "Blackwell"),
        ("7.5", "Turing"),
        ("7.0", "Volta"),
        ("6.1", "Pascal"),
        ("5.2", "Maxwell"),
        ("3.7", "Kepler"),
        ("sm_86", "Ampere"),
        ("sm_120", "Blackwell"),
        ("compute_90", "Hopper"),
        ("2.0", None),
        ("8.8", None),
        ("junk", None),
        ("", None),
    ],
)
def test_architecture_for_cc(cc, arch):
    assert kb.architecture_for_cc(cc) == arch


def test_kb_info_counts():
    info = kb.kb_info()
    assert info["driver_cuda"]["as_of"]
    assert info["driver_cuda"]["rows"]["toolkit_driver"] >= 59
    assert info["driver_cuda"]["rows"]["minor_version_compat"] == 3
    assert info["gpu_compute_capability"]["rows"]["gpus"] >= 150


def test_import_is_light_and_reads_no_data():
    code = (
        "import sys, gpudoctor.kb as kb\n"
        "assert kb._load.cache_info().currsize == 0\n"
        "assert 'packaging' not in sys.modules\n"
        "kb.max_cuda_for_driver('535.54.03')\n"
        "assert kb._load.cache_info().currsize == 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=60)


# --------------------------------------------------------------------------- never raises

_junk = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"\A\d{1,4}(\.\d{1,4}){0,3}\Z"),
    st.sampled_from(["cu128", "12.2.2", "535.54.03", "...", "NVIDIA GeForce ...", "sm_86"]),
)


@settings(max_examples=200, deadline=None)
@given(driver=_junk, cuda=_junk, platform=st.one_of(st.sampled_from(["linux", "windows", "wsl"]), st.text(max_size=8)))
def test_driver_lookups_never_raise(driver, cuda, platform):
    kb.parse_driver_version(driver)
    kb.parse_cuda_version(cuda)
    kb.max_cuda_for_driver(driver, platform)
    kb.min_driver_for_cuda(cuda, platform)
    verdict = kb.driver_runs_cuda(driver, cuda, platform)
    assert verdict.status in {"native", "minor_version_compat", "too_old", "unknown"}
    assert verdict.message


@settings(max_examples=300, deadline=None)
@given(
    name=st.one_of(
        st.text(max_size=60),
        st.builds(lambda a, b: f"NVIDIA {a} {b}", st.text(max_size=10), st.text(max_size=10)),
    )
)
def test_name_lookups_never_raise(name):
    result = kb.compute_capability_for_name(name)
    if result is not None:
        assert kb.architecture_for_cc(result.compute_capability) == result.architecture
    kb.architecture_for_cc(name)
    kb.normalize_gpu_name(name)


@settings(max_examples=50, deadline=None)
@given(value=st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.lists(st.integers(), max_size=2)))
def test_non_string_inputs_never_raise(value):
    assert kb.parse_driver_version(value) is None
    assert kb.max_cuda_for_driver(value) is None
    assert kb.min_driver_for_cuda(value) is None
    assert kb.compute_capability_for_name(value) is None
    assert kb.architecture_for_cc(value) is None
    kb.mvc_floor(value)
    assert kb.driver_runs_cuda(value, value, value).status == "unknown"
