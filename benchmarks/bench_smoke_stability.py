#!/usr/bin/env python3
"""Run-to-run stability of the CPU baseline of `gpudoctor smoke --quick` on this machine.

Not part of the test suite: run it by hand, e.g.

    python benchmarks/bench_smoke_stability.py --python .venv-frameworks/bin/python --runs 5

Each run is the torch smoke probe exactly as `gpudoctor smoke --quick` starts it (the argv of
``gpudoctor.evidence.smoke_runner.smoke_argv``), with ``--devices cpu`` (the CPU baseline only: the figures
that are the denominator of "N× the CPU"), back to back.  From each run's JSON it takes the CPU fp32
matmul TFLOP/s and the CPU fp32 CNN steps/s, with the within-run spread, repetitions, warm-up count and
thread count the probe reports, and the load average before the run.  It prints, per figure:

    run-to-run spread = (max - min) / median over the runs          target <= 10 %

(the strictest reading: the whole range, not a quartile range), and the same for the interquartile range.

``--probe-dir DIR`` runs the probe scripts from another folder, e.g. an older checkout's
``gpudoctor/probes`` (``git archive REV gpudoctor/probes | tar -x -C /tmp/old``), to compare before/after on
the same machine in the same session.  The script uses only the standard library; torch runs in the
target Python as a child process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def probe_argv(python: str, probe_dir: Path | None) -> list[str]:
    sys.path.insert(0, str(REPO))
    from gpudoctor.evidence.smoke_runner import smoke_argv

    argv = smoke_argv(python, "torch", "quick", devices="cpu")
    if probe_dir is not None:
        argv[1] = str(probe_dir / Path(argv[1]).name)
    return argv


def pick(records: object, **match: object) -> dict[str, Any]:
    for record in records if isinstance(records, list) else []:
        if isinstance(record, dict) and all(record.get(key) == value for key, value in match.items()):
            return record
    return {}


def one_run(argv: list[str], timeout: float) -> dict[str, Any]:
    load = load_average()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - started
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        raise RuntimeError(f"the probe printed no JSON (exit {done.returncode}): {done.stderr[-500:]}") from None
    matmul = pick(doc.get("matmul"), device="cpu", dtype="fp32")
    cnn = pick(doc.get("cnn"), device="cpu", precision="fp32")
    threads = next((d.get("threads") for d in doc.get("devices") or [] if d.get("id") == "cpu"), None)
    return {
        "load_before": load,
        "wall_s": round(wall, 2),
        "threads": threads,
        "matmul_tflops": matmul.get("tflops"),
        "matmul_n": matmul.get("n"),
        "matmul_spread": matmul.get("spread"),
        "matmul_repeats": matmul.get("repeats"),
        "matmul_warmup": matmul.get("warmup"),
        "matmul_cpu_share": matmul.get("cpu_share"),
        "cnn_steps_per_s": cnn.get("steps_per_s"),
        "cnn_spread": cnn.get("spread"),
        "cnn_repeats": cnn.get("repeats"),
        "cnn_warmup": cnn.get("warmup"),
        "cnn_cpu_share": cnn.get("cpu_share"),
        "skipped": [r.get("skipped") for r in (matmul, cnn) if r.get("skipped")],
    }


def run_to_run(values: list[float]) -> tuple[float | None, float | None]:
    """((max - min) / median, IQR / median) of the runs' figures."""
    if len(values) < 2:
        return None, None
    middle = statistics.median(values)
    if middle <= 0:
        return None, None
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return (max(values) - min(values)) / middle, (quartiles[2] - quartiles[0]) / middle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=os.environ.get("GPUDOCTOR_FRAMEWORK_PYTHON"), help="a Python with torch")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--probe-dir", type=Path, default=None, help="run the probe scripts from this folder")
    parser.add_argument("--json", type=Path, default=None, help="write the runs and the verdict here")
    args = parser.parse_args(argv)
    if not args.python:
        print(
            "bench_smoke_stability: give --python (a Python with torch) or set GPUDOCTOR_FRAMEWORK_PYTHON",
            file=sys.stderr,
        )
        return 2
    command = probe_argv(args.python, args.probe_dir)
    log("probe: " + " ".join(command))
    runs = []
    for index in range(1, args.runs + 1):
        run = one_run(command, timeout=120.0)
        runs.append(run)
        log(
            f"run {index}: load {run['load_before']}, {run['threads']} threads, "
            f"matmul fp32 {run['matmul_tflops']} TFLOP/s (spread {run['matmul_spread']}, "
            f"{run['matmul_repeats']} reps, {run['matmul_warmup']} warm-up, CPU share {run['matmul_cpu_share']}), "
            f"CNN fp32 {run['cnn_steps_per_s']} steps/s (spread {run['cnn_spread']}, "
            f"{run['cnn_repeats']} reps, {run['cnn_warmup']} warm-up, CPU share {run['cnn_cpu_share']}), "
            f"{run['wall_s']} s"
        )
    verdict = {}
    print(f"{'figure':<28} {'min':>8} {'median':>8} {'max':>8} {'range/med':>10} {'IQR/med':>8}  target")
    for key, label in (("matmul_tflops", "CPU matmul fp32 TFLOP/s"), ("cnn_steps_per_s", "CPU CNN fp32 steps/s")):
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
        full, iqr = run_to_run(values)
        ok = full is not None and full <= TARGET and len(values) == len(runs)
        verdict[key] = {"values": values, "range_over_median": full, "iqr_over_median": iqr, "ok": ok}
        if values:
            print(
                f"{label:<28} {min(values):>8.3f} {statistics.median(values):>8.3f} {max(values):>8.3f} "
                f"{(full or 0) * 100:>9.1f}% {(iqr or 0) * 100:>7.1f}%  <= {TARGET:.0%} {'ok' if ok else 'MISSED'}"
            )
        else:
            print(f"{label:<28} no figure in any run")
    # The same figures divided by the share of its threads' CPU time each run got: how much of the run-to-run
    # spread is other processes' load (information only; the verdict is on the figures smoke reports).
    for key, share_key, label in (
        ("matmul_tflops", "matmul_cpu_share", "  per CPU share: matmul"),
        ("cnn_steps_per_s", "cnn_cpu_share", "  per CPU share: CNN"),
    ):
        adjusted = [r[key] / r[share_key] for r in runs if r.get(key) and r.get(share_key)]
        full, iqr = run_to_run(adjusted)
        if adjusted and full is not None:
            print(
                f"{label:<28} {min(adjusted):>8.3f} {statistics.median(adjusted):>8.3f} {max(adjusted):>8.3f} "
                f"{full * 100:>9.1f}% {(iqr or 0) * 100:>7.1f}%  (information)"
            )
    loads = [r["load_before"] for r in runs if r["load_before"] is not None]
    if loads:
        print(f"load average (1 min) before the runs: {min(loads):.2f} .. {max(loads):.2f}; {os.cpu_count()} CPUs")
    if args.json:
        args.json.write_text(json.dumps({"probe": command, "runs": runs, "verdict": verdict}, indent=2) + "\n")
    return 0 if all(v["ok"] for v in verdict.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
