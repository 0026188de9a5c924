"""A report from an 8-GPU instance type with 7 GPUs visible is a problem naming the missing one (issue 19), run as
a user runs it: `gpudoctor check --from DIR` over a SYNTHETIC snapshot directory.

The snapshot is SYNTHETIC: platform.json with the DMI of an AWS p4d.24xlarge, nvml.json with 7 A100s (built with
tests/synthetic/nvml_records.py) and a sysfs scan with all 8 A100 functions on the bus.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from gpudoctor.kb.cloud_instances import instance_type
from tests.checks.test_platform_checks import synthetic_bus, synthetic_nvml, synthetic_platform
from tests.e2e.test_cli import as_json, gpudoctor, statuses


@pytest.fixture
def synthetic_p4d_missing_one(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "synthetic-p4d-7-of-8"
    folder.mkdir()
    records = {
        "platform.json": synthetic_platform("p4d.24xlarge"),
        "nvml.json": synthetic_nvml(7),
        "pci-devices.json": synthetic_bus(8),
    }
    for name, record in records.items():
        (folder / name).write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_synthetic_p4d_with_seven_gpus_is_a_problem_naming_the_missing_one(synthetic_p4d_missing_one) -> None:
    result = gpudoctor("check", "--from", str(synthetic_p4d_missing_one), "--format", "json")
    assert result.returncode == 1, result.stderr
    report = as_json(result)
    assert statuses(report)["PLAT002"] == "problem"
    plat002 = next(r for r in report["results"] if r["code"] == "PLAT002")
    assert "0000:a0:1d.0" in plat002["summary"] and "7 are visible" in plat002["summary"]
    assert plat002["data"]["missing"] == ["0000:a0:1d.0"]
    platform = report["machine"]["platform"]
    row = instance_type("aws", "p4d.24xlarge")
    assert row is not None
    assert platform == {
        "provider": "aws",
        "provider_name": "AWS",
        "instance_type": "p4d.24xlarge",
        "expected": row.expected,
        "notebook": None,
        "image": None,
    }


def test_synthetic_p4d_text_report_says_what_the_type_should_have(synthetic_p4d_missing_one) -> None:
    result = gpudoctor("check", "--from", str(synthetic_p4d_missing_one), env={"NO_COLOR": "1"})
    assert result.returncode == 1, result.stderr
    row = instance_type("aws", "p4d.24xlarge")
    assert row is not None
    machine = next(line for line in result.stdout.splitlines() if line.startswith("Machine: "))
    assert machine.startswith(f"Machine: AWS p4d.24xlarge: {row.expected} expected, 7 GPUs"), machine
    assert "0000:a0:1d.0 is missing" in result.stdout
