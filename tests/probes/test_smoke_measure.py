"""How the smoke probes measure (``gpudoctor/probes/_smoke_measure.py``): warm-up until stable, samples until the
spread is small or time is up, medians with their spread.

The timings fed in are synthetic sequences (named so in each test), with a synthetic clock that advances by
each sample's duration: the logic is checked without any wall-clock timing.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.probes import _smoke_measure as m


class SyntheticRun:
    """A synthetic sequence of sample durations and a clock that advances by each one as it is taken."""

    def __init__(self, durations: list[float], repeat_last: bool = True) -> None:
        self.durations = list(durations)
        self.repeat_last = repeat_last
        self.now = 0.0
        self.taken: list[float] = []

    def clock(self) -> float:
        return self.now

    def sample(self) -> float:
        index = len(self.taken)
        value = self.durations[min(index, len(self.durations) - 1)]
        self.taken.append(value)
        self.now += value
        return value


def test_relative_spread_is_the_interquartile_range_over_the_median():
    assert m.relative_spread([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx((4.0 - 2.0) / 3.0)
    assert m.relative_spread([2.0, 2.0, 2.0]) == 0.0
    assert m.relative_spread([7.0]) is None  # one sample has no spread
    assert m.relative_spread([]) is None
    # one sample slowed down by another process barely moves it (the standard deviation would jump)
    assert m.relative_spread([1.0, 1.0, 1.01, 1.0, 9.0]) == pytest.approx(0.01)


def test_quantile_interpolates_between_order_statistics():
    assert m.quantile([4.0, 1.0, 3.0, 2.0], 0.5) == pytest.approx(2.5)
    assert m.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == pytest.approx(2.0)
    assert m.quantile([], 0.5) is None


def test_warm_up_runs_until_two_samples_agree_not_a_fixed_count():
    # synthetic: a slow first step (kernel choice, primitive creation), then settling down
    run = SyntheticRun([5.0, 1.0, 0.5, 0.21, 0.2, 0.2])
    result = m.measure(run.sample, stop_at=100.0, clock=run.clock)
    assert result.warmup == 5 and result.warmup_settled  # 0.21 then 0.2 agree within 10 %
    assert result.samples == [0.2] * m.MIN_SAMPLES and result.ended_by == "target"
    assert result.median == 0.2 and result.spread == 0.0


def test_warm_up_is_capped_when_it_never_settles():
    run = SyntheticRun([1.0, 2.0] * 50)  # synthetic: alternating, never two alike
    result = m.measure(run.sample, stop_at=1000.0, clock=run.clock)
    assert result.warmup == m.WARMUP_MAX and not result.warmup_settled


def test_warm_up_keeps_to_its_share_of_the_window():
    run = SyntheticRun([3.0, 1.0, 3.0, 1.0] * 20)  # synthetic, never settles; window 10 s
    result = m.measure(run.sample, stop_at=10.0, clock=run.clock)
    assert result.warmup < m.WARMUP_MAX  # stopped by the share of the window, not the count
    assert len(result.samples) >= m.MIN_KEEP


def test_repetitions_go_on_while_the_spread_is_large_and_stop_at_the_window():
    noisy = [0.1, 0.1] + [0.1, 0.2, 0.1, 0.3, 0.1, 0.2] * 30  # synthetic: settled warm-up, then noise
    run = SyntheticRun(noisy)
    result = m.measure(run.sample, stop_at=3.0, max_samples=1000, clock=run.clock)
    assert result.ended_by == "time" and len(result.samples) > m.MIN_SAMPLES
    assert run.now <= 3.0 + max(noisy)  # no sample started that the last ones said would end past the window


def test_repetitions_stop_at_the_cap():
    noisy = [0.1, 0.1] + [0.1, 0.2] * 100  # synthetic
    run = SyntheticRun(noisy)
    result = m.measure(run.sample, stop_at=1e9, max_samples=12, clock=run.clock)
    assert result.ended_by == "max" and len(result.samples) == 12


def test_a_slow_device_still_gets_its_minimum_samples_but_never_past_the_hard_stop():
    run = SyntheticRun([2.0])  # synthetic: every sample takes 2 s; window 1 s
    result = m.measure(run.sample, stop_at=1.0, clock=run.clock)
    assert len(result.samples) == m.MIN_KEEP  # the figure needs a median of a few
    run = SyntheticRun([2.0])
    result = m.measure(run.sample, stop_at=1.0, hard_stop=5.0, clock=run.clock)
    assert run.now <= 5.0 + 2.0 and len(result.samples) >= 1


def test_fields_carry_spread_repetitions_and_warm_up():
    run = SyntheticRun([1.0, 1.0, 1.0])  # synthetic
    fields = m.measure(run.sample, stop_at=100.0, clock=run.clock).fields()
    assert fields == {
        "repeats": m.MIN_SAMPLES,
        "warmup": 2,
        "warmup_settled": True,
        "spread": 0.0,
        "ended_by": "target",
    }


def test_ops_per_sample_makes_a_sample_last_the_minimum():
    assert m.ops_per_sample(0.001, 0.02) == 20
    assert m.ops_per_sample(0.5, 0.15) == 1
    assert m.ops_per_sample(1e-9, 0.15) == m.MAX_OPS_PER_SAMPLE
    assert m.ops_per_sample(0.0, 0.15) == m.MAX_OPS_PER_SAMPLE


def test_sampler_sets_the_op_count_from_the_last_sample_not_the_slow_first_one():
    per_op = iter([0.5, 0.01, 0.01])  # synthetic seconds per op: a slow first op, then fast ones
    counts: list[int] = []

    def time_ops(ops: int) -> float:
        counts.append(ops)
        return next(per_op)

    sampler = m.Sampler(time_ops, min_sample_s=0.1)
    assert [sampler(), sampler(), sampler()] == [0.5, 0.01, 0.01]
    assert counts == [1, 1, 10] and sampler.ops == 10


@given(st.lists(st.floats(min_value=1e-6, max_value=10.0, allow_nan=False), min_size=1, max_size=40))
def test_measure_always_ends_with_a_median_within_the_samples(durations):
    run = SyntheticRun(durations)
    result = m.measure(run.sample, stop_at=20.0, max_samples=30, clock=run.clock)
    assert result.samples and min(result.samples) <= (result.median or 0.0) <= max(result.samples)
    assert result.spread is None or result.spread >= 0.0


def test_a_slow_first_sample_never_becomes_a_measured_one():
    # synthetic: library initialisation makes the first sample longer than the whole window
    run = SyntheticRun([4.0, 0.1, 0.1])
    result = m.measure(run.sample, stop_at=2.0, clock=run.clock)
    assert result.warmup == 2 and 4.0 not in result.samples
    assert result.median == 0.1


def test_openmp_threads_sleep_on_a_small_machine_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert m.quiet_openmp(2) == {"omp_wait_policy": "PASSIVE", "omp_wait_policy_from": "smoke"}
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    assert m.quiet_openmp(16) == {"omp_wait_policy": None, "omp_wait_policy_from": "default"}
    assert "OMP_WAIT_POLICY" not in os.environ  # a big machine keeps the framework's default
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert m.quiet_openmp(2) == {"omp_wait_policy": "ACTIVE", "omp_wait_policy_from": "environment"}
