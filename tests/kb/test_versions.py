"""The one home of version parsing (``gpudoctor.kb.versions``, on ``packaging.version``): NVIDIA driver and L4T
versions parse, releases compare numerically, and junk is None (or sorts first), never an exception."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from gpudoctor.kb import versions


def test_driver_and_l4t_versions_parse() -> None:
    assert versions.parse_version("535.104.05") == Version("535.104.5")
    assert versions.parse_version("35.3.1") == Version("35.3.1")
    assert versions.release_tuple("535.104.05") == (535, 104, 5)
    assert versions.release_tuple("570.26", 3) == (570, 26, 0)
    assert versions.parse_driver_version("535.104.05") == (535, 104, 5)
    assert versions.parse_driver_version("35.3.1") == (35, 3, 1)
    assert versions.parse_cuda_version("12.8") == (12, 8, None)
    assert versions.parse_cuda_version("cu128") == (12, 8, None)


def test_releases_compare_numerically_not_as_text() -> None:
    assert versions.version_key("12.10") > versions.version_key("12.9")
    assert versions.version_key("580.65.06") > versions.version_key("580.9.1")
    assert versions.cuda_key("12.8") == (12, 8, 0) and versions.cuda_key("nope") == (0, 0, 0)
    assert versions.major("580.65.06") == 580
    assert versions.major_minor("2.13.0") == "2.13" and versions.major_minor("2") == "2"


def test_junk_is_none() -> None:
    for junk in ("", "abc", "1..2", "cu", None, 12, "9" * 200, "0.٠"):
        assert versions.parse_version(junk) is None
        assert versions.release_tuple(junk) == ()
        assert versions.major(junk) is None and versions.major_minor(junk) is None
        assert versions.parse_driver_version(junk) is None
    assert versions.parse_cuda_version("0.٠") is None


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=30), st.integers(), st.none(), st.floats()))
def test_nothing_raises(value: object) -> None:
    parsed = versions.parse_version(value)
    assert parsed is None or isinstance(parsed, Version)
    assert isinstance(versions.version_key(value), tuple)
    versions.parse_driver_version(value)
    versions.parse_cuda_version(value)
    versions.cuda_key(value)
