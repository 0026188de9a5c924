"""The outlier statistics of ``fleet report``: median, MAD, robust z and the slow rule (figures synthetic)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.fleet.report_stats import (
    MIN_PEERS,
    MIN_RELATIVE_DROP,
    is_slow,
    mad,
    median,
    robust_z,
    slow_ones,
)


def test_median_and_mad_of_odd_and_even_counts() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert mad([1.0, 2.0, 3.0, 4.0, 100.0]) == 1.0  # one wild value does not move it
    with pytest.raises(ValueError):
        median([])


def test_robust_z_scales_mad_to_a_standard_deviation() -> None:
    assert robust_z(90.0, 100.0, 1.0) == pytest.approx(-10 / 1.4826)
    assert robust_z(100.0, 100.0, 0.0) == 0.0
    assert robust_z(90.0, 100.0, 0.0) == -math.inf


def test_one_slow_node_among_agreeing_peers_is_flagged() -> None:
    figures = [700.0, 702.0, 698.0, 701.0, 699.0, 703.0, 350.0]
    centre, spread, slow = slow_ones(figures) or (0, 0, [])
    assert slow == [6]
    assert centre == 700.0 and spread == 2.0


def test_equal_figures_flag_nobody() -> None:
    assert slow_ones([700.0] * 12) == (700.0, 0.0, [])


def test_small_drop_is_not_flagged_however_tight_the_group() -> None:
    # 5 % slower, a z-score of about -17: below the relative floor, not worth anyone's time.
    figures = [700.0, 700.2, 699.8, 700.1, 699.9, 665.0]
    assert slow_ones(figures) is not None
    assert slow_ones(figures)[2] == []  # type: ignore[index]


def test_mad_zero_uses_the_relative_floor_alone() -> None:
    assert is_slow(600.0, 700.0, 0.0)
    assert not is_slow(650.0, 700.0, 0.0)  # 7 % below


def test_noisy_group_needs_a_large_z_too() -> None:
    # Figures spread widely: 15 % below the median is within the noise (robust z about -1).
    figures = [500.0, 600.0, 700.0, 800.0, 900.0, 595.0]
    assert slow_ones(figures)[2] == []  # type: ignore[index]


def test_too_few_peers_gives_no_verdict() -> None:
    assert slow_ones([700.0] * (MIN_PEERS - 2) + [1.0]) is None


def test_faster_is_never_an_outlier() -> None:
    assert slow_ones([700.0, 701.0, 699.0, 700.0, 702.0, 5000.0])[2] == []  # type: ignore[index]


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=MIN_PEERS, max_size=40))
def test_flagged_values_are_always_well_below_the_median(values: list[float]) -> None:
    centre, _spread, slow = slow_ones(values) or (0.0, 0.0, [])
    for position in slow:
        assert values[position] <= centre * (1 - MIN_RELATIVE_DROP) + 1e-9
