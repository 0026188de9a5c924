"""Every real capture of the other vendors (``../shared/fixtures`` G-amd, H-intel, I-apple, J-tpu), handed in
alone as a user would paste it, is read into that vendor's facts: the report names the accelerators, or a
vendor check (or a known-error signature) has something to say. Nothing a person may paste from an AMD,
Intel, Apple or TPU machine is met with silence, and none of it crashes a check.
"""

from __future__ import annotations

import pathlib

import pytest

from gpudoctor.commands.report import build_report
from gpudoctor.evidence.snapshot import read_snapshot
from gpudoctor.results import Status
from tests.helpers.fixtures import fixture_files

VENDOR_PREFIXES = ("ROCM", "XPU", "MPS", "TPU")
FILES = [p for d in ("G-amd", "H-intel", "I-apple", "J-tpu") for p in fixture_files(d)]


def _report(path: pathlib.Path):  # type: ignore[no-untyped-def]
    report, errors = build_report(read_snapshot(str(path)), {})
    assert not errors
    return report


@pytest.mark.skipif(not FILES, reason="the real fixtures (../shared/fixtures) are not available")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_capture_is_read_into_its_vendors_facts(path: pathlib.Path) -> None:
    report = _report(path)
    assert not [r.code for r in report.results if r.status is Status.CRASHED]
    spoke = [
        r.code for r in report.results if r.code.startswith(VENDOR_PREFIXES) and r.status is not Status.NOT_APPLICABLE
    ]
    listed = report.machine.get("accelerators") or []
    torch_or_collect_env = [r.code for r in report.results if r.code == "TORCH001" and r.status is Status.OK]
    assert spoke or listed or torch_or_collect_env, f"nothing read from {path.name}"
