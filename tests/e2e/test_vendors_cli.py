"""`check --from` on machines of other vendors, and of two vendors at once, built from REAL captures.

A snapshot directory holds one file per source (README, "Snapshot files"); these put real outputs of
``../shared/fixtures`` under the names the collector gives them. A directory that joins outputs of two
different machines (an NVIDIA table and an AMD rocm-smi) is a composed scenario, named so: what it tests is
that both vendors are described, each by its own checks.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.helpers.fixtures import real_fixtures_dir

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]

ROCM_SMI_6X_MI100 = "G-amd/telegraf-rocm-smi-json-6x-mi100-rocm5.7.1-amdgpu-6.2.4.txt"
ROCMINFO_4X_MI300X = "G-amd/gls-rocminfo-4x-mi300x-gfx942.txt"
NVIDIA_8X_H100 = "C/gls-8x-h100-sxm-565.57.01.txt"


def _snapshot(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    folder = tmp_path / "snap"
    folder.mkdir()
    for name, fixture in files.items():
        source = real_fixtures_dir() / fixture
        if not source.is_file():
            pytest.skip(f"real fixture {source} not found (set GPUDOCTOR_FIXTURES)")
        shutil.copyfile(source, folder / name)  # into the test's temp dir, never into the project
    return folder


def _check(path: pathlib.Path, fmt: str = "json") -> tuple[int, str]:
    proc = subprocess.run(
        [*GPUDOCTOR, "check", "--from", str(path), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, proc.stdout


def _result(report: dict, code: str) -> dict:
    return next(r for r in report["results"] if r["code"] == code)


def test_amd_machine_is_described_by_its_gpus_not_as_a_machine_without_any(tmp_path: pathlib.Path) -> None:
    folder = _snapshot(tmp_path, {"rocminfo.txt": ROCMINFO_4X_MI300X})
    _, text = _check(folder, "text")
    assert "Machine: 4 × AMD Instinct MI300X (gfx942)" in text
    assert "no NVIDIA GPUs" not in text
    code, out = _check(folder)
    report = json.loads(out)
    assert code == 0
    assert [a["architecture"] for a in report["machine"]["accelerators"]] == ["gfx942"] * 4
    assert _result(report, "ROCM001")["status"] == "ok"
    # NVIDIA's own checks say nothing is wrong with NVIDIA on a machine that never had it.
    assert not [r["code"] for r in report["results"] if r["status"] in ("warning", "problem")]


def test_two_vendors_on_one_machine_are_both_described(tmp_path: pathlib.Path) -> None:
    """COMPOSED scenario: a real 8× H100 nvidia-smi table and a real 6× MI100 rocm-smi JSON in one snapshot."""
    folder = _snapshot(tmp_path, {"nvidia-smi.txt": NVIDIA_8X_H100, "rocm-smi.txt": ROCM_SMI_6X_MI100})
    _, out = _check(folder)
    report = json.loads(out)
    machine = report["machine"]
    assert len(machine["gpus"]) == 8 and all("H100" in g["name"] for g in machine["gpus"])
    assert len(machine["accelerators"]) == 6 and {a["vendor"] for a in machine["accelerators"]} == {"amd"}
    assert _result(report, "ROCM001")["status"] == "ok"
    assert _result(report, "GPU001")["status"] in ("ok", "warning")  # NVIDIA's GPUs judged by NVIDIA's checks
    _, text = _check(folder, "text")
    headline = next(line for line in text.splitlines() if line.startswith("Machine:"))
    assert "8x NVIDIA H100" in headline and "6 × " in headline and "MI100" in headline
