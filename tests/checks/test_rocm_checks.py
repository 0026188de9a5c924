"""ROCM001-003 on real captures (shared fixtures G-amd) and on SYNTHETIC evidence where no capture exists."""

from __future__ import annotations

import json
import pathlib
import subprocess

from gpudoctor.api import CheckContext
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome, Severity
from gpudoctor_checks import rocm
from tests.facts.test_amd_facts import kfd_item
from tests.facts.test_rocminfo import SYNTHETIC_APU
from tests.helpers.fixtures import fixture_text

MI210_LSPCI = "G-amd/lspci-grep-mi-2x-mi210-aldebaran-display-controller-rocm-6281.txt"


def facts_of(*items: EvidenceItem) -> Facts:
    evidence = Evidence()
    for item in items:
        evidence.add(item)
    return Facts(evidence)


def command(name: str, fixture: str) -> EvidenceItem:
    return EvidenceItem(name=name, kind="command", text=fixture_text(fixture))


def modules(*names: str) -> EvidenceItem:
    """SYNTHETIC /proc/modules with these modules loaded."""
    return EvidenceItem(name="proc-modules.txt", kind="file", text="".join(f"{n} 16384 0 - Live 0x0\n" for n in names))


def sysfs(*devices: dict[str, object]) -> EvidenceItem:
    """SYNTHETIC pci-devices.json in the shape the sysfs scan writes."""
    return EvidenceItem(name="pci-devices.json", kind="json", text=json.dumps({"readable": True, "devices": devices}))


def mi210(bus: str, driver: str | None) -> dict[str, object]:
    return {"address": bus, "vendor": "0x1002", "device": "0x740f", "class": "0x038000", "driver": driver}


def run(spec: object, facts: Facts) -> Outcome:
    return spec.func(facts, CheckContext())  # type: ignore[attr-defined,no-any-return]


def severities(outcome: Outcome) -> list[Severity]:
    return [f.severity for f in outcome.findings]


def assert_commands_parse(outcome: Outcome) -> None:
    for finding in outcome.findings:
        for cmd in finding.fix.commands if finding.fix else ():
            done = subprocess.run(["bash", "-n", "-c", cmd], capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, (cmd, done.stderr)


def test_rocm001_not_applicable_without_amd() -> None:
    assert not run(rocm.amd_gpus_seen, facts_of()).applicable


def test_rocm001_lists_the_gpus_the_tools_see() -> None:
    facts = facts_of(
        command("rocm-smi.txt", "G-amd/gls-rocm-smi-a-4x-mi300x-sriov-driver-6.7.0.txt"),
        command("rocminfo.txt", "G-amd/gls-rocminfo-4x-mi300x-gfx942.txt"),
    )
    outcome = run(rocm.amd_gpus_seen, facts)
    assert outcome.applicable and not outcome.findings
    assert outcome.summary == "4 × AMD Instinct MI300X OAM (gfx942)"


def test_rocm001_two_mi210_and_amdgpu_not_loaded_is_a_problem() -> None:
    # The real `lspci | grep MI` of the two MI210; /proc/modules without amdgpu is SYNTHETIC.
    outcome = run(rocm.amd_gpus_seen, facts_of(command("lspci.txt", MI210_LSPCI), modules("nvme")))
    assert severities(outcome) == [Severity.PROBLEM]
    assert "amdgpu driver is not loaded" in outcome.summary and "0000:83:00.0" in outcome.summary
    fix = outcome.findings[0].fix
    assert fix is not None and fix.commands == ("sudo modprobe amdgpu", "sudo amdgpu-install --usecase=dkms")
    assert_commands_parse(outcome)


def test_rocm001_loaded_but_bound_to_nothing_synthetic() -> None:
    facts = facts_of(sysfs(mi210("0000:83:00.0", None), mi210("0000:c3:00.0", None)), modules("amdgpu"))
    outcome = run(rocm.amd_gpus_seen, facts)
    assert severities(outcome) == [Severity.PROBLEM] and "drives none of them" in outcome.summary
    assert_commands_parse(outcome)


def test_rocm001_bound_to_vfio_synthetic() -> None:
    facts = facts_of(sysfs(mi210("0000:83:00.0", "vfio-pci")), modules("vfio_pci"))
    outcome = run(rocm.amd_gpus_seen, facts)
    assert severities(outcome) == [Severity.WARNING] and "vfio-pci" in outcome.summary


def test_rocm001_tools_list_fewer_gpus_than_the_bus_synthetic() -> None:
    # The real MI210 amd-smi list (one GPU at 23:00.0); a second MI210 on the bus is SYNTHETIC.
    facts = facts_of(
        command("amd-smi-list.txt", "G-amd/amd-smi-list-1x-mi210-plus-ai-nic-dev-build-rocm-systems-pr3654.txt"),
        sysfs(mi210("0000:23:00.0", "amdgpu"), mi210("0000:c3:00.0", None)),
        modules("amdgpu"),
    )
    outcome = run(rocm.amd_gpus_seen, facts)
    assert severities(outcome) == [Severity.WARNING]
    assert "list 1 GPU, the PCI bus shows 2" in outcome.summary and "0000:c3:00.0" in outcome.summary
    assert_commands_parse(outcome)


def test_rocm001_partitions_of_one_gpu_counted_once_synthetic() -> None:
    # SYNTHETIC amd-smi list of one GPU in two partitions (functions .0 and .1 of one device).
    text = "GPU: 0\n    BDF: 0000:05:00.0\n    PARTITION_ID: 0\n\nGPU: 1\n    BDF: 0000:05:00.1\n    PARTITION_ID: 1\n"
    outcome = run(rocm.amd_gpus_seen, facts_of(EvidenceItem(name="amd-smi-list.txt", kind="command", text=text)))
    assert outcome.summary == "1 × AMD GPU (2 partitions)"


def test_rocm002_version_tools_and_the_deprecation_note() -> None:
    facts = facts_of(command("rocm-smi.txt", "G-amd/telegraf-rocm-smi-json-4x-mi100-rocm6.0.2-amdgpu-6.3.6.txt"))
    outcome = run(rocm.rocm_installed, facts)
    assert outcome.applicable and "tools answering: rocm-smi" in outcome.summary
    assert [f.message for f in outcome.findings] == ["rocm-smi is deprecated in favour of amd-smi"]


def test_rocm002_leaves_a_kfd_failure_to_rocm010() -> None:
    rocminfo = "G-amd/err-rocminfo-dev-kfd-permission-denied-rocm-terminal-container-rocm-docker-116.txt"
    outcome = run(rocm.rocm_installed, facts_of(command("rocminfo.txt", rocminfo)))
    assert not outcome.applicable  # the version is not known, and the failure is /dev/kfd's: ROCM010 says it
    assert "rocminfo failed: Unable to open /dev/kfd read-write: Permission denied (see ROCM010)" in outcome.summary


def test_rocm002_quotes_a_failing_tool_verbatim_synthetic() -> None:
    # SYNTHETIC failure text (no real capture of an amd-smi failure is in the corpus): quoted as printed.
    error = "ERROR: amdsmi library initialisation failed"
    facts = facts_of(EvidenceItem(name="amd-smi.txt", kind="command", text=error, exit_code=1))
    outcome = run(rocm.rocm_installed, facts)
    warnings = [f for f in outcome.findings if f.severity is Severity.WARNING]
    assert warnings and warnings[0].quote is not None and error in warnings[0].quote


def test_rocm002_not_applicable_without_amd() -> None:
    assert not run(rocm.rocm_installed, facts_of()).applicable


def test_rocm003_igpu_beside_a_discrete_gpu_synthetic() -> None:
    facts = facts_of(EvidenceItem(name="rocminfo.txt", kind="command", text=SYNTHETIC_APU))
    outcome = run(rocm.integrated_beside_discrete, facts)
    assert severities(outcome) == [Severity.WARNING]
    assert "AMD Radeon RX 7900 GRE" in outcome.summary and "0000:14:00.0" in outcome.summary
    fix = outcome.findings[0].fix
    assert fix is not None and fix.commands == ("export HIP_VISIBLE_DEVICES=0",)
    assert_commands_parse(outcome)


def test_rocm003_hidden_by_hip_visible_devices_is_a_note_synthetic() -> None:
    env = EvidenceItem(name="env.json", kind="json", text=json.dumps({"variables": {"HIP_VISIBLE_DEVICES": "0"}}))
    facts = facts_of(EvidenceItem(name="rocminfo.txt", kind="command", text=SYNTHETIC_APU), env)
    outcome = run(rocm.integrated_beside_discrete, facts)
    assert severities(outcome) == [Severity.INFO]


def test_rocm003_a_lone_apu_is_fine() -> None:
    facts = facts_of(
        command("amd-smi.txt", "G-amd/amd-smi-static-text-radeon-780m-phoenix3-apu-excerpt-pve-mods-348.txt")
    )
    outcome = run(rocm.integrated_beside_discrete, facts)
    assert outcome.applicable and not outcome.findings and "Phoenix3" in outcome.summary


def test_rocm003_not_applicable_on_instinct() -> None:
    facts = facts_of(command("rocminfo.txt", "G-amd/gls-rocminfo-4x-mi300x-gfx942.txt"))
    assert not run(rocm.integrated_beside_discrete, facts).applicable


def test_docstrings_have_the_explain_sections() -> None:
    for spec in (rocm.amd_gpus_seen, rocm.rocm_installed, rocm.integrated_beside_discrete):
        for section in ("What it checks:", "Why it matters:", "How to fix:"):
            assert section in spec.doc


def test_an_igpu_alone_on_the_bus_makes_no_noise() -> None:
    # The real Rembrandt lspci; /proc/modules without amdgpu is SYNTHETIC (e.g. an NVIDIA desktop).
    lspci = "G-amd/lspci-nn-rembrandt-radeon-680m-igpu-plus-hdmi-audio-function-isc30-pr119.txt"
    facts = facts_of(command("lspci.txt", lspci), modules("nvidia"))
    assert not run(rocm.amd_gpus_seen, facts).applicable
    assert not run(rocm.rocm_installed, facts).applicable


def test_rocm002_no_rocm_beside_a_discrete_gpu_synthetic() -> None:
    # SYNTHETIC: a discrete MI210 bound to amdgpu, and the install scan finding no /opt/rocm.
    facts = facts_of(
        sysfs(mi210("0000:83:00.0", "amdgpu")),
        EvidenceItem(name="rocm-install.json", kind="json", text=None, error="/opt/rocm: no such file or directory"),
    )
    outcome = run(rocm.rocm_installed, facts)
    assert severities(outcome) == [Severity.WARNING] and "no ROCm installation found" in outcome.summary
    fix = outcome.findings[0].fix
    assert fix is not None and fix.commands == ("sudo amdgpu-install --usecase=rocm",)
    assert_commands_parse(outcome)


def test_rocm001_cpx_partitions_from_the_kfd_topology(tmp_path: pathlib.Path) -> None:
    facts = facts_of(kfd_item(tmp_path, "G-amd/kfd-topology-8x-mi308x-gfx942-cpx-32-partitions"))
    outcome = run(rocm.amd_gpus_seen, facts)
    assert outcome.summary == "8 × AMD GPU (gfx942) (32 partitions)"
