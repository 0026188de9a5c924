"""How fast ``gpudoctor check --from`` reads a big paste: a 1 MiB log made of real corpus pastes.

The text is the accuracy corpus's pastes (benchmarks/accuracy_corpus, real outputs from public threads)
concatenated until it reaches the size asked for, so it holds hundreds of known error messages, tables and
tracebacks: the scanner's worst realistic case.  Target (issue 15): under 1 s for 1 MiB, end to end.

Usage: ``python benchmarks/bench_paste.py [--mib 1] [--runs 5]``
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build_log(size: int) -> str:
    texts = []
    for path in sorted(glob.glob(os.path.join(HERE, "accuracy_corpus", "*", "*.txt"))):
        with open(path, encoding="utf-8") as handle:
            texts.append(handle.read())
    if not texts:
        raise SystemExit("no corpus under benchmarks/accuracy_corpus")
    parts, total = [], 0
    while total < size:
        for text in texts:
            parts.append(text)
            total += len(text.encode("utf-8"))
            if total >= size:
                break
    return "\n".join(parts)


def build_training_log(size: int) -> str:
    """A log shaped like a long training run: a real TensorFlow start-up log (tensorpack#1303, healthy), many
    progress lines (SYNTHETIC: Keras's progress line format, numbers varied), and a real out-of-memory
    traceback at the end (dcrnn#6)."""
    folder = os.path.join(HERE, "accuracy_corpus")
    with open(
        os.path.join(folder, "tensorflow", "tensorpack-1303-healthy-bfc-not-a-failure.txt"), encoding="utf-8"
    ) as f:
        head = f.read()
    with open(os.path.join(folder, "tracebacks", "dcrnn-6-cuda-oom-batch-size.txt"), encoding="utf-8") as f:
        tail = f.read()
    lines, total, step = [head], len(head) + len(tail), 0
    while total < size:
        step += 1
        line = (
            f"{step % 1875 + 1}/1875 [==============>...............] - ETA: {step % 97}s - loss: 0.{step % 9973:04d}"
        )
        lines.append(line)
        total += len(line) + 1
    return "\n".join([*lines, tail])


def _time(text: str, runs: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "big-paste.log")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        command = [sys.executable, "-m", "gpudoctor", "check", "--from", path, "--format", "json"]
        subprocess.run(command, capture_output=True, check=False)  # warm the page cache and .pyc files
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, check=False)
            times.append(time.perf_counter() - started)
            if done.returncode not in (0, 1):
                raise SystemExit(done.stderr.decode(errors="replace"))
    return statistics.median(times), min(times), len(text.encode("utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    size = int(args.mib * 1024 * 1024)
    worst = True
    for name, text in (("corpus pastes (dense)", build_log(size)), ("training log", build_training_log(size))):
        median, best, length = _time(text, args.runs)
        print(
            f"check --from a {length / 1048576:.2f} MiB {name}: median {median:.3f} s, best {best:.3f} s "
            f"over {args.runs} runs (target < 1 s)"
        )
        worst = worst and median < 1.0
    return 0 if worst else 1


if __name__ == "__main__":
    sys.exit(main())
