"""ROCm error signatures on the real captures of ../shared/fixtures/G-amd (INDEX.md §G6): the right signature,
the right cause, a fix with commands; and no alarm on the healthy AMD captures."""

from __future__ import annotations

import pytest

from gpudoctor.facts.signature_scan import scan_text
from gpudoctor.kb.causes import all_causes
from gpudoctor.kb.fix_texts import all_fix_texts
from gpudoctor.kb.signatures import all_signatures
from tests.helpers.fixtures import fixture_files, fixture_text, read_fixture

ROCM_GROUP = [s for s in all_signatures() if s.group == "rocm"]

# fixture -> (signature ids expected, in order of first appearance; the cause of the first)
CASES = {
    "G-amd/err-hipErrorNoBinaryForGpu-gfx1032-rocm-pytorch-docker-rocm-1797.txt": (
        ["rocm-no-binary-for-gpu"],
        "rocm-gfx-not-in-build",
    ),
    "G-amd/err-rocminfo-dev-kfd-permission-denied-rocm-terminal-container-rocm-docker-116.txt": (
        ["rocm-kfd-permission-denied"],
        "rocm-kfd-no-access",
    ),
    "G-amd/err-dmesg-amdgpu-probe-failed-error-12-2x-mi210-amdgpu-6.16.13-rocm-6281.txt": (
        ["amdgpu-init-failed-enomem"],
        "rocm-bar-space",
    ),
}


@pytest.mark.parametrize("relative", sorted(CASES))
def test_real_rocm_errors_match_their_signature_cause_and_fix(relative: str) -> None:
    expected_ids, expected_cause = CASES[relative]
    matches = [m for m in scan_text(fixture_text(relative), relative) if m.signature.severity != "info"]
    assert [m.signature.id for m in matches] == expected_ids
    signature = matches[0].signature
    assert signature.component == "rocm"
    assert signature.causes[0] == expected_cause
    fix_key = all_causes()[expected_cause].fix
    assert fix_key is not None and all_fix_texts()[fix_key].commands


def test_both_failed_mi210_probes_are_counted() -> None:
    relative = "G-amd/err-dmesg-amdgpu-probe-failed-error-12-2x-mi210-amdgpu-6.16.13-rocm-6281.txt"
    (match,) = scan_text(fixture_text(relative), relative)
    assert match.count == 2 and "failed with error -12" in match.quote


def test_the_bar_space_fix_is_amds_bios_advice() -> None:
    fix = all_fix_texts()[all_causes()["rocm-bar-space"].fix or ""]
    assert "Above 4G Decoding" in fix.summary and "Resizable BAR" in fix.summary


def test_the_override_is_offered_as_a_workaround_only() -> None:
    fix = all_fix_texts()["rocm-build-for-gfx"]
    assert "workaround" in fix.summary and "10.3.0" in fix.summary


def test_a_lone_probe_failure_or_fatal_init_line_still_matches() -> None:
    # Synthetic: single lines cut from the real capture (INDEX.md G6) as a person might paste them.
    probe = "[    8.841500] amdgpu: probe of 0000:c3:00.0 failed with error -12"
    fatal = "[    8.839735] amdgpu 0000:c3:00.0: amdgpu: Fatal error during GPU init"
    assert [m.signature.id for m in scan_text(probe, "x")] == ["amdgpu-probe-failed-enomem"]
    assert [m.signature.id for m in scan_text(fatal, "x")] == ["amdgpu-fatal-init"]


def test_the_rocm_group_is_complete() -> None:
    ids = {s.id for s in ROCM_GROUP}
    assert {"rocm-no-binary-for-gpu", "rocm-invalid-isa", "rocm-kfd-missing", "rocm-kfd-enomem"} <= ids
    assert all(s.component == "rocm" and s.sources and s.examples for s in ROCM_GROUP)


def test_no_rocm_alarm_on_healthy_amd_captures() -> None:
    healthy = [p for p in fixture_files("G-amd", "*") if p.is_file() and not p.name.startswith("err-")]
    if not healthy:
        pytest.skip("real fixtures G-amd not available")
    for path in healthy:
        alarms = scan_text(read_fixture(path), path.name, tuple(ROCM_GROUP))
        assert not alarms, (path.name, [(m.signature.id, m.quote) for m in alarms])
