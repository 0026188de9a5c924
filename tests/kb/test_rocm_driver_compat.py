"""AMD's user and kernel-space support matrix (kb.rocm_driver_compat), read from its data file."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.kb import rocm_driver_compat as compat
from gpudoctor.kb.loading import DATA_FILES, _load


def test_every_row_has_a_source_that_the_meta_block_names():
    data = _load(compat.DATA_FILE)
    named = compat.sources()
    for row in data["matrix"] + data["module_versions"]:
        assert row["source"] in named
    assert all(url.startswith("https://") for url in named.values())
    assert compat.DATA_FILE in DATA_FILES


def test_matrix_rows_as_amd_publishes_them():
    assert compat.driver_row("6.3").user_space == ("6.1", "6.2", "6.3", "6.4", "7.0")
    assert compat.supports("6.0", "5.6") is True and compat.supports("6.0", "6.3") is False
    assert compat.supports("4.5", "4.5") is None  # not in the matrix: unknown, not unsupported
    assert compat.newest_user_space("30.10") == "7.0"


def test_module_versions_map_only_where_sourced():
    assert compat.kmd_release_of("6.10.5") == "6.3"
    assert compat.kmd_release_of("5.18.13") == "5.4"
    assert compat.kmd_release_of("30.10.1") == "30.10"
    assert compat.kmd_release_of("6.8.5") is None
    assert compat.kmd_release_of("6.8.0-45-generic") is None


def test_drivers_for_a_user_space_newest_first():
    assert compat.drivers_for("7.0")[:2] == ("30.30", "30.10")
    assert compat.drivers_for("junk") == ()


@given(st.one_of(st.none(), st.text(max_size=30), st.integers()))
def test_never_raises(value):
    compat.kmd_release_of(value)  # type: ignore[arg-type]
    compat.supports(value, value)  # type: ignore[arg-type]
    compat.drivers_for(value)  # type: ignore[arg-type]
    compat.major_minor(value)
