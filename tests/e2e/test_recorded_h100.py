"""A real healthy H100 (tests/recorded/h100-80gb-hbm3-vm, a `gpudoctor collect` snapshot written on a lent
H100 80GB HBM3): no false alarm, and the gates judge it on the numbers people use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parents[1] / "recorded" / "h100-80gb-hbm3-vm"


def check(*args: str) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--from", str(SNAPSHOT), "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result.returncode, json.loads(result.stdout)


def by_code(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["code"]: r for r in report["results"]}


def test_a_healthy_h100_has_no_problem_and_no_warning() -> None:
    code, report = check()
    assert code == 0
    counts = report["summary"]["counts"]
    assert counts["problem"] == 0 and counts["warning"] == 0, [
        (r["code"], r["summary"]) for r in report["results"] if r["status"] in ("problem", "warning")
    ]
    assert report["machine"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


def test_an_80gb_gpu_passes_an_80_gib_memory_gate() -> None:
    # NVML reports 81559 MiB (79.6 GiB) for the "80GB" card: the size it is sold as must pass.
    code, report = check("--min-gpu-memory", "80")
    assert by_code(report)["GATE004"]["status"] == "ok", by_code(report)["GATE004"]["summary"]
    assert code == 0


def test_a_failed_memory_gate_is_the_next_step() -> None:
    code, report = check("--min-gpu-memory", "96")
    assert by_code(report)["GATE004"]["status"] == "problem"
    assert code == 1
    assert report["next_step"] is not None
    assert report["next_step"]["code"] == "GATE004"


def generate(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args, "--from", str(SNAPSHOT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout


def test_an_install_script_written_inside_its_container_installs_no_driver() -> None:
    script = generate("install-script", "--framework", "torch")
    assert "made inside a docker container" in script
    assert "driver: none (inside a docker container)" in script
    assert "nvidia-open-580" not in script and "linux-headers" not in script
    assert "from https://download.pytorch.org/whl/cu13" in script  # a CUDA 13 wheel: the driver runs 13.0


def test_a_dockerfile_for_it_uses_a_cuda_its_driver_runs_and_no_unpublished_gpudoctor() -> None:
    dockerfile = generate("dockerfile", "--framework", "torch", "--preflight", "none")
    assert "FROM nvidia/cuda:13.0." in dockerfile
    assert "gpudoctor==" not in dockerfile


def test_its_quick_smoke_run_measured_every_gpu_phase_with_spreads() -> None:
    _, report = check()
    results = by_code(report)
    assert all(results[code]["status"] == "ok" for code in ("SMOKE001", "SMOKE002", "SMOKE003", "SMOKE004"))
    measured = results["SMOKE001"]["data"]["measurements"]
    gpu_matmul = {m["dtype"]: m for m in measured["matmul"] if m["device"] == "cuda:0"}
    assert set(gpu_matmul) == {"fp32", "tf32", "fp16", "bf16"}
    for figure in [*gpu_matmul.values(), *measured["cnn"], *measured["bandwidth"]]:
        assert figure["skipped"] is None and figure["error"] is None, figure
        assert figure["repeats"] >= 3 and figure["spread"] is not None, figure
    assert {(c["device"], c["precision"]) for c in measured["cnn"]} == {
        ("cpu", "fp32"), ("cpu", "amp"), ("cuda:0", "fp32"), ("cuda:0", "amp"),
    }  # fmt: skip
    assert results["SMOKE001"]["data"]["cpu_threads"] == 16
