"""Slow outliers among identical nodes: median and MAD, the robust z-score, and the rule that flags a node.

Smoke figures are higher-is-better.  Within a group of identical nodes (GPU model × count) and one metric,
a node is *slow* when both hold:

* its robust z-score ``(x - median) / (1.4826 · MAD)`` is below :data:`ROBUST_Z_LIMIT` (-3.5, the cut-off
  Iglewicz and Hoaglin recommend for the modified z-score), and
* it is at least :data:`MIN_RELATIVE_DROP` (10 %) below the median: a fleet whose figures agree to within
  a percent has a tiny MAD, and a node 2 % slower would otherwise be "an outlier" nobody should act on.

With MAD = 0 (more than half the nodes report the same figure) the z-score is undefined; the relative
drop alone decides.  Fewer than :data:`MIN_PEERS` nodes with the metric: no verdict (a median of three is
no baseline).  Only slowness is flagged: a node faster than its peers is not a fault.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MIN_PEERS = 5  # nodes of the same hardware with the metric, the flagged one included
ROBUST_Z_LIMIT = -3.5
MIN_RELATIVE_DROP = 0.10
MAD_TO_SIGMA = 1.4826  # MAD × this estimates the standard deviation of normally distributed figures


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def mad(values: Sequence[float], centre: float | None = None) -> float:
    """The median absolute deviation from the median (or from ``centre``)."""
    middle = median(values) if centre is None else centre
    return median([abs(v - middle) for v in values])


def robust_z(value: float, centre: float, spread: float) -> float:
    """``(value - median) / (1.4826 · MAD)``; ±inf (or 0 for the median itself) when MAD is 0."""
    if spread > 0:
        return (value - centre) / (MAD_TO_SIGMA * spread)
    if value == centre:
        return 0.0
    return math.copysign(math.inf, value - centre)


def is_slow(value: float, centre: float, spread: float) -> bool:
    """The rule of the module doc, for one figure against its group's median and MAD."""
    if centre <= 0:
        return False  # no baseline to be slower than
    drop = (centre - value) / centre
    if drop < MIN_RELATIVE_DROP:
        return False
    return spread == 0 or robust_z(value, centre, spread) < ROBUST_Z_LIMIT


def slow_ones(values: Sequence[float]) -> tuple[float, float, list[int]] | None:
    """The group's median, MAD and the positions of the slow values; None below :data:`MIN_PEERS`."""
    if len(values) < MIN_PEERS:
        return None
    centre = median(values)
    spread = mad(values, centre)
    return centre, spread, [i for i, v in enumerate(values) if is_slow(v, centre, spread)]
