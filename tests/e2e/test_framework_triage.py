"""Triage from a user's report: `check --from` on real pasted collect_env reports and TensorFlow logs.

Each fixture is a real report from a public issue whose cause the thread established
(``../shared/fixtures/INDEX.md``, sections E and F); the test asserts gpudoctor finds
that cause and prints a command that fixes it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.helpers.fixtures import real_fixtures_dir

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


def _fixture(name: str):
    path = real_fixtures_dir() / name
    if not path.is_file():
        pytest.skip(f"real fixture {path} not found (set GPUDOCTOR_FIXTURES)")
    return path


def _check_json(path) -> tuple[int, dict]:
    proc = subprocess.run(
        [*GPUDOCTOR, "check", "--from", str(path), "--format", "json"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _result(report: dict, code: str) -> dict:
    return next(r for r in report["results"] if r["code"] == code)


def _commands(result: dict) -> list[str]:
    return [c for f in result["findings"] if f["fix"] for c in f["fix"]["commands"]]


def test_rtx5090_with_cu126_wheel_needs_a_blackwell_build():
    # pytorch/pytorch#150733: RTX 5090 D (sm_120), torch 2.6.0+cu126 built for sm_50..sm_90.
    code, report = _check_json(_fixture("E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"))
    assert code == 1
    arch = _result(report, "TORCH004")
    assert arch["status"] == "problem"
    assert "sm_120" in arch["findings"][0]["message"]
    assert "RTX 5090 D" in arch["findings"][0]["message"]
    install = [c for c in _commands(arch) if " install " in c]
    # Blackwell needs a CUDA 12.8+ wheel; this driver (570.124.04) can't run CUDA 13 wheels (≥ 580).
    assert install and re.search(r"--index-url https://download\.pytorch\.org/whl/cu12[89]\b", install[0])
    assert _result(report, "TORCH005")["status"] == "ok"  # "Is CUDA available: True": the trap of this bug
    assert _result(report, "TORCH003")["status"] == "ok"


def test_conda_cpu_only_build_on_two_rtx3090():
    # pytorch/pytorch#106565: conda pulled a CPU-only torch 1.8.1 onto a machine with 2x RTX 3090, driver 470.
    code, report = _check_json(_fixture("E/pytorch-106565-conda-cpuonly-pulled-in-rtx3090x2-collect_env-excerpt.txt"))
    assert code == 1
    build = _result(report, "TORCH002")
    assert build["status"] == "problem"
    message = build["findings"][0]["message"]
    assert "CPU-only" in message and "RTX 3090" in message
    install = [c for c in _commands(build) if " install " in c]
    # Driver 470 runs only CUDA 11.x wheels; Python 3.8's newest torch with one is 2.4 (2.5 dropped 3.8).
    assert install == ['python -m pip install "torch==2.4.*" --index-url https://download.pytorch.org/whl/cu118']
    assert "3.8" in build["findings"][0]["fix"]["summary"]


def test_windows_cpu_build_on_rtx4080_laptop():
    code, report = _check_json(
        _fixture("E/pytorch-122924-windows-conda-cpu-build-rtx4080-laptop-collect_env-UNCONFIRMED.txt")
    )
    assert code == 1
    build = _result(report, "TORCH002")
    assert build["status"] == "problem"
    install = [c for c in _commands(build) if " install " in c]
    assert install and re.search(r"--index-url https://download\.pytorch\.org/whl/cu1\d\d\b", install[0])
    assert report["machine"]["driver_version"] == "551.86"


def test_sectioned_collect_env_of_a_healthy_h20():
    _code, report = _check_json(
        _fixture("E/vllm-omni-241-new-sectioned-collect_env-format-h20-excerpt-UNCONFIRMED.txt")
    )
    torch_results = [r for r in report["results"] if r["code"].startswith("TORCH")]
    assert [r["status"] for r in torch_results if r["status"] not in ("ok", "not_applicable")] == []
    assert _result(report, "TORCH001")["data"]["version"] == "2.8.0+cu128"
    assert _result(report, "TORCH004")["status"] == "ok"  # H20 is Hopper, sm_90: in the cu128 list


def test_tensorflow_and_cuda_libraries_not_on_the_loader_path():
    # tensorflow/tensorflow#85311: tensorflow[and-cuda] installed, "Cannot dlopen some GPU libraries".
    code, report = _check_json(_fixture("F/tf-85311-tf2.18-and-cuda-poetry-cannot-dlopen-ld-library-path.txt"))
    assert code == 1
    tf = _result(report, "TF002")
    assert tf["status"] == "problem"
    assert any("LD_LIBRARY_PATH" in c and "nvidia" in c for c in _commands(tf))


def test_tensorflow_missing_cuda_10_runtime():
    _code, report = _check_json(_fixture("F/faceswap-1004-libcudart.so.10.0-cuda-not-installed-correctly.txt"))
    tf = _result(report, "TF002")
    assert tf["status"] == "problem"
    assert "libcudart.so.10.0" in tf["findings"][0]["message"]


def test_a_script_printout_is_read_as_a_paste_not_as_a_tensorflow_log():
    # tensorflow/tensorflow#60237 is a user's own print-out ("GPU is NOT AVAILABLE", TensorFlow 2.12): not a
    # TensorFlow log, but a paste whose words still say what is wrong and what it likely is (the excerpt does
    # not show the platform, so native Windows is among the causes, not established).
    proc = subprocess.run(
        [
            *GPUDOCTOR,
            "check",
            "--from",
            str(_fixture("F/tf-60237-tf2.12-windows-native-gpu-not-available.txt")),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    tf_import = next(r for r in report["results"] if r["code"] == "TF001")
    assert tf_import["status"] == "not_applicable"  # nothing was parsed as a TensorFlow log
    (finding,) = [f for r in report["results"] for f in r["findings"] if f["cause"] == "tf-cuda-libs-missing"]
    assert finding["severity"] == "warning" and "tf-cpu-only" in finding["other_causes"]
    assert finding["quote"] == "GPU is NOT AVAILABLE"


def test_collect_env_markdown_is_pasteable():
    proc = subprocess.run(
        [
            *GPUDOCTOR,
            "check",
            "--from",
            str(_fixture("E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt")),
            "--format",
            "markdown",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "TORCH004" in proc.stdout and "download.pytorch.org/whl/cu12" in proc.stdout
