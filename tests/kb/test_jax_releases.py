"""The JAX release table (``jax.releases`` in python_gpu_packages.json) and ``choose_jax``, which pins what the
Dockerfile and install-script generators install.

Expected rows are what the package index said when ``scripts/jax_releases_refresh.py`` read it (2026-11-24):
jax 0.7.0 and 0.7.1 declare a ``cuda13`` extra but jax-cuda13-plugin starts at 0.7.2; jax 0.4.37 pins jaxlib
0.4.36; 0.11.0 raised the floor to Python 3.12.  The requirement strings in the refresh-script tests are copied
from real ``pip install --dry-run --report`` output of those releases.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.kb.jax_releases import choose_jax, jax_release, jax_releases, jax_releases_matching
from tests.helpers.fixtures import REPO, load_script

DATA = REPO / "gpudoctor" / "kb" / "data" / "python_gpu_packages.json"
refresh = load_script("jax_releases_refresh")

NEW_DRIVER = "580.65.06"  # runs jax[cuda13]
CUDA12_DRIVER = "570.124.06"  # runs jax[cuda12] only


def test_table_is_newest_first_and_every_row_is_pinned_and_sourced():
    releases = jax_releases()
    assert len(releases) >= 30 and releases[0].version == "0.12.0.1" and releases[-1].version == "0.4.30"
    keys = [tuple(int(p) for p in r.version.split(".")) for r in releases]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    for release in releases:
        assert release.sources == ("JAX_PYPI",) and release.python_min and release.python_max and release.extras


@pytest.mark.parametrize(
    ("version", "extras", "python", "jaxlib"),
    [
        ("0.4.30", ("cuda12",), ("3.9", "3.12"), "0.4.30"),
        ("0.4.37", ("cuda12",), ("3.10", "3.13"), "0.4.36"),
        ("0.7.0", ("cuda12",), ("3.11", "3.13"), "0.7.0"),  # declares cuda13; no plugin wheel for it
        ("0.7.1", ("cuda12",), ("3.11", "3.14"), "0.7.1"),
        ("0.7.2", ("cuda12", "cuda13"), ("3.11", "3.14"), "0.7.2"),
        ("0.11.0", ("cuda12", "cuda13"), ("3.12", "3.14"), "0.11.0"),
    ],
)
def test_rows_say_what_the_index_said(version, extras, python, jaxlib):
    release = jax_release(version)
    assert release is not None and release.version == version
    assert release.extras == extras and (release.python_min, release.python_max) == python
    assert release.jaxlib == jaxlib


def test_a_series_means_its_newest_release_that_fits():
    assert [r.version for r in jax_releases_matching("0.9")] == ["0.9.2", "0.9.1", "0.9.0.1", "0.9.0"]
    assert jax_release("0.9").version == "0.9.2"
    assert jax_release("0.9.0").version == "0.9.0"  # exact beats the 0.9.0.x series
    # Python 3.9: the newest 0.4.x that has wheels for it is 0.4.30, not 0.4.38.
    choice = choose_jax(driver_version=NEW_DRIVER, python_version="3.9", jax_version="0.4")
    assert choice.status == "ok" and choice.requirement == "jax[cuda12]==0.4.30"


def test_newest_release_with_the_newest_extra_the_driver_runs():
    choice = choose_jax(driver_version=NEW_DRIVER, python_version="3.12", compute_capabilities=("9.0",))
    assert choice.status == "ok" and choice.requirement == "jax[cuda13]==0.12.0.1" and choice.python_note is None
    older = choose_jax(driver_version=CUDA12_DRIVER, python_version="3.12", compute_capabilities=("9.0",))
    assert older.requirement == "jax[cuda12]==0.12.0.1"
    assert "needs 525.60.13" in " ".join(older.reasons)


def test_a_gpu_below_cuda13s_minimum_gets_cuda12_even_on_a_new_driver():
    # jax[cuda13] needs compute capability 7.5; a V100 (7.0) stays on the CUDA 12 wheels.
    choice = choose_jax(driver_version=NEW_DRIVER, python_version="3.12", compute_capabilities=("7.0",))
    assert choice.requirement == "jax[cuda12]==0.12.0.1"


def test_python_holds_the_release_back_and_says_so():
    choice = choose_jax(driver_version=NEW_DRIVER, python_version="3.10")
    assert choice.requirement == "jax[cuda12]==0.6.2"  # 0.7.0 needs 3.11; 0.6.x has no cuda13 wheels
    assert "Python 3.10" in choice.python_note and "holds you at 0.6.2" in choice.python_note
    assert choose_jax(driver_version=NEW_DRIVER, python_version="3.11").requirement == "jax[cuda13]==0.10.2"


def test_asked_release_keeps_its_own_extra():
    choice = choose_jax(
        driver_version=NEW_DRIVER, python_version="3.12", jax_version="0.7.1", compute_capabilities=("9.0",)
    )
    assert choice.requirement == "jax[cuda12]==0.7.1"  # 0.7.1 has no cuda13 wheels, cuda12 runs on 580 too


def test_refusals_say_why():
    old = choose_jax(driver_version="470.256.02", python_version="3.12")
    assert old.status == "no_wheel" and old.upgrade_driver_to == "525.60.13"
    unknown = choose_jax(driver_version=NEW_DRIVER, python_version="3.12", jax_version="0.3.25")
    assert unknown.status == "no_wheel" and "not a release" in unknown.reasons[0]
    too_old_python = choose_jax(driver_version=NEW_DRIVER, python_version="3.8")
    assert too_old_python.status == "no_wheel" and too_old_python.python_note == "JAX needs Python 3.9-3.15"
    asked_python = choose_jax(driver_version=NEW_DRIVER, python_version="3.13", jax_version="0.4.30")
    assert asked_python.status == "no_wheel" and asked_python.python_note == "JAX 0.4.30 needs Python 3.9-3.12"
    no_driver = choose_jax(driver_version=None, python_version="3.12")
    assert no_driver.status == "no_wheel" and "depends on the host driver" in no_driver.reasons[0]


def test_cpu_build_is_plain_jax_pinned():
    choice = choose_jax(driver_version=None, python_version="3.11", cpu=True)
    assert choice.status == "ok" and choice.requirement == "jax==0.10.2" and choice.extra is None


_junk = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.integers(),
    st.floats(allow_nan=True),
    st.booleans(),
    st.from_regex(r"\A\d{1,3}(\.\d{1,3}){0,3}\Z"),
)


@settings(max_examples=200, deadline=None)
@given(driver=_junk, python=_junk, version=_junk, os=_junk, ccs=st.lists(_junk, max_size=3), cpu=st.booleans())
def test_choose_jax_takes_garbage_without_raising(driver, python, version, os, ccs, cpu):
    choice = choose_jax(
        driver_version=driver, python_version=python, jax_version=version, os=os, compute_capabilities=ccs, cpu=cpu
    )
    assert choice.status in ("ok", "no_wheel")
    if choice.status == "ok":
        assert choice.requirement and choice.requirement.endswith(f"=={choice.version}")
    jax_release(version)
    jax_releases_matching(version)


# --------------------------------------------------------------------------- the refresh script's readers

# Real Requires-Dist lines of jax 0.4.30, 0.4.37 and 0.10.2 as pip's report gave them: the older metadata spaces
# the specifier and quotes the extra with ', later releases with ".
REQUIRES_0_4_30 = [
    "jaxlib ==0.4.30 ; extra == 'cuda12'",
    "jax-cuda12-plugin[with_cuda] <=0.4.30,>=0.4.30 ; extra == 'cuda12'",
]
REQUIRES_0_4_37 = [
    'jaxlib==0.4.36; extra == "cuda12"',
    'jax-cuda12-plugin[with_cuda]<=0.4.37,>=0.4.36; extra == "cuda12"',
    'jaxlib==0.4.36; extra == "cuda12-pip"',
]
REQUIRES_0_10_2 = [
    'jaxlib<=0.10.2,>=0.10.2; extra == "cuda13"',
    'jax-cuda13-plugin[with-cuda]<=0.10.2,>=0.10.2; extra == "cuda13"',
    'jax-cuda12-plugin[with-cuda]<=0.10.2,>=0.10.2; extra == "cuda12"',
]


def test_refresh_reads_the_pins_of_each_extra():
    assert refresh.pinned(REQUIRES_0_4_30, "jaxlib", "cuda12") == "0.4.30"
    assert refresh.pinned(REQUIRES_0_4_30, "jax-cuda12-plugin", "cuda12") == "0.4.30"
    assert refresh.pinned(REQUIRES_0_4_37, "jaxlib", "cuda12") == "0.4.36"
    assert refresh.pinned(REQUIRES_0_4_37, "jaxlib", "cuda12-pip") == "0.4.36"  # not confused with "cuda12"
    assert refresh.pinned(REQUIRES_0_4_37, "jax-cuda12-plugin", "cuda12") == "0.4.36"
    assert refresh.pinned(REQUIRES_0_10_2, "jax-cuda13-plugin", "cuda13") == "0.10.2"
    assert refresh.pinned(REQUIRES_0_10_2, "jax-cuda13-plugin", "cuda12") is None
    assert refresh.pinned(REQUIRES_0_10_2, "jax-cuda12-plugin", "cuda13") is None
    assert refresh.python_floor(">=3.11") == (3, 11) and refresh.python_floor(None) is None


def test_refresh_writes_the_file_as_it_is_written_by_hand():
    text = DATA.read_text(encoding="utf-8")
    assert refresh.dump(json.loads(text)) == text


@settings(max_examples=100, deadline=None)
@given(
    requires=st.lists(st.text(max_size=60), max_size=4),
    package=st.text(max_size=10),
    extra=st.text(max_size=8),
    spec=st.one_of(st.none(), st.text(max_size=20)),
)
def test_refresh_readers_take_garbage(requires, package, extra, spec):
    refresh.pinned(requires, package, extra)
    refresh.python_floor(spec)
