"""PyTorch's ROCm wheel indexes (kb/rocm_wheels) and the index chosen for each ROCm release.

Expected values are copied by hand from shared/reference/accelerators.md §1c [P_TI] (the table of
``ROCM_ARCHES_DICT["release"]`` per torch release), not read from the data file under test.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.kb.rocm_wheels import (
    all_variants,
    index_url,
    newest_variant_for,
    rocm_key,
    rocm_variants,
    rocm_wheel_releases,
)
from tests.helpers.fixtures import REPO

DATA = REPO / "gpudoctor" / "kb" / "data" / "rocm_wheels.json"

# accelerators.md §1c, row by row.
REFERENCE_TABLE = {
    "2.0": ("rocm5.3", "rocm5.4.2"),
    "2.1": ("rocm5.5", "rocm5.6"),
    "2.2": ("rocm5.6", "rocm5.7"),
    "2.3": ("rocm5.7", "rocm6.0"),
    "2.4": ("rocm6.0", "rocm6.1"),
    "2.5": ("rocm6.1", "rocm6.2"),
    "2.6": ("rocm6.1", "rocm6.2.4"),
    "2.7": ("rocm6.2.4", "rocm6.3"),
    "2.8": ("rocm6.3", "rocm6.4"),
    "2.9": ("rocm6.3", "rocm6.4"),
    "2.10": ("rocm7.0", "rocm7.1"),
    "2.11": ("rocm7.1", "rocm7.2"),
    "2.12": ("rocm7.1", "rocm7.2"),
    "2.13": ("rocm7.1", "rocm7.2"),
    "2.14": ("rocm7.1", "rocm7.2"),  # candidate
}

# Each ROCm release that has a wheel index, and the newest released torch (2.14 is a candidate) publishing it.
NEWEST_TORCH_FOR_ROCM = {
    "5.3": "2.0",
    "5.4.2": "2.0",
    "5.5": "2.1",
    "5.6": "2.2",
    "5.7": "2.3",
    "6.0": "2.4",
    "6.1": "2.6",
    "6.2": "2.5",
    "6.2.4": "2.7",
    "6.3": "2.9",
    "6.4": "2.9",
    "7.0": "2.10",
    "7.1": "2.13",
    "7.2": "2.13",
}


def test_data_matches_the_reference_table_and_every_row_is_sourced():
    releases = {release.torch: release for release in rocm_wheel_releases()}
    assert {torch: release.variants for torch, release in releases.items()} == REFERENCE_TABLE
    assert [r.torch for r in rocm_wheel_releases() if r.candidate] == ["2.14"]
    data = json.loads(DATA.read_text(encoding="utf-8"))
    for row in data["releases"]:
        assert row["sources"] and all(source.split("@")[0] in data["sources"] for source in row["sources"])


def test_every_rocm_release_of_the_table_is_covered():
    assert {variant.removeprefix("rocm") for variant in all_variants()} == set(NEWEST_TORCH_FOR_ROCM)


@pytest.mark.parametrize(("rocm", "torch"), sorted(NEWEST_TORCH_FOR_ROCM.items()))
def test_the_rocm_torch_index_chosen_for_each_supported_rocm_release(rocm, torch):
    choice = newest_variant_for(rocm)
    assert choice == (torch, f"rocm{rocm}")
    chosen_torch, variant = choice
    assert index_url(variant) == f"https://download.pytorch.org/whl/rocm{rocm}"
    assert variant in rocm_variants(chosen_torch) and variant in REFERENCE_TABLE[chosen_torch]


@pytest.mark.parametrize(
    ("installed", "expected"),
    [
        ("6.2.2", ("2.5", "rocm6.2")),  # rocm6.2.4 would be newer than the installed ROCm
        ("6.2.2-116", ("2.5", "rocm6.2")),  # /opt/rocm/.info/version spelling
        ("6.2.4", ("2.7", "rocm6.2.4")),
        ("6.4.1", ("2.9", "rocm6.4")),
        ("7.0.2", ("2.10", "rocm7.0")),
        ("7.2.1", ("2.13", "rocm7.2")),
        ("9.0", ("2.13", "rocm7.2")),
        (None, ("2.13", "rocm7.2")),
        ("5.2.3", None),  # older than every published wheel
        ("not a version", None),
    ],
)
def test_newest_variant_not_newer_than_the_installed_rocm(installed, expected):
    assert newest_variant_for(installed) == expected


def test_a_pinned_torch_release_chooses_among_its_own_variants():
    assert newest_variant_for("6.2.2", "2.6.0+rocm6.1") == ("2.6", "rocm6.1")
    assert newest_variant_for("7.2", "2.14") == ("2.14", "rocm7.2")  # a candidate only when asked for
    assert newest_variant_for("6.0", "2.6") is None
    assert newest_variant_for("6.4", "1.13") is None


def test_unknown_torch_release_has_no_variants():
    assert rocm_variants("1.13") == () and rocm_variants("2.6.0+rocm6.2.4") == ("rocm6.1", "rocm6.2.4")


@given(st.one_of(st.none(), st.text(max_size=200)), st.one_of(st.none(), st.text(max_size=40)))
def test_lookups_never_raise_on_garbage(rocm, torch):
    newest_variant_for(rocm, torch)
    rocm_key(rocm)
    rocm_variants(torch or "")
