#!/usr/bin/env python3
"""Scale of ``gpudoctor fleet report``: 10,000 SYNTHETIC node reports aggregated, wall time and peak memory.

Not part of the test suite: run it by hand, e.g.

    python benchmarks/bench_fleet_report.py --nodes 10000

It makes one real node report (``gpudoctor check --from tests/recorded/h100-80gb-hbm3-vm --format json``,
~64 KB), writes ``--nodes`` SYNTHETIC copies of it into a temporary folder (``synthetic-nodeNNNNN.json``;
every node's smoke figures jittered a little, 1 % with another driver version, 0.5 % with half the matmul
throughput), then runs ``gpudoctor fleet report DIR`` in each format (json, text, markdown, html; output to
/dev/null) and prints, per format: wall time, the peak RSS of the largest single process (``wait4``'s
ru_maxrss, which covers the process and its pool workers one by one) and the peak of the whole process
tree summed (sampled from /proc every 20 ms).  The issue's targets: <= 10 s and <= 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
SNAPSHOT = REPO / "tests" / "recorded" / "h100-80gb-hbm3-vm"
TARGET_S, TARGET_MB = 10.0, 500.0


def real_report_text() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--from", str(SNAPSHOT), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if done.returncode != 0:
        sys.exit(f"the base report failed: {done.stderr}")
    return done.stdout


def write_synthetic_reports(folder: pathlib.Path, count: int, base_text: str) -> None:
    """SYNTHETIC variations of the one real report (see the module doc)."""
    for i in range(count):
        report = json.loads(base_text)
        factor = (0.5 if i % 200 == 13 else 1.0) * (1 + 0.002 * (i % 7))
        for result in report["results"]:
            if result["code"] == "SMOKE001":
                for record in result["data"]["measurements"]["matmul"]:
                    if record["device"] != "cpu" and record["tflops"] is not None:
                        record["tflops"] *= factor
        if i % 100 == 42:
            report["machine"]["driver_version"] = "570.86.15"
        (folder / f"synthetic-node{i:05d}.json").write_text(json.dumps(report), encoding="utf-8")


def _tree_rss_kb(pid: int) -> int:
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/status", encoding="ascii", errors="replace") as status:
                total += next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), 0)
            with open(f"/proc/{current}/task/{current}/children", encoding="ascii") as children:
                pending += [int(c) for c in children.read().split()]
        except (OSError, ValueError):
            continue
    return total


def measure(folder: pathlib.Path, fmt: str) -> dict[str, float]:
    argv = [sys.executable, "-m", "gpudoctor", "fleet", "report", str(folder), "--format", fmt]
    start = time.perf_counter()
    # A file, not a pipe: nothing it writes can block it while we wait (closed when collected, after the read).
    errors = tempfile.TemporaryFile()  # noqa: SIM115
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors, cwd=REPO)
    peak_tree = 0
    finished = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not finished.is_set():
            peak_tree = max(peak_tree, _tree_rss_kb(process.pid))
            finished.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    finished.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        sys.exit(
            f"fleet report failed ({process.returncode}): {errors.seek(0) or errors.read().decode(errors='replace')}"
        )
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,  # the process and its pool workers (reaped children)
        "max_process_mb": usage.ru_maxrss / 1024,
        "tree_peak_mb": peak_tree / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--keep", metavar="DIR", help="write the reports here and keep them (default: a temp dir)")
    args = parser.parse_args()
    base = real_report_text()
    with tempfile.TemporaryDirectory(prefix="gpudoctor-fleet-bench-") as temp:
        folder = pathlib.Path(args.keep or temp)
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        write_synthetic_reports(folder, args.nodes, base)
        size_mb = sum(p.stat().st_size for p in folder.glob("*.json")) / 1e6
        print(f"{args.nodes} synthetic node reports, {size_mb:.0f} MB, written in {time.perf_counter() - start:.1f} s")
        # Other work on the machine stretches the wall time: say how busy it was.
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.1f}")
        ok = True
        for fmt in ("json", "text", "markdown", "html"):
            figures = measure(folder, fmt)
            within = figures["wall_s"] <= TARGET_S and figures["tree_peak_mb"] <= TARGET_MB
            ok &= within
            print(
                f"fleet report --format {fmt:8}: {figures['wall_s']:.2f} s wall ({figures['cpu_s']:.2f} s CPU), peak RSS "
                f"{figures['max_process_mb']:.0f} MB (largest process), {figures['tree_peak_mb']:.0f} MB "
                f"(process tree summed) -> {'within' if within else 'OVER'} the target ({TARGET_S:.0f} s, {TARGET_MB:.0f} MB)"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
