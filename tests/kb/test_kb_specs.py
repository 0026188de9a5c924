"""The GPU spec sheets and PCIe rates of the knowledge base: lookups, the data's consistency, junk in."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor import kb
from gpudoctor.facts.lspci import parse_link_status
from gpudoctor.facts.nvidia_smi_text import parse_nvidia_smi_text
from gpudoctor.facts.nvidia_smi_xml import parse_nvidia_smi_xml
from gpudoctor.kb import describe
from tests.helpers.fixtures import (
    REPO,
    fixture_files,
    load_script,
    read_fixture,
    real_fixtures_dir,
    validate_broken_copy,
)
from tests.helpers.strategies import any_code_points, json_like

DATA = REPO / "gpudoctor" / "kb" / "data"
REFERENCE = REPO.parent / "shared" / "reference" / "compat.json"


kb_validate = load_script("kb_validate")
kb_refresh = load_script("kb_refresh")


# --------------------------------------------------------------------------- names as the tools print them


@pytest.mark.parametrize(
    ("name", "row"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM5"),  # nvidia-smi / torch for the SXM part
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H200", "H200 SXM"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("Tesla V100-SXM2-32GB", "V100 SXM2"),
        ("NVIDIA V100-SXM2-32GB", "V100 SXM2"),
        ("Tesla V100-PCIE-32GB", "V100 PCIe"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM4"),
        ("A100-SXM4-40GB", "A100 40GB SXM4"),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
        ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"),
        ("NVIDIA A10", "A10"),
        ("Tesla T4", "T4"),
        ("NVIDIA T4", "T4"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
        ("GeForce RTX 3090", "GeForce RTX 3090"),
        ("NVIDIA GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti"),
        ("GA102 [GeForce RTX 3090]", "GeForce RTX 3090"),  # lspci's description
        ("NVIDIA GeForce RTX 5090", "GeForce RTX 5090"),
        ("NVIDIA B200", "B200 (HGX/DGX)"),
        ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ],
)
def test_names_find_their_row(name, row):
    spec = kb.gpu_spec_for_name(name)
    assert spec is not None and spec.name == row


@pytest.mark.parametrize(
    "name",
    [
        "Tesla V100S-PCIE-32GB",  # V100S: faster than the V100, not in the table
        "NVIDIA H100 NVL",
        "NVIDIA H200 NVL",
        "NVIDIA GH200 480GB",
        "NVIDIA A10G",
        "NVIDIA A100X",
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA GeForce RTX 3090 Ti",
        "NVIDIA L40",
        "Tesla P100-PCIE-16GB",
        "NVIDIA GeForce ...",
        "NVIDIA H100 80GB HBM...",
        "Graphics Device",
        "",
        "   ",
        "NVIDIA",
    ],
)
def test_other_products_find_nothing(name):
    assert kb.gpu_spec_for_name(name) is None


def test_every_real_capture_name_resolves_or_is_a_product_the_table_lacks():
    names = set()
    for path in fixture_files("A"):
        names |= {g.name for g in parse_nvidia_smi_xml(read_fixture(path)).gpus if g.name}
    for path in fixture_files("C"):
        report = parse_nvidia_smi_text(read_fixture(path))
        names |= {g.name for g in report.gpus if g.name}
    if not names:
        pytest.skip("real nvidia-smi captures not found")
    found = {name: kb.gpu_spec_for_name(name) for name in names}
    assert found["NVIDIA H100 80GB HBM3"].name == "H100 SXM5"
    assert found["NVIDIA A100-SXM4-80GB"].name == "A100 80GB SXM4"
    assert found["Tesla V100-SXM2-16GB"].name == "V100 SXM2"
    assert found["NVIDIA L40S"].name == "L40S" and found["NVIDIA H200"].name == "H200 SXM"
    assert found["Tesla V100S-PCIE-32GB"] is None and found["NVIDIA H100 NVL"] is None
    # Every match is the product's own row: its compute capability agrees with the CC table's for that name.
    for name, spec in found.items():
        if spec is not None:
            assert kb.compute_capability_for_name(name).compute_capability == spec.compute_capability, name


# --------------------------------------------------------------------------- figures


def test_h100_sxm_sheet():
    spec = kb.gpu_spec_for_name("NVIDIA H100 80GB HBM3")
    assert (spec.fp32_tflops, spec.tf32_tflops, spec.fp16_tflops, spec.bf16_tflops) == (67.0, 494.7, 989.0, 989.0)
    assert spec.memory_bandwidth_gbs == 3350.0 and spec.memory_gb == (80.0,)
    assert (spec.pcie_gen, spec.pcie_width, spec.pcie_rate_gbps) == (5, 16, 63.0)
    assert spec.nvlink_gbps_per_direction == 450.0 == kb.nvlink_rate_gbps("NVIDIA H100 80GB HBM3")
    assert spec.architecture == "Hopper" and spec.compute_capability == "9.0"
    assert "CC" in spec.sources and not spec.secondary_only


def test_peaks_by_dtype():
    v100 = kb.gpu_spec_for_name("Tesla V100-SXM2-32GB")
    assert v100.peak_tflops("fp32") == 15.7
    assert v100.peak_tflops("tf32") == 15.7  # no TF32 before Ampere: a tf32 matmul runs as fp32
    assert v100.peak_tflops("fp16") == 125.0 and v100.peak_tflops("bf16") is None  # no BF16 on Volta
    assert v100.memory_gb == (16.0, 32.0)
    rtx = kb.gpu_spec_for_name("NVIDIA GeForce RTX 4090")
    assert rtx.peak_tflops("tf32") is None  # Ada has TF32; no checked source gives the figure
    assert rtx.peak_tflops("int8") is None and rtx.peak_tflops(None) is None
    assert kb.gpu_spec_for_name("NVIDIA L4").peak_tflops("TF32") == 60.0


def test_two_die_boards_are_per_device():
    k80 = kb.gpu_spec_for_name("Tesla K80")
    assert k80.devices_per_board == 2
    assert k80.fp32_tflops == pytest.approx(8.73 / 2) and k80.memory_bandwidth_gbs == 240.0
    assert k80.memory_gb == (12.0,) and "Per device" in k80.note


def test_no_nvlink_without_nvlink():
    assert kb.nvlink_rate_gbps(kb.gpu_spec_for_name("NVIDIA L40S")) is None
    assert kb.nvlink_rate_gbps("no such GPU") is None and kb.nvlink_rate_gbps(42) is None


@pytest.mark.parametrize(
    ("gen", "width", "rate"),
    [
        (1, 16, 4.0),
        (2, 16, 8.0),
        (3, 16, 15.75),
        (4, 16, 31.5),
        (5, 16, 63.0),
        (6, 16, 121.0),
        (3, 8, 7.875),
        (1, 4, 1.0),
        (4, 1, 1.9688),
        ("Gen4", "16x", 31.5),
        ("4.0", "x16", 31.5),
        (4.0, 16, 31.5),
    ],
)
def test_pcie_rates(gen, width, rate):
    assert kb.pcie_rate_gbps(gen, width) == pytest.approx(rate)


@pytest.mark.parametrize(
    ("gen", "width"),
    [
        (7, 16),
        (0, 16),
        (4, 0),
        (4, 64),
        (None, 16),
        (4, None),
        (True, 16),
        ("fast", 16),
        (4.5, 16),
        (float("nan"), 16),
        ([4], 16),
    ],
)
def test_pcie_rate_unknowns(gen, width):
    assert kb.pcie_rate_gbps(gen, width) is None


def test_pcie_generation_from_link_speeds():
    assert [
        kb.pcie_gen_for_speed(s)
        for s in (
            "2.5 GT/s PCIe",
            "5.0 GT/s PCIe",
            "8.0 GT/s PCIe",
            "16.0 GT/s PCIe",
            "32.0 GT/s PCIe",
            "64.0 GT/s PCIe",
        )
    ] == [1, 2, 3, 4, 5, 6]
    assert kb.pcie_gen_for_speed("Unknown") is None and kb.pcie_gen_for_speed("12 GT/s") is None
    path = real_fixtures_dir() / "D" / "lspci-lnkcap-lnksta-rtx4090-riser-downgraded-2.5GTs-jan-183.txt"
    if path.is_file():
        link = parse_link_status(read_fixture(path))
        assert kb.pcie_gen_for_speed(link["sta_speed_gts"]) == 1 and kb.pcie_gen_for_speed(link["cap_speed_gts"]) == 4


@given(json_like() | any_code_points())
def test_lookups_take_anything(value):
    assert kb.gpu_spec_for_name(value) is None or isinstance(kb.gpu_spec_for_name(value), kb.GpuSpec)
    rate = kb.pcie_rate_gbps(value, value)
    assert rate is None or rate > 0
    assert kb.pcie_gen_for_speed(value) in (None, 1, 2, 3, 4, 5, 6)
    assert kb.nvlink_rate_gbps(value) is None or kb.nvlink_rate_gbps(value) > 0


@given(st.text(alphabet="NVIDIA GeForce RTX H100 A100 80GB HBM3 SXM4 PCIe -_[]()Ti.", max_size=40))
def test_name_like_text_never_raises(name):
    spec = kb.gpu_spec_for_name(name)
    assert spec is None or spec.fp32_tflops is None or spec.fp32_tflops > 0


# --------------------------------------------------------------------------- the data files


def test_validator_passes_the_shipped_files():
    assert kb_validate.validate() == []


def _row(data, gpu):
    return next(row for row in data["gpus"] if row["gpu"] == gpu)


@pytest.mark.parametrize(
    ("filename", "change", "words"),
    [
        ("gpu_specs.json", lambda d: _row(d, "L4").update(sources=[]), "'L4': no sources"),
        ("gpu_specs.json", lambda d: _row(d, "L4").update(fp32_tflops=-1), "fp32_tflops -1 is not a positive number"),
        ("gpu_specs.json", lambda d: _row(d, "L4").update(names=["NVIDIA L40S"]), "is also a name of"),
        ("gpu_specs.json", lambda d: _row(d, "L4").update(pcie_gen=9), "PCIe Gen 9 is not in pcie.json"),
        ("gpu_specs.json", lambda d: _row(d, "L4").update(compute_capability="9.0"), "but 9.0 is 'Hopper'"),
        ("gpu_specs.json", lambda d: _row(d, "L4").update(tf32_sources=[]), "tf32_sources missing"),
        ("gpu_specs.json", lambda d: _row(d, "A10").update(names=["NVIDIA GeForce"]), "has no tokens"),
        ("gpu_specs.json", lambda d: _row(d, "A10").update(names="NVIDIA A10"), "names is not a list of names"),
        ("pcie.json", lambda d: d["rows"][2].update(x16_gb_s_per_dir=20.0), "is not 16 lanes of"),
        ("pcie.json", lambda d: d["rows"].append(dict(d["rows"][0])), "duplicate generation"),
        ("nvlink.json", lambda d: d["rows"][3].update(links_per_gpu=12), "12 links x 50.0 GB/s is not the GPU's 900.0"),
        ("nvlink.json", lambda d: d["rows"].reverse(), "ascending order"),
        ("nvlink.json", lambda d: d["rows"][0].update(sources=["NOPE"]), "NOPE"),
    ],
)
def test_validator_catches_broken_copies(tmp_path, filename, change, words):
    errors = validate_broken_copy(tmp_path, filename, change)
    assert any(words in error for error in errors), errors


def test_refresh_generates_the_shipped_spec_files():
    if not REFERENCE.is_file():
        pytest.skip(f"shared reference not found at {REFERENCE}")
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for filename, build in (("gpu_specs.json", kb_refresh.build_gpu_specs), ("pcie.json", kb_refresh.build_pcie)):
        assert json.loads((DATA / filename).read_text(encoding="utf-8")) == build(reference), filename
    rows = {row["gpu"]: row for row in reference["table6_gpu_specs"]["gpus"]}
    assert set(kb_refresh.SPEC_NAMES) == set(rows)  # every reference row has its names
    assert set(kb_refresh.TF32_DENSE) <= set(rows)


def test_every_spec_and_pcie_row_cites_a_known_source():
    for filename, table in (("gpu_specs.json", "gpus"), ("pcie.json", "rows")):
        data = json.loads((DATA / filename).read_text(encoding="utf-8"))
        for row in data[table]:
            keys = row["sources"] + row.get("tf32_sources", [])
            assert keys and all(key in data["sources"] for key in keys), row


def test_kb_topics_and_info():
    info = kb.kb_info()
    assert info["gpu_specs"]["rows"]["gpus"] >= 20 and info["pcie"]["rows"]["generations"] == 6
    specs = describe.render_kb_text(topic="specs")
    assert "H100 SXM5" in specs and "494.7" in specs and "Sources:" in specs and "DS_A100" in specs
    assert describe.render_kb_text(topic="gpu-specs") == specs
    pcie = describe.render_kb_text(topic="pcie")
    assert "128b/130b" in pcie and "15.75" in pcie and "PCIE_WIKI" in pcie


@pytest.mark.parametrize(
    ("name", "links"),
    [
        ("NVIDIA H100 80GB HBM3", 18),
        ("NVIDIA H200", 18),
        ("NVIDIA A100-SXM4-80GB", 12),
        ("Tesla V100-SXM2-32GB", 6),
        ("NVIDIA B200", 18),
        ("NVIDIA H100 PCIe", None),
        ("NVIDIA GeForce RTX 4090", None),
        ("no such GPU", None),
        (None, None),
        (42, None),
    ],
)
def test_expected_nvlinks_from_the_spec_sheet_and_the_generation(name, links):
    from gpudoctor.kb.gpu_specs import expected_nvlinks

    assert expected_nvlinks(name) == links
