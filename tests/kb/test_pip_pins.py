"""kb.pip_pins: the nvidia-* pins of each framework build, read from the wheels' own metadata, and whether builds agree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.kb.pip_pins import _satisfiable, agree, pinned_build, pinned_builds

# --------------------------------------------------------------------------- kb.pip_pins


def test_pins_are_read_from_real_wheel_metadata_with_sources():
    rows = pinned_builds()
    assert {row.framework for row in rows} == {"torch", "tensorflow", "jax"}
    for row in rows:
        assert row.source.startswith("https://pypi.org/project/"), row
        assert row.requires and all(name.startswith("nvidia-") for name, _ in row.requires), row
    tf = pinned_build("tensorflow", "2.19.0", "and-cuda")
    assert tf is not None and dict(tf.requires)["nvidia-cudnn-cu12"] == "==9.3.0.75"


def test_agree_names_the_disagreeing_pin():
    tf, jax = pinned_build("tensorflow", "2.19.0", "and-cuda"), pinned_build("jax", "0.12.0.1", "cuda12")
    assert tf is not None and jax is not None
    ok, why = agree([tf, jax])
    assert not ok and "nvidia-cudnn-cu12" in why and "tensorflow 2.19.0" in why and "jax 0.12.0.1" in why
    newer = pinned_build("tensorflow", "2.21.0", "and-cuda")
    assert newer is not None and agree([newer, jax])[0]


def test_agree_refuses_two_cuda_majors():
    torch, tf = pinned_build("torch", "2.14", "cu130"), pinned_build("tensorflow", "2.21.0", "and-cuda")
    assert torch is not None and tf is not None
    ok, why = agree([torch, tf])
    assert not ok and "CUDA majors differ" in why


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (["==9.3.0.75", "<10.0,>=9.10.2.21"], False),
        (["<10.0,>=9.3.0.75", "<10.0,>=9.10.2.21"], True),
        (["==9.10.2.21", "<10.0,>=9.8"], True),
        (["<13.0,>=12.5.3.2", ">=13.0"], False),
        (["", ">=2.18.1"], True),
        (["==9.3.*", ">=9.3.0.75"], True),
    ],
)
def test_satisfiable(specs, expected):
    assert _satisfiable(specs) is expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=20), max_size=4))
def test_satisfiable_takes_garbage(specs):
    assert _satisfiable(specs) in (True, False)
