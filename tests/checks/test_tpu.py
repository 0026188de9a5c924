"""TPU001-TPU003 and the TPU error signatures on the real captures in ../shared/fixtures/J-tpu, with SYNTHETIC
sysfs scans, JAX probe records and lock-file scans where only a live TPU VM could give them."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from gpudoctor.api import Severity
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.signature_scan import scan_text
from gpudoctor_checks import tpu as tpu_checks
from tests.helpers.fixtures import fixture_text
from tests.synthetic import framework_probe_json as synthetic
from tests.synthetic.evidence import judge

J = "J-tpu/"
IN_USE_PID = J + "err-jax-debug-log-unable-to-initialize-backend-tpu-aborted-tpu-in-use-by-pid-jax-22070.txt"
STALE_LOCK = J + "err-libtpu-already-in-use-stale-lockfile-falling-back-to-cpu-jax-10192.txt"
ACCEL_DENIED = J + "err-torch-xla-couldnt-open-dev-accel0-operation-not-permitted-tpu-vm-excerpt-pytorch-xla-3078.txt"
V2_8 = J + "jax-devices-v2-8-tpu-vm-8-TpuDevice-jax0.2.17-jax-8809.txt"
CHECKS = (tpu_checks.jax_sees_tpu, tpu_checks.libtpu_installed, tpu_checks.tpu_not_held)


def _evidence(**items: tuple[str, str]) -> Evidence:
    evidence = Evidence()
    for name, (kind, text) in items.items():
        evidence.add(EvidenceItem(name=name, kind=kind, text=text))
    return evidence


def _paste(relative: str) -> Evidence:
    return _evidence(**{"pasted-text.txt": ("file", fixture_text(relative))})


def _v4_machine(backend: str, libtpu: dict[str, str] | None, lockfile: bool = False) -> Evidence:
    """SYNTHETIC: four v4 chips on the bus with their /dev/accelN, a JAX probe record, the lock-file scan."""
    sysfs = {
        "readable": True,
        "devices": [
            {"address": f"0000:0{i}:00.0", "vendor": "0x1ae0", "device": "0x005e", "class": "0x120000"}
            for i in range(4)
        ],
    }
    nodes = {"nodes": {f"/dev/accel{i}": {"char_device": True} for i in range(4)}, "groups": []}
    probe = copy.deepcopy(synthetic.SYNTHETIC_JAX_CPU_FALLBACK)
    probe.update(default_backend=backend, devices=[{"id": 0, "platform": backend, "device_kind": "cpu"}])
    if libtpu is not None:
        probe["libtpu"] = libtpu
    runtime = {"lockfile": {"path": "/tmp/libtpu_lockfile", "exists": lockfile, "mtime": 1.0, "uid": 0}}
    return _evidence(
        **{
            "pci-devices.json": ("json", json.dumps(sysfs)),
            "accel-device-nodes.json": ("json", json.dumps(nodes)),
            "framework-jax.json": ("json", json.dumps(probe)),
            "tpu-runtime.json": ("json", json.dumps(runtime)),
        }
    )


def _bash_ok(commands: tuple[str, ...]) -> None:
    for command in commands:
        assert subprocess.run(["bash", "-n", "-c", command], check=False).returncode == 0, command


# ----------------------------------------------------------------------------------------- signatures


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        (IN_USE_PID, {"tpu-in-use-by-pid", "jax-tpu-libtpu-not-installed-warning"}),
        (STALE_LOCK, {"libtpu-already-in-use"}),
        (ACCEL_DENIED, {"tpu-accel-open-not-permitted"}),
    ],
)
def test_each_real_tpu_error_matches_its_signature(relative: str, expected: set[str]) -> None:
    found = {m.signature.id for m in scan_text(fixture_text(relative), "pasted-text.txt")}
    assert expected <= found
    assert all(
        m.signature.component == "tpu" for m in scan_text(fixture_text(relative), "x") if m.signature.id in expected
    )


def test_healthy_listings_match_no_tpu_signature() -> None:
    for relative in (V2_8,):
        assert not [m for m in scan_text(fixture_text(relative), "x") if m.signature.component == "tpu"]


# ----------------------------------------------------------------------------------------- checks


def test_no_tpu_evidence_is_not_applicable_for_every_check() -> None:
    for check in CHECKS:
        assert judge(check, _evidence()).status.value == "not_applicable"


def test_tpu_in_use_by_pid_is_a_problem_naming_the_pid_and_the_misleading_warning() -> None:
    evidence = _paste(IN_USE_PID)
    held = judge(tpu_checks.tpu_not_held, evidence)
    [problem] = [f for f in held.findings if f.severity is Severity.PROBLEM]
    assert "176028" in problem.message and "misleading" in problem.message
    assert problem.cause == "tpu-held-by-other-process"
    assert problem.fix is not None and "sudo lsof -w /dev/accel0" in problem.fix.commands
    _bash_ok(problem.fix.commands)
    seen = judge(tpu_checks.jax_sees_tpu, evidence)
    assert [f.severity for f in seen.findings] == [Severity.PROBLEM]
    assert "CPU" in seen.findings[0].message


def test_libtpu_already_in_use_offers_the_stale_lock_file_fix() -> None:
    result = judge(tpu_checks.tpu_not_held, _paste(STALE_LOCK))
    [problem] = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert problem.fix is not None
    assert problem.fix.commands == (
        "sudo lsof -w /dev/accel0",
        "sudo rm /tmp/libtpu_lockfile   # only when lsof listed no process",
    )
    _bash_ok(problem.fix.commands)


def test_accel0_operation_not_permitted_is_a_held_device() -> None:
    result = judge(tpu_checks.tpu_not_held, _paste(ACCEL_DENIED))
    [problem] = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert "/dev/accel0 (Operation not permitted)" in problem.message


def test_pasted_v2_8_listing_is_ok() -> None:
    result = judge(tpu_checks.jax_sees_tpu, _paste(V2_8))
    assert result.findings == [] and "8 TPU devices (4 chips)" in result.summary


def test_synthetic_chips_on_the_bus_but_jax_on_cpu_without_libtpu() -> None:
    evidence = _v4_machine("cpu", libtpu={})
    seen = judge(tpu_checks.jax_sees_tpu, evidence)
    [problem] = seen.findings
    assert problem.severity is Severity.PROBLEM and "4 TPU chips (v4)" in problem.message
    assert problem.cause == "libtpu-not-installed"
    libtpu = judge(tpu_checks.libtpu_installed, evidence)
    [missing] = libtpu.findings
    assert missing.severity is Severity.PROBLEM and missing.fix is not None
    assert missing.fix.commands[0].endswith('-m pip install -U "jax[tpu]"')
    _bash_ok(missing.fix.commands)


def test_synthetic_libtpu_installed_is_ok() -> None:
    result = judge(tpu_checks.libtpu_installed, _v4_machine("cpu", libtpu={"libtpu": "0.0.2"}))
    assert result.findings == [] and "libtpu 0.0.2" in result.summary


def test_synthetic_lock_file_with_jax_on_cpu_is_a_stale_lock_problem() -> None:
    result = judge(tpu_checks.tpu_not_held, _v4_machine("cpu", libtpu={"libtpu": "0.0.2"}, lockfile=True))
    [problem] = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert problem.cause == "libtpu-stale-lockfile" and "/tmp/libtpu_lockfile" in problem.message


def test_synthetic_lock_file_while_jax_uses_the_tpu_is_only_a_note() -> None:
    evidence = _v4_machine("tpu", libtpu={"libtpu": "0.0.2"}, lockfile=True)
    result = judge(tpu_checks.tpu_not_held, evidence)
    assert [f.severity for f in result.findings] == [Severity.INFO]


def test_synthetic_jax_sees_one_of_four_chips_is_a_warning() -> None:
    evidence = _v4_machine("tpu", libtpu={"libtpu": "0.0.2"})
    probe = json.loads(evidence.text("framework-jax.json") or "{}")
    probe["devices"] = [{"id": 0, "platform": "tpu", "device_kind": "TPU v4", "process_index": 0, "coords": [0, 0, 0]}]
    evidence.add(EvidenceItem(name="framework-jax.json", kind="json", text=json.dumps(probe)))
    result = judge(tpu_checks.jax_sees_tpu, evidence)
    assert [f.severity for f in result.findings] == [Severity.WARNING]
    assert "of the 4 TPU chips (v4)" in result.findings[0].message


def test_jaxs_cuda_backend_failing_on_a_tpu_machine_is_expected() -> None:
    """The real JAX debug log of a TPU VM tries cpu, cuda, rocm, tpu: its CUDA failure is a note there, not a
    warning; the same line with nothing naming a TPU stays a warning."""
    from gpudoctor.results import Status
    from gpudoctor_checks import signatures
    from tests.synthetic.evidence import run

    relative = "J-tpu/err-jax-debug-log-unable-to-initialize-backend-tpu-aborted-tpu-in-use-by-pid-jax-22070.txt"
    outcome = run(signatures.JAX002, _paste(relative))
    assert outcome.status is Status.OK
    assert all("this is a TPU machine" in f.message for f in outcome.findings if f.severity is Severity.INFO)
    lines = fixture_text(relative).splitlines()
    first = next(i for i, line in enumerate(lines) if "Unable to initialize backend 'cuda'" in line)
    cuda_lines = "\n".join(lines[first : first + 2])  # the message and the reason on the line after it
    alone = run(signatures.JAX002, _evidence(**{"pasted-text.txt": ("file", cuda_lines)}))
    assert alone.status is Status.WARNING
