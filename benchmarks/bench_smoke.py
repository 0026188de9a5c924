#!/usr/bin/env python3
"""Accuracy and speed of `gpudoctor smoke` on this machine, measured in one run.

Not part of the test suite: run it by hand, e.g.

    python benchmarks/bench_smoke.py --python /tmp/venv-frameworks/bin/python --rounds 5 --json smoke-bench.json

First one quick smoke run learns the sizes smoke picks here (and its wall time counts for (c)); then in
each round it runs, in the target Python (which must have torch):

  direct-before  a plain `torch.matmul` timing loop at the n smoke used, and a plain training loop of the
                 MNIST example net on a batch of the same size (written here independently, as a user
                 would: 3 warm-up steps, then 12 timed steps)
  smoke          the smoke probe through gpudoctor's runner (`run_smoke`, what `gpudoctor smoke --quick`
                 runs), timed from start to its JSON
  direct-after   the same plain loops again

and compares (medians over rounds):

  (a) smoke's fp32 CPU matmul TFLOP/s / the direct loop's   must be within 10 % (0.90 .. 1.10)
  (b) smoke's fp32 CPU CNN seconds per step / the plain loop's  within 10 %
  (c) the quick run's wall time                            < 30 s

Both sides use the same statistic: smoke reports the median of its timed repeats, and the plain loops
time each matmul / step and take the median too (their means are kept in --json).  The direct number of
a round is the average of the loops just before and just after the smoke run, so that a change in
machine load during the round hits both sides alike; the verdict is on the median over rounds.  The bench script itself uses only the standard
library; the torch parts run in the target venv as child processes, and gpudoctor's runner is imported
from this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpudoctor-bench"
TOLERANCE = 0.10
QUICK_WALL_TARGET_S = 30.0

# The plain loops, run in the target Python: argv n, batch, warm-up steps, timed steps.
DIRECT = r"""
import json, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

n, batch, warmup, steps = (int(v) for v in sys.argv[1:5])
torch.manual_seed(0)

def median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2

# (a) matmul: warm up, then at least 1 s and 5 matmuls, each timed
a = torch.randn(n, n)
b = torch.randn(n, n)
for _ in range(2):
    torch.matmul(a, b)
matmuls = []
while sum(matmuls) < 1.0 or len(matmuls) < 5:
    started = time.perf_counter()
    c = torch.matmul(a, b)
    matmuls.append(time.perf_counter() - started)

# (b) the PyTorch examples/mnist network, trained the plain way
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)

model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = torch.randn(batch, 1, 28, 28)
target = torch.randint(0, 10, (batch,))

def step():
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    loss.backward()
    optimizer.step()
    return loss.item()

for _ in range(warmup):
    step()
steps_s = []
for _ in range(steps):
    started = time.perf_counter()
    step()
    steps_s.append(time.perf_counter() - started)
print(json.dumps({"n": n, "matmul_s": median(matmuls), "matmul_mean_s": sum(matmuls) / len(matmuls),
                  "tflops": 2.0 * n ** 3 / median(matmuls) / 1e12, "matmuls": len(matmuls), "batch": batch,
                  "cnn_step_s": median(steps_s), "cnn_mean_step_s": sum(steps_s) / len(steps_s),
                  "threads": torch.get_num_threads(), "torch": torch.__version__}))
"""


def log(msg: str = "") -> None:
    print(msg, file=sys.stderr, flush=True)


def default_python() -> str | None:
    for candidate in (
        os.environ.get("GPUDOCTOR_FRAMEWORK_PYTHON"),
        str(DEFAULT_CACHE / "torch-venv" / ("Scripts" if os.name == "nt" else "bin") / "python"),
    ):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def direct(python: str, n: int, batch: int, warmup: int, steps: int, timeout: float = 300.0) -> dict:
    # The OpenMP wait policy the smoke probe runs its CPU baseline with (PASSIVE on machines of a few CPUs,
    # unless the user chose), so that both sides run torch alike.
    sys.path.insert(0, str(REPO))
    from gpudoctor.probes._smoke_helpers import cpu_threads
    from gpudoctor.probes._smoke_measure import PASSIVE_OPENMP_MAX_CPUS

    env = dict(os.environ)
    if (cpu_threads() or 0) <= PASSIVE_OPENMP_MAX_CPUS:
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    proc = subprocess.run(
        [python, "-c", DIRECT, str(n), str(batch), str(warmup), str(steps)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the direct loops failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def smoke(python: str) -> tuple[float, dict, str | None]:
    """Wall seconds of one quick smoke run through gpudoctor's runner, its JSON, its error."""
    sys.path.insert(0, str(REPO))
    from gpudoctor.evidence.smoke_runner import run_smoke

    started = time.perf_counter()
    item = run_smoke(python, "torch", "quick")
    wall = time.perf_counter() - started
    return wall, item.json() or {}, item.error


def pick(records: list[dict], **match) -> dict:
    for record in records or []:
        if all(record.get(key) == value for key, value in match.items()):
            return record
    return {}


def cpu_fp32(doc: dict) -> tuple[dict, dict]:
    return pick(doc.get("matmul"), device="cpu", dtype="fp32"), pick(doc.get("cnn"), device="cpu", precision="fp32")


def sizes(python: str) -> tuple[int, int, float]:
    """The matmul n and CNN batch smoke uses on this machine, from a first quick run (its wall time counts too)."""
    log("first smoke run (quick), to learn the sizes it uses here ...")
    wall, doc, error = smoke(python)
    mm, cnn = cpu_fp32(doc)
    if error or not mm.get("n") or not cnn.get("batch"):
        raise RuntimeError(f"smoke gave no CPU fp32 numbers: error={error!r}, errors={doc.get('errors')}")
    return mm["n"], cnn["batch"], wall


def one_round(python: str, index: int, n: int, batch: int) -> dict:
    log(f"round {index}: plain loops (n={n}, batch={batch}), smoke, plain loops again ...")
    before = direct(python, n, batch, 3, 12)
    wall, doc, error = smoke(python)
    after = direct(python, n, batch, 3, 12)
    mm, cnn = cpu_fp32(doc)
    if error or mm.get("n") != n or not mm.get("tflops") or not cnn.get("seconds_per_step"):
        raise RuntimeError(
            f"smoke run unusable: error={error!r}, n={mm.get('n')} (expected {n}), errors={doc.get('errors')}"
        )
    direct_tflops = (before["tflops"] + after["tflops"]) / 2
    direct_step = (before["cnn_step_s"] + after["cnn_step_s"]) / 2
    return {
        "n": n,
        "batch": batch,
        "smoke_tflops": mm["tflops"],
        "direct_tflops": direct_tflops,
        "matmul_ratio": mm["tflops"] / direct_tflops,
        "smoke_step_s": cnn["seconds_per_step"],
        "direct_step_s": direct_step,
        "cnn_ratio": cnn["seconds_per_step"] / direct_step,
        "wall_s": wall,
        "elapsed_s": doc.get("elapsed_s"),
        "stopped_by": doc.get("stopped_by"),
        "direct_before": before,
        "direct_after": after,
    }


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--python",
        metavar="EXE",
        default=default_python(),
        help="the Python with torch (default: $GPUDOCTOR_FRAMEWORK_PYTHON, else bench_speed's "
        "torch venv under ~/.cache/gpudoctor-bench)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of smoke + direct loops (default 5)")
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write every number as JSON to PATH")
    args = parser.parse_args(argv)
    if not args.python:
        log(
            "no Python with torch: pass --python, set GPUDOCTOR_FRAMEWORK_PYTHON, or run "
            "scripts/setup-framework-venv.sh"
        )
        return 2
    try:
        n, batch, first_wall = sizes(args.python)
    except (RuntimeError, ValueError) as exc:
        log(str(exc))
        return 1
    rounds = []
    for index in range(1, max(1, args.rounds) + 1):
        try:
            rounds.append(one_round(args.python, index, n, batch))
        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
            log(f"round {index} failed: {exc}")
    if not rounds:
        return 1
    matmul_ratio = statistics.median(r["matmul_ratio"] for r in rounds)
    cnn_ratio = statistics.median(r["cnn_ratio"] for r in rounds)
    walls = [first_wall] + [r["wall_s"] for r in rounds]
    wall, worst_wall = statistics.median(walls), max(walls)
    print(
        f"gpudoctor smoke bench: {len(rounds)} round(s), python {args.python}, {os.cpu_count()} CPUs, "
        f"{platform.platform()}"
    )
    print(
        f"{'round':>5}  {'n':>5}  {'smoke TF/s':>10}  {'direct TF/s':>11}  {'ratio':>6}  {'smoke ms/step':>13}  "
        f"{'plain ms/step':>13}  {'ratio':>6}  wall s"
    )
    for index, r in enumerate(rounds, 1):
        print(
            f"{index:>5}  {r['n']:>5}  {r['smoke_tflops']:>10.4f}  {r['direct_tflops']:>11.4f}  "
            f"{r['matmul_ratio']:>6.3f}  {r['smoke_step_s'] * 1000:>13.1f}  {r['direct_step_s'] * 1000:>13.1f}  "
            f"{r['cnn_ratio']:>6.3f}  {r['wall_s']:.1f}"
        )
    checks = [
        (
            "(a) matmul fp32 TFLOP/s smoke / direct",
            f"{matmul_ratio:.3f}",
            "0.90 .. 1.10",
            abs(matmul_ratio - 1) <= TOLERANCE,
        ),
        ("(b) CNN step s smoke / plain loop", f"{cnn_ratio:.3f}", "0.90 .. 1.10", abs(cnn_ratio - 1) <= TOLERANCE),
        (
            "(c) smoke --quick wall time (worst run)",
            f"{worst_wall:.1f} s",
            f"< {QUICK_WALL_TARGET_S:g} s",
            worst_wall < QUICK_WALL_TARGET_S,
        ),
    ]
    print()
    for name, value, goal, ok in checks:
        print(f"{name:<42} {value:>10}   goal {goal:<13} {verdict(ok)}")
    print(f"(quick wall times: {', '.join(f'{w:.1f}' for w in walls)} s; median {wall:.1f} s)")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rounds": rounds,
                    "matmul_ratio": matmul_ratio,
                    "cnn_ratio": cnn_ratio,
                    "wall_s": walls,
                    "wall_median_s": wall,
                    "wall_worst_s": worst_wall,
                    "checks": [{"name": n, "value": v, "goal": g, "pass": ok} for n, v, g, ok in checks],
                    "machine": {"nproc": os.cpu_count(), "platform": platform.platform()},
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0 if all(ok for *_, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
