"""AMD gfx targets: family, ROCm support per release, PyTorch's wheel targets, HSA_OVERRIDE_GFX_VERSION."""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.kb import rocm_targets as T

DATA = json.loads(
    (pathlib.Path(T.__file__).parent / "data" / T.TARGETS_FILE).read_text(encoding="utf-8")
)  # the file as stored


def test_every_row_names_sources_the_file_defines() -> None:
    sources = DATA["sources"]
    assert all(isinstance(entry.get("url"), str) and entry["url"].startswith("https://") for entry in sources.values())
    rows = [*DATA["targets"], *DATA["rocm_support"], DATA["torch_wheels"], *DATA["overrides"]]
    for row in rows:
        assert row["sources"] and set(row["sources"]) <= set(sources), row
    assert len({row["gfx"] for row in DATA["targets"]}) == len(DATA["targets"])


@pytest.mark.parametrize(
    ("gfx", "family"),
    [
        ("gfx942", "CDNA3"),
        ("gfx90a:sramecc+:xnack-", "CDNA2"),
        ("gfx908", "CDNA"),
        ("gfx906", "GCN5.1"),
        ("gfx900", "GCN5.0"),
        ("gfx1100", "RDNA3"),
        ("gfx1103", "RDNA3"),
        ("gfx1031", "RDNA2"),
        ("gfx1032", "RDNA2"),
        ("gfx1201", "RDNA4"),
        ("gfx950", "CDNA4"),
        ("gfx1151", "RDNA3.5"),
        ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)", "CDNA3"),  # as collect_env prints it
        ("gfx9999", None),
        ("MI300X", None),
    ],
)
def test_target_family(gfx: str, family: str | None) -> None:
    assert T.target_family(gfx) == family


def test_products_come_with_their_target() -> None:
    assert "Instinct MI210" in T.target_products("gfx90a")
    assert "Radeon RX 7900 XTX" in T.target_products("gfx1100")
    assert T.target_products("gfx1") == ()


@pytest.mark.parametrize(
    ("gfx", "version", "status"),
    [
        ("gfx942", "6.2.2", "supported"),
        ("gfx90a", "6.2.41133-dd7f95766", "supported"),  # the HIP build string collect_env prints
        ("gfx906", "6.2", "deprecated"),
        ("gfx900", "rocm6.2.4", "unsupported"),
        ("gfx1031", "6.2.2", "not listed"),  # the 6.2.2 table is complete: left out means not supported there
        ("gfx1201", "6.4.1", "supported"),
        ("gfx1031", "6.4.1", None),  # only RX 9000 was read from 6.4.1's table
        ("gfx90a", "6.1.3", None),  # no table of the 6.1 series read
        ("gfx90a", "garbage", None),
    ],
)
def test_support_in_rocm(gfx: str, version: str, status: str | None) -> None:
    assert T.support_in_rocm(gfx, version) == status


def test_torch_wheel_targets_follow_the_build_script() -> None:
    # [P_MW]: the common list for every ROCm build, gfx900/gfx906 added on the rocm/dev-almalinux-8 images.
    assert T.in_torch_wheels("gfx942") is True
    assert T.in_torch_wheels("gfx1032") is False
    assert T.in_torch_wheels("gfx1031:xnack-", "rocm7.2") is False
    assert T.in_torch_wheels("gfx906", "rocm7.1") is True
    assert T.in_torch_wheels("gfx906", "rocm7.14") is False  # TheRock builds: the common list only
    assert T.in_torch_wheels("gfx1201", "7.14") is True
    assert T.in_torch_wheels("gfx90a", "rocm6.2") is None  # older wheels: not in this snapshot
    assert T.in_torch_wheels("not-a-gpu") is None


@pytest.mark.parametrize(
    ("gfx", "value"),
    [
        ("gfx1031", "10.3.0"),  # RX 6700 XT [TELEGRAF_RSMI]
        ("gfx1032", "10.3.0"),  # [ROCM_1797]
        ("gfx1101", "11.0.0"),
        ("gfx1030", None),  # already the target the override names
        ("gfx1100", None),
        ("gfx90a", None),
        ("gfx1012", None),  # RDNA1: 10.3.0 crosses families [ROCM_BUILD_35]
        (None, None),
    ],
)
def test_override_for(gfx: str | None, value: str | None) -> None:
    assert T.override_for(gfx) == value


@pytest.mark.parametrize(
    ("value", "target"),
    [("10.3.0", "gfx1030"), ("11.0.0", "gfx1100"), ("9.0.10", "gfx90a"), ("9.4.2", "gfx942"), (" 11.0.1 ", "gfx1101")],
)
def test_override_target_decodes(value: str, target: str) -> None:
    assert T.override_target(value) == target


@pytest.mark.parametrize("value", ["", "10.3", "10.3.0.1", "gfx1030", "abc", "10.3.99", "1.0.0", None, 10.3])
def test_override_target_rejects_junk(value: object) -> None:
    assert T.override_target(value) is None


def test_same_family() -> None:
    assert T.same_family("gfx1032", T.override_target("10.3.0")) is True
    assert T.same_family("gfx1012", T.override_target("10.3.0")) is False
    assert T.same_family("gfx9999", "gfx1030") is None


@given(st.one_of(st.text(max_size=300), st.none(), st.integers(), st.floats()))
def test_lookups_never_raise(value: object) -> None:
    T.normalize_gfx(value)
    T.target_family(value)
    T.override_target(value)
    T.override_for(value)
    T.support_in_rocm(value, value)
    T.in_torch_wheels(value, value if isinstance(value, str) else None)


# ------------------------------------------------------------------ AMD spec rows (gpu_specs_amd.json)


def test_amd_spec_rows_pass_the_spec_validator() -> None:
    # The same validator `scripts/kb_validate.py` runs on gpu_specs.json, over the merged table.
    from tests.helpers.fixtures import load_script

    load_script("kb_validate")
    from kbtools.validate.gpu_specs import check_specs_file

    from gpudoctor.kb.gpu_spec_tables import spec_data
    from gpudoctor.kb.loading import _pcie_data

    errors: list[str] = []
    check_specs_file(spec_data(), {}, {row["gen"] for row in _pcie_data()["rows"]}, errors)
    assert errors == []


@pytest.mark.parametrize(
    ("name", "row", "fp16", "bandwidth"),
    [
        ("AMD Instinct MI210", "AMD Instinct MI210", 181.0, 1600.0),  # amd-smi market name (fixture G-amd dme-…)
        ("AMD Instinct MI300X OAM", "AMD Instinct MI300X", 1307.0, 5300.0),  # rocm-smi card series
        ("AMD Instinct MI300X", "AMD Instinct MI300X", 1307.0, 5300.0),  # rocminfo marketing name
        ("AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX", 123.0, 960.0),
        ("AMD Instinct MI100", "AMD Instinct MI100", 184.6, 1228.0),
        ("AMD Instinct MI350X", "AMD Instinct MI350X", None, 8000.0),
    ],
)
def test_amd_gpu_names_find_their_spec_rows(name: str, row: str, fp16: float | None, bandwidth: float) -> None:
    from gpudoctor.kb.gpu_specs import gpu_spec_for_name

    spec = gpu_spec_for_name(name)
    assert spec is not None and spec.name == row
    assert spec.peak_tflops("fp16") == fp16 and spec.memory_bandwidth_gbs == bandwidth


def test_amd_spec_rows_survive_a_refresh_of_the_compiled_table() -> None:
    # kb_refresh rewrites gpu_specs.json only; the AMD rows live in their own file and are merged on load.
    compiled = json.loads((pathlib.Path(T.__file__).parent / "data" / "gpu_specs.json").read_text(encoding="utf-8"))
    assert not any(row["gpu"] == "AMD Instinct MI210" for row in compiled["gpus"])
    from gpudoctor.kb.gpu_specs import gpu_spec_for_name

    assert gpu_spec_for_name("AMD Radeon Pro W7900 Dual Slot") is None  # another product: strict matching holds
    mi210 = gpu_spec_for_name("AMD Instinct MI210")
    assert mi210 is not None and mi210.secondary_only
