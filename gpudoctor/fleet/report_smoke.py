"""A node's smoke figures, as the fleet report compares them between identical nodes.

From SMOKE001's ``data.measurements`` (matmul TFLOP/s per dtype, CNN training steps/s per precision,
pinned host↔device and device-to-device copy GB/s) and SMOKE006's all-reduce bus bandwidth.  Only the
accelerators' figures: CPU figures depend on what else the host runs, not on its GPU model.  Per metric
the node keeps its *slowest* GPU's figure: one slow GPU holds a data-parallel job to its pace, and a
node's best GPU would hide it.  Every figure is higher-is-better.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable, Optional

from gpudoctor.fleet.report_model import Measurement

TFLOPS, STEPS, GBPS = "TFLOP/s", "steps/s", "GB/s"
# keep(metric, unit, value, device): remember a figure if it is the node's slowest so far.
Keep = Callable[[str, str, Optional[float], Optional[str]], None]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _word(value: object) -> str | None:
    return value[:20] if isinstance(value, str) and value and value.isprintable() else None


def _accelerator(record: dict[str, Any]) -> str | None:
    device = _word(record.get("device"))
    return device if device and device != "cpu" else None


def node_measurements(results: dict[str, dict[str, Any]]) -> list[Measurement]:
    """The figures of a report's checks (code -> result), each the slowest GPU's."""
    slowest: dict[tuple[str, str], tuple[float, str | None]] = {}

    def keep(metric: str, unit: str, value: float | None, device: str | None) -> None:
        if value is None:
            return
        key = (metric, unit)
        if key not in slowest or value < slowest[key][0]:
            slowest[key] = (value, device)

    smoke = results.get("SMOKE001", {}).get("data")
    if isinstance(smoke, dict):
        _smoke001(smoke, keep)
    collective = results.get("SMOKE006", {}).get("data")
    if isinstance(collective, dict) and collective.get("device_kind") not in ("cpu", None):
        keep("all-reduce bus", GBPS, _number(collective.get("busbw_gbps")), None)
    return [
        Measurement(metric=sys.intern(metric), value=value, unit=sys.intern(unit), device=device)
        for (metric, unit), (value, device) in slowest.items()
    ]


def _records(measurements: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    value = measurements.get(kind)
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def _smoke001(data: dict[str, Any], keep: Keep) -> None:
    measurements = data.get("measurements")
    if not isinstance(measurements, dict):
        return
    for record in _records(measurements, "matmul"):
        device, dtype = _accelerator(record), _word(record.get("dtype"))
        if device and dtype:
            keep(f"matmul {dtype}", TFLOPS, _number(record.get("tflops")), device)
    for record in _records(measurements, "cnn"):
        device, precision = _accelerator(record), _word(record.get("precision"))
        if device and precision:
            keep(f"CNN training {precision}", STEPS, _number(record.get("steps_per_s")), device)
    for record in _records(measurements, "bandwidth"):
        device, direction, memory = _accelerator(record), _word(record.get("direction")), record.get("memory")
        # Pageable copies measure the host's memory and CPU more than the GPU's link: left out.
        if device and direction and memory in ("pinned", "device"):
            label = f"copy {direction}" if memory == "device" else f"copy {direction} pinned"
            keep(label, GBPS, _number(record.get("gbps")), device)
