"""The numbers of a smoke run as plain-text tables (the verdicts are the SMOKE checks in the report)."""

from __future__ import annotations

from typing import Any


def _number(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def _table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [
        title,
        "  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)),
        "  " + "  ".join("-" * w for w in widths),
    ]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return lines + [""]


def _outcome(result: Any) -> str:
    if getattr(result, "error", None):
        return "error: " + " ".join(str(result.error).split())[:80]
    if getattr(result, "skipped", None):
        return "skipped: " + str(result.skipped)
    return ""


def _spread(value: Any) -> str:
    return "-" if value is None else f"±{value * 100:.1f}%"


def _reps(result: Any) -> str:
    """ "12 (+3)": timed samples, and the warm-up samples before them."""
    repeats, warmup = getattr(result, "repeats", None), getattr(result, "warmup", None)
    if repeats is None:
        return "-"
    return f"{repeats} (+{warmup})" if warmup else str(repeats)


def _device_name(device: Any) -> str:
    name = device.name or device.id
    if device.kind == "cpu" and device.threads:
        name += f" ({device.threads} thread{'s' if device.threads != 1 else ''})"
    return str(name)


def render_smoke_table(smoke: Any) -> str:
    """Matmul, CNN step, bandwidth, peer-to-peer and all-reduce numbers, one table each."""
    if smoke is None or smoke.run.status == "not_collected":
        return ""
    names = {d.id: _device_name(d) for d in smoke.devices}
    framework = " ".join(part for part in (smoke.framework or "?", smoke.framework_version) if part)
    head = [
        f"Smoke test ({framework}, {smoke.mode or '?'} mode, "
        f"{_number(smoke.elapsed_s, 1)} s" + (f", stopped by {smoke.stopped_by}" if smoke.stopped_by else "") + ")",
        "",
    ]
    lines = list(head)
    lines += _table(
        "Matmul",
        ["device", "dtype", "n", "TFLOP/s", "ms/op", "spread", "reps (+warm-up)", "note"],
        [
            [
                names.get(r.device, r.device),
                r.dtype,
                _number(r.n),
                _number(r.tflops, 3),
                _number(r.seconds * 1000 if r.seconds is not None else None),
                _spread(r.spread),
                _reps(r),
                _outcome(r),
            ]
            for r in smoke.matmul
        ],
    )
    lines += _table(
        "CNN training step",
        ["device", "precision", "batch", "steps/s", "ms/step", "spread", "reps (+warm-up)", "loss", "note"],
        [
            [
                names.get(r.device, r.device),
                r.precision,
                _number(r.batch),
                _number(r.steps_per_s, 1),
                _number(r.seconds_per_step * 1000 if r.seconds_per_step is not None else None),
                _spread(r.spread),
                _reps(r),
                f"{_number(r.loss_first)} → {_number(r.loss_last)}" if r.loss_first is not None else "-",
                _outcome(r),
            ]
            for r in smoke.cnn
        ],
    )
    lines += _table(
        "Bandwidth",
        ["device", "direction", "memory", "GB/s", "spread", "note"],
        [
            [names.get(r.device, r.device), r.direction, r.memory, _number(r.gbps, 1), _spread(r.spread), _outcome(r)]
            for r in smoke.bandwidth
        ],
    )
    lines += _table(
        "Peer to peer",
        ["from", "to", "access", "GB/s", "note"],
        [
            [r.src, r.dst, {True: "yes", False: "no"}.get(r.access, "-"), _number(r.gbps, 1), _outcome(r)]
            for r in smoke.p2p
        ],
    )
    allreduce = smoke.allreduce
    if allreduce is not None:
        lines += _table(
            "All-reduce",
            ["backend", "ranks", "MB", "busbw GB/s", "algbw GB/s", "DDP step ms", "note"],
            [
                [
                    allreduce.backend or "-",
                    _number(allreduce.world_size),
                    _number(allreduce.bytes / 1e6 if allreduce.bytes else None, 1),
                    _number(allreduce.busbw_gbps, 2),
                    _number(allreduce.algbw_gbps, 2),
                    _number(allreduce.ddp_step_s * 1000 if allreduce.ddp_step_s is not None else None),
                    _outcome(allreduce),
                ]
            ],
        )
    if len(lines) == len(head):
        lines.append("  (no workload finished)")
        lines.append("")
    elif any(r.spread is not None for r in (*smoke.matmul, *smoke.cnn, *smoke.bandwidth)):
        lines.append("Figures are medians of the timed samples; spread: (p75 - p25) / median of those samples.")
        lines.append("")
    return "\n".join(lines) + "\n"
