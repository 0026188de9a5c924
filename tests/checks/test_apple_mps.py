"""MPS001-003 on the real Mac reports (I-apple) and synthetic probe records; silent off a Mac."""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any

import pytest

from gpudoctor.api import CheckContext, CheckSpec
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.kb import apple_mps
from gpudoctor.results import Outcome, Severity, Status
from gpudoctor_checks.apple_mps import mps_available, native_python, tensorflow_metal
from tests.helpers.fixtures import fixture_text

ROSETTA = "I-apple/collect_env-rosetta-x86_64-anaconda-python-on-m2-pro-macos-10.16-excerpt-pytorch-146236.txt"
M2_MAX = "I-apple/collect_env-macos13.7.4-arm64-m2-max-2.10-nightly-cpu-section-pytorch-164943.txt"
M1_12_2 = "I-apple/collect_env-macos12.2.1-arm64-m1-conda-forge-py39-mps-unavailable-pytorch-78343.txt"
TRACEBACK = "I-apple/err-traceback-mps-backend-supported-on-macos-13.0-plus-on-13.7.4-nightly-pytorch-164943.txt"
DLOPEN = "I-apple/err-dlopen-libtorch-incompatible-architecture-have-x86_64-need-arm64-m1-invokeai-2152.txt"
M3 = "I-apple/system_profiler-SPDisplaysDataType-apple-m3-10-core-metal3-smctemp-26.txt"

ALL = (mps_available, native_python, tensorflow_metal)


def run(spec: CheckSpec, facts: Facts) -> Outcome:
    return spec.func(facts, CheckContext())


def facts_with(**items: str) -> Facts:
    evidence = Evidence()
    for name, text in items.items():
        evidence.add(EvidenceItem(name=name, kind="json" if name.endswith("json") else "file", text=text))
    return Facts(evidence)


def collect_env(relative: str) -> Facts:
    evidence = Evidence()
    evidence.add(EvidenceItem(name="torch-collect-env.txt", kind="file", text=fixture_text(relative)))
    return Facts(evidence)


# SYNTHETIC probe records in the probe contract's shape (gpudoctor/facts/framework_model.py): no Mac printed them.
MAC_PYTHON: dict[str, Any] = {
    "executable": "/opt/homebrew/bin/python3",
    "version": "3.12.3",
    "implementation": "CPython",
    "platform": "darwin",
    "machine": "arm64",
    "prefix": "/opt/homebrew",
    "base_prefix": "/opt/homebrew",
    "virtualenv": False,
    "conda_prefix": None,
    "mac_version": "14.4.1",
    "translated": False,
}


def probe(framework: str, version: str, python: dict[str, Any] | None = None, **keys: object) -> Evidence:
    record: dict[str, Any] = {
        "probe": framework,
        "probe_version": 1,
        "python": copy.deepcopy(python or MAC_PYTHON),
        "installed": True,
        "distribution": {"name": framework, "version": version, "installer": "pip", "direct_url": None},
        "import_ok": True,
        "import_error": None,
        "import_s": 1.0,
        "log_lines": [],
        "warnings": [],
        "loaded_libraries": [],
        "nvidia_packages": {},
        "version": version,
        **keys,
    }
    evidence = Evidence()
    evidence.add(EvidenceItem(name=f"framework-{framework}.json", kind="json", text=json.dumps(record)))
    return evidence


def test_rosetta_report_is_one_problem_with_the_arm64_python_fix() -> None:
    facts = collect_env(ROSETTA)
    for spec in (mps_available, native_python):
        outcome = run(spec, facts)
        assert outcome.status is Status.PROBLEM, spec.code
        (finding,) = outcome.findings
        assert finding.cause == "python-under-rosetta"  # the same cause: the runner folds MPS001 under MPS002's
        assert "Apple M2 Pro" in finding.message and "10.16" in finding.message
        assert finding.fix is not None
        assert any("Miniconda3-latest-MacOSX-arm64.sh" in c for c in finding.fix.commands)


def test_nightly_2_10_on_macos_13_7_4_is_below_its_14_0_floor() -> None:
    outcome = run(mps_available, collect_env(M2_MAX))
    assert outcome.status is Status.PROBLEM
    (finding,) = outcome.findings
    assert finding.cause == "mps-macos-too-old"
    assert "14.0" in finding.message and "13.7.4" in finding.message
    assert finding.fix is not None and 'python -m pip install "torch==2.5.*"' in finding.fix.commands
    assert run(native_python, collect_env(M2_MAX)).status is Status.OK


def test_m1_on_12_2_1_is_below_the_12_3_mps_launched_with() -> None:
    outcome = run(mps_available, collect_env(M1_12_2))
    assert outcome.status is Status.PROBLEM
    assert outcome.findings[0].cause == "mps-macos-too-old" and "12.3" in outcome.findings[0].message


def test_probed_mps_available_is_ok() -> None:
    facts = Facts(probe("torch", "2.5.1", mps_built=True, mps_available=True))
    assert run(mps_available, facts).status is Status.OK
    assert run(native_python, facts).status is Status.OK


def test_probed_built_but_unavailable_below_the_floor() -> None:
    python = dict(MAC_PYTHON, mac_version="12.7.6")  # pytorch/pytorch#139425's case, as a synthetic probe
    outcome = run(mps_available, Facts(probe("torch", "2.5.1", python, mps_built=True, mps_available=False)))
    assert outcome.status is Status.PROBLEM and outcome.findings[0].cause == "mps-macos-too-old"


def test_probed_built_but_unavailable_for_no_known_reason_is_a_warning_with_a_repro() -> None:
    python = dict(MAC_PYTHON, mac_version="26.3.1")  # pytorch/pytorch#177819's case, as a synthetic probe
    outcome = run(mps_available, Facts(probe("torch", "2.10.0", python, mps_built=True, mps_available=False)))
    assert outcome.status is Status.WARNING
    assert outcome.findings[0].fix is not None and "device='mps'" in outcome.findings[0].fix.commands[0]


def test_a_release_between_two_known_floors_is_a_warning_not_a_verdict() -> None:
    python = dict(MAC_PYTHON, mac_version="13.5")
    outcome = run(mps_available, Facts(probe("torch", "2.7.1", python, mps_built=True, mps_available=False)))
    assert outcome.status is Status.WARNING and outcome.findings[0].cause == "mps-macos-too-old"


def test_an_intel_mac_is_a_note() -> None:
    python = dict(MAC_PYTHON, machine="x86_64", translated=None, mac_version="13.6")
    evidence = probe("torch", "2.2.2", python, mps_built=True, mps_available=False)
    scan = {"is_macos": True, "machine": "x86_64", "mac_version": "13.6", "cpu_brand": "Intel(R) Core(TM) i9-9880H"}
    evidence.add(EvidenceItem(name="macos.json", kind="json", text=json.dumps(scan)))
    facts = Facts(evidence)
    outcome = run(mps_available, facts)
    assert outcome.status is Status.OK and outcome.findings[0].severity is Severity.INFO
    assert "2.2" in outcome.findings[0].message
    assert run(native_python, facts).status is Status.NOT_APPLICABLE


def test_tensorflow_without_metal_is_a_note_with_apples_command() -> None:
    outcome = run(tensorflow_metal, Facts(probe("tensorflow", "2.16.1", gpus=[], gpus_listed=True)))
    (finding,) = outcome.findings
    assert finding.severity is Severity.INFO and finding.cause == "tf-metal-missing"
    assert finding.fix is not None and finding.fix.commands == (
        "/opt/homebrew/bin/python3 -m pip install tensorflow-metal",
    )


def test_tensorflow_metal_listing_no_gpu_is_a_warning() -> None:
    facts = Facts(probe("tensorflow", "2.16.1", metal_plugin="1.1.0", gpus=[], gpus_listed=True))
    outcome = run(tensorflow_metal, facts)
    assert outcome.status is Status.WARNING and outcome.findings[0].cause == "tf-metal-plugin"
    ok = Facts(
        probe("tensorflow", "2.16.1", metal_plugin="1.1.0", gpus=[{"name": "/physical_device:GPU:0"}], gpus_listed=True)
    )
    assert run(tensorflow_metal, ok).status is Status.OK


def test_system_profiler_alone_judges_nothing() -> None:
    facts = facts_with(**{"system-profiler-displays.txt": fixture_text(M3)})
    assert {run(spec, facts).status for spec in ALL} == {Status.NOT_APPLICABLE}


@pytest.mark.parametrize("spec", ALL, ids=lambda s: s.code)
def test_not_applicable_off_a_mac(spec: CheckSpec) -> None:
    linux_python = dict(MAC_PYTHON, platform="linux", machine="x86_64", mac_version=None, translated=None)
    for evidence in (Evidence(), probe("torch", "2.5.1+cpu", linux_python, mps_built=False, mps_available=False)):
        assert run(spec, Facts(evidence)).status is Status.NOT_APPLICABLE


def test_signatures_catch_the_real_mps_errors() -> None:
    for relative, signature in (
        (TRACEBACK, "mps-backend-macos-version"),
        (DLOPEN, "macos-dylib-incompatible-architecture"),
    ):
        facts = facts_with(**{"pasted-text.txt": fixture_text(relative)})
        matches = [m for m in facts.signature_matches if m.signature.component == "mps"]
        assert [m.signature.id for m in matches] == [signature]


def test_every_fix_command_parses_in_bash() -> None:
    commands = list(apple_mps.arm64_python_commands())
    for facts in (collect_env(ROSETTA), collect_env(M2_MAX), Facts(probe("tensorflow", "2.16.1"))):
        for spec in ALL:
            commands += [c for f in run(spec, facts).findings if f.fix for c in f.fix.commands]
    assert len(commands) >= 8
    for command in commands:
        done = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, (command, done.stderr)


def test_floor_table_pairs_as_sourced() -> None:
    # shared/reference/accelerators.md section 3: 12.3 at launch, 13.0 for 2.5.1, 14.0 on 2.10; Intel Macs end at 2.2.
    floor = apple_mps.mps_macos_floor("2.5.1")
    assert floor is not None and (floor.macos, floor.exact) == ("13.0", True)
    floor = apple_mps.mps_macos_floor("2.10.0.dev20251008")
    assert floor is not None and floor.macos == "14.0"
    floor = apple_mps.mps_macos_floor("1.13.0.dev20220525")
    assert floor is not None and (floor.macos, floor.exact) == ("12.3", False)
    assert apple_mps.mps_macos_floor("1.11.0") is None and apple_mps.mps_macos_floor("junk") is None
    assert apple_mps.intel_mac_last_torch() == ("2.2", ("PT_114602", "PT_131766"))
    for key in ("MACRUMORS_PT", "PT_139425", "PT_177819", "PT_114602", "APPLE_TF_METAL"):
        assert (apple_mps.source_url(key) or "").startswith("https://")


REPL_78343 = "I-apple/python-repl-mps-is_built-true-is_available-false-macos12.2.1-m1-pytorch-78343.txt"
REPL_146236 = "I-apple/python-repl-rosetta-is_macos_or_newer-15-false-on-macos-15.3-pytorch-146236.txt"


def test_pasted_session_alone_built_but_unavailable_asks_for_the_macos_version() -> None:
    outcome = run(mps_available, facts_with(**{"pasted-text.txt": fixture_text(REPL_78343)}))
    assert outcome.status is Status.WARNING
    (finding,) = outcome.findings
    assert finding.cause == "mps-macos-too-old" and "12.3" in finding.message
    assert finding.fix is not None and "platform.mac_ver()" in finding.fix.commands[0]


def test_pasted_session_with_its_collect_env_is_below_the_floor() -> None:
    facts = facts_with(**{"pasted-text.txt": fixture_text(REPL_78343), "torch-collect-env.txt": fixture_text(M1_12_2)})
    outcome = run(mps_available, facts)
    assert outcome.status is Status.PROBLEM and outcome.data["mps_built"] is True
    assert "12.2.1" in outcome.findings[0].message


def test_torch_misreading_the_macos_version_points_at_rosetta() -> None:
    # Synthetic scan of a native-looking Mac on 15.3, with the real session in which torch denied macOS 15.0.
    scan = {
        "is_macos": True,
        "machine": "arm64",
        "mac_version": "15.3",
        "proc_translated": 0,
        "cpu_brand": "Apple M2 Pro",
    }
    facts = facts_with(**{"macos.json": json.dumps(scan), "pasted-text.txt": fixture_text(REPL_146236)})
    outcome = run(native_python, facts)
    assert outcome.status is Status.WARNING
    assert outcome.findings[0].cause == "python-under-rosetta" and "15.0" in outcome.findings[0].message


def test_no_older_torch_is_offered_that_has_no_wheel_for_this_python() -> None:
    # Synthetic: torch 2.10 on macOS 13.6 in Python 3.13, which torch 2.5 (the newest whose floor 13.6 meets) lacks.
    python = dict(MAC_PYTHON, mac_version="13.6", version="3.13.1")
    outcome = run(mps_available, Facts(probe("torch", "2.10.0", python, mps_built=True, mps_available=False)))
    (finding,) = outcome.findings
    assert finding.cause == "mps-macos-too-old" and finding.fix is not None
    assert not [c for c in finding.fix.commands if "torch==" in c]
