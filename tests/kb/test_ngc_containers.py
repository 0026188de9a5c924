"""The NGC container table: every row sourced, and the release that fits a driver."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.kb import ngc_containers
from gpudoctor.kb.describe_ngc import ngc_item, ngc_table
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.ngc_containers import forward_compat_branch, newest_release_for_driver, ngc_release
from tests.helpers.strategies import json_like


def _raw() -> dict:
    text = resources.files("gpudoctor.kb").joinpath("data").joinpath("ngc_containers.json").read_text("utf-8")
    return json.loads(text)


def test_every_row_has_a_source_and_parses():
    data = _raw()
    assert data["_meta"]["as_of"] and data["_meta"]["sources"]
    rows = data["releases"]
    for row in rows:
        assert row["source"].startswith("https://"), row
        assert set(row["sources"]) <= set(data["sources"]), row
    # Every row reads into the table (none silently dropped).
    assert len(ngc_containers.ngc_releases()) == len(rows)


def test_image_tag():
    row = ngc_release("pytorch", "24.06")
    assert row is not None and row.image == "nvcr.io/nvidia/pytorch:24.06-py3"
    assert (row.cuda, row.driver) == ("12.5.0.23", "545")


@pytest.mark.parametrize(
    ("driver", "release"),
    [
        ("525.85.12", "23.02"),  # the banner case: built for 545.23, host 525 -> an older tag that fits
        ("535.104.05", "23.08"),
        ("550.54.14", "24.06"),
        ("580.95.05", "24.10"),
        ("590.48.01", "25.12"),  # 25.12's requirement is CUDA 13.1's Table 3 minimum (590.44.01)
        ("450.51.06", "20.06"),
        ("440.33.01", "20.02"),
        ("510.85.02", "21.11"),  # R510: 21.11 (CUDA 11.5.0, driver 495) is the newest that needs no newer driver
        ("470.199.02", "21.10"),  # 21.09 and 21.10 both need 470: the newer wins
        ("465.19.01", "21.06"),
        ("460.32.03", "21.02"),
        ("455.45.01", "20.10"),
    ],
)
def test_newest_release_for_driver(driver, release):
    row = newest_release_for_driver("pytorch", driver)
    assert row is not None and row.release == release


@pytest.mark.parametrize(
    ("driver", "release"),
    [
        ("580.95.05", "23.01"),
        ("520.61.05", "22.10"),
        ("470.82.01", "21.10"),
        ("455.23.05", "20.10"),
        ("418.67", "19.02"),
        ("384.183", None),
    ],
)
def test_newest_tensorflow_release_for_driver(driver, release):
    row = newest_release_for_driver("tensorflow", driver)
    assert (row.release if row else None) == release


def test_tensorflow_images_carry_their_tf2_tag():
    # From 20.06 on the notes name "<release>-tf1-py3" and "<release>-tf2-py3"; before, "<release>-py3".
    rows = [r for r in ngc_containers.ngc_releases() if r.product == "tensorflow"]
    assert len(rows) >= 12
    for row in rows:
        suffix = "-tf2-py3" if row.release >= "20.06" else "-py3"
        assert row.image == f"nvcr.io/nvidia/tensorflow:{row.release}{suffix}", row
    assert ngc_release("tensorflow", "23.01").image == "nvcr.io/nvidia/tensorflow:23.01-tf2-py3"


def test_sibling_rows_say_so_and_agree_with_tensorflow_of_the_same_month():
    # PyTorch 20.10-21.11 come from the DLProf notes of the same release; where the TensorFlow notes of that month
    # were read too, CUDA and driver must match (the monthly release shares its CUDA across the containers).
    siblings = [r for r in ngc_containers.ngc_releases() if r.confidence == "sibling"]
    assert {r.release for r in siblings} == {"20.10", "21.04", "21.06", "21.09", "21.10", "21.11"}
    for row in siblings:
        assert row.product == "pytorch" and "dlprof-release-notes" in row.source
        same_month = ngc_release("tensorflow", row.release)
        if same_month is not None:
            assert (same_month.cuda, same_month.driver) == (row.cuda, row.driver), row.release
    assert "component shipped" in "\n".join(ngc_item("21.10"))


def test_every_row_has_a_known_confidence_and_quote():
    for raw in _raw()["releases"]:
        assert raw["confidence"] in {"primary", "secondary", "sibling"}, raw
        assert raw.get("quote"), raw


def test_a_bad_tag_falls_back_to_the_default_synthetic():
    # SYNTHETIC rows: a tag that is not a plain Docker tag of the row's release never reaches the image name
    # (it ends up in a `docker pull` line).
    base = {"product": "tensorflow", "release": "23.01", "cuda": "12.0.1", "driver": "525"}
    for bad in ["23.01-tf2-py3; rm -rf /", "22.12-tf2-py3", "23.01", "", 5, "23.01-" + "x" * 80]:
        row = ngc_containers._row({**base, "tag": bad})
        assert row is not None and row.image == "nvcr.io/nvidia/tensorflow:23.01-py3", bad
    assert ngc_containers._row({**base, "tag": "23.01-tf1-py3"}).image.endswith(":23.01-tf1-py3")


def test_no_release_for_a_driver_older_than_every_row():
    assert newest_release_for_driver("pytorch", "410.48") is None
    assert newest_release_for_driver("tensorflow", "384.183") is None
    assert newest_release_for_driver("jax", "580.95.05") is None  # no JAX release notes could be sourced


def test_derived_driver_is_marked():
    row = ngc_release("pytorch", "25.12")
    assert row is not None and row.driver_derived and row.driver.startswith("590.")
    assert not ngc_release("pytorch", "24.06").driver_derived


def test_forward_compat_branch():
    row = ngc_release("pytorch", "24.06")
    assert forward_compat_branch(row, "535.104.05") == "535.86"
    assert forward_compat_branch(row, "535.54.03") is None  # older than the R535 release it lists
    assert forward_compat_branch(row, "530.30.02") is None  # a branch it does not list


def test_kb_ngc_view():
    text = "\n".join(ngc_table())
    assert "nvcr.io/nvidia/pytorch:24.06-py3" in text and "Sources:" in text
    item = "\n".join(ngc_item("24.06"))
    assert "545 or newer" in item and "rel-24-06.html" in item
    with pytest.raises(KnowledgeError):
        ngc_item("99.13")


@given(json_like())
def test_row_parser_takes_garbage(raw):
    row = ngc_containers._row(raw)
    assert row is None or isinstance(row, ngc_containers.NgcRelease)


@given(st.text(max_size=30), st.text(max_size=30))
def test_lookups_never_raise(product, text):
    newest_release_for_driver(product, text)
    ngc_release(product, text)
    for row in ngc_containers.ngc_releases()[:2]:
        forward_compat_branch(row, text)
