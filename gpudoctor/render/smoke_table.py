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


def render_smoke_table(smoke: Any) -> str:
    """Matmul, CNN step, bandwidth, peer-to-peer and all-reduce numbers, one table each."""
    if smoke is None or smoke.run.status == "not_collected":
        return ""
    names = {d.id: (d.name or d.id) for d in smoke.devices}
    head = [
        f"Smoke test ({smoke.framework or '?'} {smoke.framework_version or ''}, {smoke.mode or '?'} mode, "
        f"{_number(smoke.elapsed_s, 1)} s" + (f", stopped by {smoke.stopped_by}" if smoke.stopped_by else "") + ")",
        "",
    ]
    lines = list(head)
    lines += _table(
        "Matmul",
        ["device", "dtype", "n", "TFLOP/s", "ms/op", "note"],
        [
            [
                names.get(r.device, r.device),
                r.dtype,
                _number(r.n),
                _number(r.tflops, 3),
                _number(r.seconds * 1000 if r.seconds is not None else None),
                _outcome(r),
            ]
            for r in smoke.matmul
        ],
    )
    lines += _table(
        "CNN training step",
        ["device", "precision", "batch", "steps/s", "ms/step", "loss", "note"],
        [
            [
                names.get(r.device, r.device),
                r.precision,
                _number(r.batch),
                _number(r.steps_per_s, 1),
                _number(r.seconds_per_step * 1000 if r.seconds_per_step is not None else None),
                f"{_number(r.loss_first)} → {_number(r.loss_last)}" if r.loss_first is not None else "-",
                _outcome(r),
            ]
            for r in smoke.cnn
        ],
    )
    lines += _table(
        "Bandwidth",
        ["device", "direction", "memory", "GB/s", "note"],
        [
            [names.get(r.device, r.device), r.direction, r.memory, _number(r.gbps, 1), _outcome(r)]
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
    return "\n".join(lines) + "\n"
