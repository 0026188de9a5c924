"""SYNTHETIC fleets of node reports, derived from one real report, for ``fleet report`` tests and benchmark.

The base is real: ``gpudoctor check --from tests/recorded/h100-80gb-hbm3-vm --format json`` run by the
real CLI (a real H100 VM snapshot with smoke figures).  Everything made from it here is SYNTHETIC: copies
with one value changed (a driver version, a matmul figure, the GPU model or count) to stand for the nodes
of a fleet.  Files are named ``synthetic-*.json`` so nobody mistakes them for captures.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
H100_SNAPSHOT = REPO / "tests" / "recorded" / "h100-80gb-hbm3-vm"


def run_gpudoctor(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI, as a person runs it (this interpreter, ``-m gpudoctor``)."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
        check=False,
    )


@functools.lru_cache(maxsize=1)
def real_h100_report_text() -> str:
    """The real node report of the recorded H100 VM, made by the real CLI (exit 0: a healthy node)."""
    done = run_gpudoctor("check", "--from", str(H100_SNAPSHOT), "--format", "json")
    assert done.returncode == 0, done.stderr
    return done.stdout


def real_h100_report() -> dict[str, Any]:
    return json.loads(real_h100_report_text())


def _scale_smoke(report: dict[str, Any], factor: float, metric: str | None = None) -> None:
    """Multiply the accelerators' smoke figures (one matmul dtype when ``metric`` is "bf16" ...)."""
    for result in report["results"]:
        if result["code"] != "SMOKE001":
            continue
        for record in result["data"]["measurements"]["matmul"]:
            if record["device"] != "cpu" and record["tflops"] is not None and metric in (None, record["dtype"]):
                record["tflops"] *= factor
        if metric is None:
            for record in result["data"]["measurements"]["cnn"]:
                if record["device"] != "cpu" and record["steps_per_s"] is not None:
                    record["steps_per_s"] *= factor


def synthetic_node_report(
    base: dict[str, Any],
    *,
    driver: str | None = None,
    matmul_factor: float = 1.0,
    matmul_dtype: str | None = None,
    gpu_name: str | None = None,
    gpu_count: int | None = None,
    pcie_width: int | None = None,
) -> dict[str, Any]:
    """A SYNTHETIC variation of the real ``base`` report: the named values changed, nothing else."""
    report = copy.deepcopy(base)
    machine = report["machine"]
    if driver is not None:
        machine["driver_version"] = driver
        machine["facts_seen"]["driver_versions"] = [driver]
    if matmul_factor != 1.0:
        _scale_smoke(report, matmul_factor, matmul_dtype)
    if gpu_count is not None:
        first = machine["gpus"][0]
        machine["gpus"] = [{**first, "index": i} for i in range(gpu_count)]
        topology = report["sections"]["topology"]
        topology["gpus"] = [{**topology["gpus"][0], "index": i} for i in range(gpu_count)]
    if gpu_name is not None:
        for gpu in machine["gpus"]:
            gpu["name"] = gpu_name
    if pcie_width is not None:
        topology_gpus = report["sections"]["topology"]["gpus"]
        topology_gpus[-1] = {**topology_gpus[-1], "pcie": {**topology_gpus[-1]["pcie"], "width_current": pcie_width}}
    return report


def write_synthetic_fleet(
    folder: pathlib.Path,
    count: int,
    changes: dict[int, dict[str, Any]] | None = None,
    jitter: float = 0.002,
    base: dict[str, Any] | None = None,
) -> list[str]:
    """``count`` SYNTHETIC node reports ``synthetic-nodeNNNNN.json`` in ``folder``; node i gets
    ``changes[i]`` (keywords of :func:`synthetic_node_report`), every node a small smoke-figure jitter
    (i × ``jitter``, so a group's MAD is not zero).  Returns the node names."""
    base = base if base is not None else real_h100_report()
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(count):
        name = f"synthetic-node{i:05d}"
        keywords = dict((changes or {}).get(i, {}))
        factor = keywords.pop("matmul_factor", 1.0) * (1 + jitter * (i % 7))
        report = synthetic_node_report(base, matmul_factor=factor, **keywords)
        (folder / f"{name}.json").write_text(json.dumps(report), encoding="utf-8")
        names.append(name)
    return names
