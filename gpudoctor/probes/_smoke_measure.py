"""How every smoke figure is measured: warm up until stable, then repeat until the spread is small or time is up.

Runs inside the target Python (standard library only, Python 3.8) and is unit-tested without any framework.
The framework modules hand :func:`measure` a ``sample()`` that times one repetition and returns seconds
per operation; everything about *how many* is decided here, the same way for torch and TensorFlow.

- Warm-up until stable, not a fixed count: warm-up samples are taken until two consecutive ones agree
  within :data:`WARMUP_TOLERANCE` (library handles, kernel choice, oneDNN primitive creation, first-touch
  of memory and clock ramp-up are behind us), or :data:`WARMUP_MAX` samples, or a share of the window
  (but never fewer than 2 warm-up samples: the first carries the one-off costs).
- Repetitions until the spread is small: the spread is the interquartile range over the median,
  ``(p75 - p25) / median`` (quartiles by linear interpolation).  Chosen over the standard deviation
  because one sample delayed by another process on a shared machine moves it little, and over MAD/median
  because it still means something with the 3-5 samples a slow CPU gives in a quick run.  Repetitions stop
  once :data:`MIN_SAMPLES` are in and the spread is at most :data:`TARGET_SPREAD`, or at ``max_samples``,
  or when the next one would end past ``stop_at`` (after :data:`MIN_KEEP`).
- The figure reported is the median of the measured samples; the spread, the repetitions and the warm-up
  count go into the JSON with it.  "N× the CPU" divides medians.
- A sample should last at least a minimum time (``min_sample_s``, per device kind in the mode's
  parameters), so that timer resolution, launch cost and scheduler jitter are small parts of it:
  :func:`ops_per_sample` says how many operations one sample times.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from collections.abc import Sequence

WARMUP_TOLERANCE = 0.10  # two consecutive warm-up samples within 10 % of each other: warm
WARMUP_MAX = 8  # warm-up samples at most
WARMUP_SHARE = 0.4  # warm-up may use at most this share of a workload's window
TARGET_SPREAD = 0.05  # measured samples with (p75 - p25) / median at or below this are enough
MIN_SAMPLES = 7  # at least this many before the spread is trusted
MIN_KEEP = 3  # at least this many measured samples, time permitting the first ones
MAX_OPS_PER_SAMPLE = 64


def quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation between order statistics; None if empty."""
    data = sorted(values)
    if not data:
        return None
    position = (len(data) - 1) * min(max(q, 0.0), 1.0)
    low = int(position)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (position - low)


def relative_spread(values: Sequence[float]) -> float | None:
    """``(p75 - p25) / median`` of ``values``; None with fewer than 2 values or a median of 0."""
    if len(values) < 2:
        return None
    middle = quantile(values, 0.5)
    p25, p75 = quantile(values, 0.25), quantile(values, 0.75)
    if not middle or middle <= 0 or p25 is None or p75 is None:
        return None
    return (p75 - p25) / middle


def settled(times: Sequence[float], tolerance: float = WARMUP_TOLERANCE) -> bool:
    """Whether the last two warm-up samples agree within ``tolerance`` of the smaller one."""
    if len(times) < 2:
        return False
    last, before = times[-1], times[-2]
    smaller = min(last, before)
    return smaller > 0 and abs(last - before) <= tolerance * smaller


def ops_per_sample(op_s: float, min_sample_s: float, maximum: int = MAX_OPS_PER_SAMPLE) -> int:
    """How many operations of ``op_s`` seconds one sample times so that it lasts at least ``min_sample_s``."""
    if op_s <= 0:
        return maximum
    needed = int(min_sample_s / op_s + 0.999999)
    return max(1, min(maximum, needed))


class Measured:
    """The outcome of :func:`measure`: the measured samples (seconds per op), the warm-up count, and why it ended."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.warmup = 0
        self.warmup_settled = False
        self.ended_by = "target"  # "target" (spread small), "max" (repetitions cap), "time" (the window ended)

    @property
    def median(self) -> float | None:
        return quantile(self.samples, 0.5)

    @property
    def spread(self) -> float | None:
        return relative_spread(self.samples)

    def fields(self, digits: int = 4) -> dict[str, Any]:
        """The JSON fields every measured record carries beside its figure."""
        spread = self.spread
        return {
            "repeats": len(self.samples),
            "warmup": self.warmup,
            "warmup_settled": self.warmup_settled,
            "spread": round(spread, digits) if spread is not None else None,
            "ended_by": self.ended_by,
        }


def measure(
    sample: Callable[[], float],
    stop_at: float,
    max_samples: int = 50,
    min_samples: int = MIN_SAMPLES,
    target_spread: float = TARGET_SPREAD,
    warmup_max: int = WARMUP_MAX,
    hard_stop: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Measured:
    """Warm up until stable, then take samples until the spread is small, ``max_samples``, or ``stop_at``.

    ``sample()`` times one repetition and returns its seconds per operation.  ``stop_at``: host-clock time
    (``clock``) the measurement should end by; a sample is not started when the last one says it would end
    past it (once :data:`MIN_KEEP` are in), nor past ``hard_stop`` at all (one sample is always taken).
    ``warmup_max`` 0: no warm-up (the caller already warmed up).
    """
    result = Measured()
    started = clock()
    warm_until = started + WARMUP_SHARE * max(0.0, stop_at - started)
    warm: list[float] = []
    while len(warm) < warmup_max:
        warm.append(sample())
        if settled(warm):
            result.warmup_settled = True
            break
        # The first sample carries one-off costs (library init, autotuning): at least a second one is
        # taken whatever the window, so the measured samples start after them.
        limit = warm_until if hard_stop is None else min(warm_until, hard_stop)
        if len(warm) >= 2 and clock() + warm[-1] > limit:
            break
    result.warmup = len(warm)
    samples = result.samples
    while True:
        samples.append(sample())
        if len(samples) >= max_samples:
            result.ended_by = "max"
            break
        if len(samples) >= min_samples and (relative_spread(samples) or 0.0) <= target_spread:
            result.ended_by = "target"
            break
        now = clock()
        next_end = now + (quantile(samples, 0.5) or 0.0)
        if (len(samples) >= MIN_KEEP and next_end > stop_at) or (hard_stop is not None and next_end > hard_stop):
            result.ended_by = "time"
            break
    return result


class Sampler:
    """``sample()`` for :func:`measure` from ``time_ops(ops)`` (seconds per op over ``ops`` back-to-back ops).

    After each sample the op count is set so that the next sample lasts at least ``min_sample_s``: the
    first, slow warm-up op does not fix the count for the fast ops that follow.
    """

    def __init__(self, time_ops: Callable[[int], float], min_sample_s: float, maximum: int = MAX_OPS_PER_SAMPLE):
        self.time_ops = time_ops
        self.min_sample_s = min_sample_s
        self.maximum = maximum
        self.ops = 1

    def __call__(self) -> float:
        per_op = self.time_ops(self.ops)
        self.ops = ops_per_sample(per_op, self.min_sample_s, self.maximum)
        return per_op


class CpuShare:
    """How much of its threads' CPU time a CPU workload really got: process CPU seconds / (threads × wall seconds).

    On a machine shared with other busy processes a CPU figure is the share of the CPU it got, not the CPU:
    the share says so (1.0: every thread ran all the time; 0.4: other work had most of the CPUs), so that a
    report can say the CPU baseline, and "N× the CPU", were measured on a busy machine.
    """

    def __init__(self, threads: int | None) -> None:
        self.threads = max(1, threads or 1)
        self.shares: list[float] = []

    def wrap(self, time_ops: Callable[[int], float]) -> Callable[[int], float]:
        def timed(ops: int) -> float:
            wall, cpu = time.perf_counter(), time.process_time()
            per_op = time_ops(ops)
            wall = time.perf_counter() - wall
            if wall > 0:
                self.shares.append((time.process_time() - cpu) / (self.threads * wall))
            return per_op

        return timed

    @property
    def median(self) -> float | None:
        share = quantile(self.shares, 0.5)
        return round(min(share, 1.0), 3) if share is not None else None


PASSIVE_OPENMP_MAX_CPUS = 4  # at most this many CPUs: the CPU baseline's OpenMP threads sleep at barriers


def quiet_openmp(cpus: int | None) -> dict[str, Any]:
    """On a small machine (``cpus`` <= 4) OpenMP threads sleep at barriers (``OMP_WAIT_POLICY=PASSIVE``) instead of
    spinning, unless the user chose a policy; elsewhere the framework's default stays.

    Set before the framework's import, which reads it.  Measured with the torch CPU CNN step: on 2 vCPUs
    shared with one busy process, spinning threads waiting for a descheduled peer cut it to 6.1 steps/s
    (4.8-11.5) against 11.7 (11.1-12.0) sleeping, for 5 % less when idle (21.1 against 22.3); on a
    16-core host sleeping cost 30-70 % (12-29 against 37-44 steps/s), so big machines keep the default.
    The record says which policy the CPU baseline ran with and who chose it.
    """
    chosen = os.environ.get("OMP_WAIT_POLICY")
    if chosen:
        return {"omp_wait_policy": chosen, "omp_wait_policy_from": "environment"}
    if cpus is None or cpus > PASSIVE_OPENMP_MAX_CPUS:
        return {"omp_wait_policy": None, "omp_wait_policy_from": "default"}
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return {"omp_wait_policy": "PASSIVE", "omp_wait_policy_from": "smoke"}
