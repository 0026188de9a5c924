"""ROCM020-022: PyTorch and TensorFlow builds against the AMD GPUs, and HSA_OVERRIDE_GFX_VERSION.

AMD GPUs come from real captures (../shared/fixtures/G-amd, values from INDEX.md); the framework probe records
and environments beside them are SYNTHETIC, written here in the probes' shape and named so.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpudoctor.api import Severity
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.snapshot import read_snapshot
from gpudoctor.results import Status
from gpudoctor_checks import rocm_frameworks as R
from tests.helpers.fixtures import fixture_text, real_fixtures_dir
from tests.synthetic.evidence import run

MI210_AMD_SMI = "G-amd/dme-amd-smi-static-json-1x-mi210-gfx90a-gpu_data-wrapper.txt"  # AMD Instinct MI210, gfx90a
RX6700XT_ROCM_SMI = "G-amd/telegraf-rocm-smi-json-rx6700xt-rocm6.1.2-driver-6.3.6.txt"  # GFX Version gfx1031


def _evidence(amd: tuple[str, str] | None = None, **records: Any) -> Evidence:
    evidence = Evidence(origin={"kind": "snapshot"})
    if amd is not None:
        name, relative = amd
        evidence.add(EvidenceItem(name=name, kind="command", text=fixture_text(relative)))
    for name, record in records.items():
        evidence.add(EvidenceItem(name=name.replace("_", "-") + ".json", kind="json", text=json.dumps(record)))
    return evidence


def _torch(version: str, cuda: str | None = None, hip: str | None = None, **more: Any) -> dict[str, Any]:
    """SYNTHETIC torch probe record (the shape of gpudoctor/probes/torch_probe.py's output)."""
    return {
        "probe": "torch",
        "probe_version": 1,
        "python": {"executable": "/opt/venv/bin/python", "version": "3.12.3", "platform": "linux", "machine": "x86_64"},
        "installed": True,
        "import_ok": True,
        "distribution": {"name": "torch", "version": version.split("+")[0], "installer": "pip"},
        "version": version,
        "cuda": cuda,
        "hip": hip,
        **more,
    }


def _env(**variables: str) -> dict[str, Any]:
    """SYNTHETIC env.json record."""
    return {"variables": variables, "present": sorted(variables)}


# ---------------------------------------------------------------------------------------------- ROCM020


def test_cuda_torch_on_an_amd_only_machine_is_a_problem_with_the_rocm_index() -> None:
    evidence = _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_torch=_torch("2.6.0+cu124", cuda="12.4"))
    outcome = run(R.torch_build_fits_amd, evidence)
    assert outcome.status is Status.PROBLEM
    (finding,) = outcome.findings
    assert "CUDA 12.4 build" in finding.message and "AMD Instinct MI210 (gfx90a)" in finding.message
    assert finding.cause == "rocm-torch-not-rocm-build"
    assert finding.fix is not None
    install = finding.fix.commands[-1]
    assert install.startswith(
        "/opt/venv/bin/python -m pip install torch --index-url https://download.pytorch.org/whl/rocm"
    )


def test_cpu_torch_on_an_amd_machine_is_a_problem() -> None:
    evidence = _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_torch=_torch("2.6.0+cpu"))
    outcome = run(R.torch_build_fits_amd, evidence)
    assert outcome.status is Status.PROBLEM
    assert "CPU-only build" in outcome.findings[0].message


def test_a_rocm_torch_without_the_gpus_target_offers_the_override_as_a_workaround() -> None:
    # RX 6700 XT (gfx1031, real rocm-smi capture) with a torch whose arch list lacks it (SYNTHETIC probe).
    torch = _torch("2.5.1+rocm6.2", hip="6.2.41133", arch_list=["gfx900", "gfx906", "gfx90a", "gfx1030", "gfx1100"])
    outcome = run(R.torch_build_fits_amd, _evidence(("rocm-smi.txt", RX6700XT_ROCM_SMI), framework_torch=torch))
    assert outcome.status is Status.PROBLEM
    (finding,) = outcome.findings
    assert "no code for gfx1031" in finding.message and finding.cause == "rocm-gfx-not-in-build"
    assert finding.fix is not None and "Workaround, not support" in finding.fix.summary
    assert finding.fix.commands[0] == "export HSA_OVERRIDE_GFX_VERSION=10.3.0"


def test_a_target_with_no_sibling_in_the_build_gets_no_override() -> None:
    torch = _torch("2.5.1+rocm6.2", hip="6.2.41133", arch_list=["gfx90a", "gfx942"])  # SYNTHETIC
    outcome = run(R.torch_build_fits_amd, _evidence(("rocm-smi.txt", RX6700XT_ROCM_SMI), framework_torch=torch))
    (finding,) = outcome.findings
    assert finding.fix is not None and not finding.fix.commands and "source" in finding.fix.summary


def test_a_rocm_torch_with_the_target_is_ok() -> None:
    torch = _torch("2.9.0+rocm6.4", hip="6.4.43482", arch_list=["gfx90a", "gfx942"])  # SYNTHETIC
    outcome = run(R.torch_build_fits_amd, _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_torch=torch))
    assert outcome.status is Status.OK and "gfx90a" in outcome.summary


def test_the_knowledge_base_list_is_used_when_torch_did_not_say() -> None:
    torch = _torch("2.11.0+rocm7.2", hip="7.2.0")  # SYNTHETIC: no arch_list in the record
    outcome = run(R.torch_build_fits_amd, _evidence(("rocm-smi.txt", RX6700XT_ROCM_SMI), framework_torch=torch))
    assert outcome.status is Status.PROBLEM
    assert "PyTorch's rocm7.2 wheels" in outcome.findings[0].message


def test_no_amd_gpu_is_not_applicable() -> None:
    outcome = run(R.torch_build_fits_amd, _evidence(framework_torch=_torch("2.6.0+cu124", cuda="12.4")))
    assert outcome.status is Status.NOT_APPLICABLE


def _from_report(name: str) -> Evidence:
    path = real_fixtures_dir() / "G-amd" / name
    if not path.exists():
        pytest.skip(f"real fixture {name} not available")
    return read_snapshot(str(path))


def test_real_collect_env_mi250x_rocm62_build() -> None:
    # INDEX.md G5: torch 2.6.0.dev20240918+rocm6.2, AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-).
    outcome = run(R.torch_build_fits_amd, _from_report("collect_env-vllm-rocm6.2-mi250x-gfx90a-excerpt-vllm-10663.txt"))
    assert outcome.status is Status.OK
    assert "HIP 6.2.41133-dd7f95766" in outcome.summary and "gfx90a" in outcome.summary
    assert outcome.data["gfx"] == ["gfx90a"]


def test_real_collect_env_rx9070xt_preview_build() -> None:
    # INDEX.md G5: ROCm 6.4 preview on Windows, AMD Radeon RX 9070 XT (gfx1201); a source build, no wheel list.
    name = "collect_env-rocm-windows-rx9070xt-gfx1201-rocm6.4-preview-excerpt-rocm-5441.txt"
    outcome = run(R.torch_build_fits_amd, _from_report(name))
    assert outcome.status is Status.OK and "gfx1201" in outcome.summary
    assert outcome.findings[0].severity is Severity.INFO


def test_real_collect_env_radeon_vii_without_a_target() -> None:
    # INDEX.md G5: "GPU models and configuration: Device 66a1", ROCm 3.7: a GPU PyTorch sees, target unknown.
    name = "collect_env-rocm3.7-radeon-vii-device-66a1-early-format-excerpt-pytorch-pr44106.txt"
    outcome = run(R.torch_build_fits_amd, _from_report(name))
    assert outcome.status is Status.OK and "not known" in outcome.summary


# ---------------------------------------------------------------------------------------------- ROCM021


def test_the_override_within_one_family_is_a_note_with_both_targets() -> None:
    evidence = _evidence(("rocm-smi.txt", RX6700XT_ROCM_SMI), env=_env(HSA_OVERRIDE_GFX_VERSION="10.3.0"))
    outcome = run(R.gfx_override, evidence)
    assert outcome.status is Status.OK
    (finding,) = outcome.findings
    assert finding.severity is Severity.INFO
    assert "(gfx1031) as gfx1030" in finding.message and "workaround" in finding.message


def test_the_override_across_families_is_a_warning() -> None:
    evidence = _evidence(("amd-smi.txt", MI210_AMD_SMI), env=_env(HSA_OVERRIDE_GFX_VERSION="10.3.0"))
    outcome = run(R.gfx_override, evidence)
    assert outcome.status is Status.WARNING
    assert "gfx90a, CDNA2) as gfx1030 (RDNA2)" in outcome.findings[0].message
    assert outcome.findings[0].fix is not None
    assert outcome.findings[0].fix.commands == ("unset HSA_OVERRIDE_GFX_VERSION",)


@pytest.mark.parametrize("value", ["gfx1030", "10.3", "ten"])
def test_an_unreadable_override_is_a_warning(value: str) -> None:
    evidence = _evidence(("amd-smi.txt", MI210_AMD_SMI), env=_env(HSA_OVERRIDE_GFX_VERSION=value))
    assert run(R.gfx_override, evidence).status is Status.WARNING


def test_no_override_is_not_applicable() -> None:
    evidence = _evidence(("amd-smi.txt", MI210_AMD_SMI), env=_env(PATH="/usr/bin"))
    assert run(R.gfx_override, evidence).status is Status.NOT_APPLICABLE


# ---------------------------------------------------------------------------------------------- ROCM022


def _tensorflow(**more: Any) -> dict[str, Any]:
    """SYNTHETIC tensorflow probe record."""
    return {
        "probe": "tensorflow",
        "probe_version": 1,
        "installed": True,
        "import_ok": True,
        "distribution": {"name": more.pop("name", "tensorflow"), "version": "2.17.0", "installer": "pip"},
        "version": "2.17.0",
        **more,
    }


def test_cuda_tensorflow_on_amd_is_a_warning_pointing_at_amds_build() -> None:
    record = _tensorflow(build_info={"is_cuda_build": True, "cuda_version": "12.3"})
    outcome = run(R.tensorflow_on_amd, _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_tensorflow=record))
    assert outcome.status is Status.WARNING
    (finding,) = outcome.findings
    assert "tensorflow-rocm" in (finding.fix.summary if finding.fix else "")
    assert finding.fix is not None and finding.fix.commands == ("docker pull rocm/tensorflow:latest",)


def test_tensorflow_rocm_distribution_is_ok() -> None:
    record = _tensorflow(name="tensorflow-rocm")
    outcome = run(R.tensorflow_on_amd, _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_tensorflow=record))
    assert outcome.status is Status.OK and "ROCm build" in outcome.summary


# ---------------------------------------------------------------------------------------------- ROCM023


def test_real_collect_env_gfx90a_is_supported_by_rocm_62() -> None:
    outcome = run(
        R.gpu_supported_by_rocm, _from_report("collect_env-vllm-rocm6.2-mi250x-gfx90a-excerpt-vllm-10663.txt")
    )
    assert outcome.status is Status.OK and outcome.summary == "ROCm 6.2: gfx90a supported"


def test_a_consumer_radeon_left_out_of_the_release_list_is_a_warning_with_the_workaround() -> None:
    torch = _torch("2.5.1+rocm6.2", hip="6.2.41133-dd7f95766")  # SYNTHETIC probe; the GPU is the real RX 6700 XT
    outcome = run(R.gpu_supported_by_rocm, _evidence(("rocm-smi.txt", RX6700XT_ROCM_SMI), framework_torch=torch))
    assert outcome.status is Status.WARNING
    message = outcome.findings[0].message
    assert "(gfx1031) is not listed in ROCm 6.2's supported GPUs" in message and "10.3.0" in message


def test_a_release_without_a_list_says_so() -> None:
    torch = _torch("2.3.0+rocm6.0", hip="6.0.32830")  # SYNTHETIC
    outcome = run(R.gpu_supported_by_rocm, _evidence(("amd-smi.txt", MI210_AMD_SMI), framework_torch=torch))
    assert outcome.status is Status.OK and "no supported-GPU list" in outcome.summary


def test_the_causes_fix_is_built_for_this_machine_like_rocm020s() -> None:
    """The cause catalogue's `rocm-torch-install` resolves to the same wheel ROCM020 prints (one builder)."""
    from gpudoctor.facts.facts import Facts
    from gpudoctor_checks._cause_fixes import fix_for

    rocm_install = {"installs": [{"path": "/opt/rocm-6.2.2", "realpath": "/opt/rocm-6.2.2", "info": {}}]}
    evidence = _evidence(
        ("amd-smi.txt", MI210_AMD_SMI), framework_torch=_torch("2.6.0+cu124", cuda="12.4"), rocm_install=rocm_install
    )
    built = fix_for("rocm-torch-install", Facts(evidence))
    check = run(R.torch_build_fits_amd, evidence).findings[0].fix
    assert built is not None and check is not None and built.commands == check.commands
    assert built.commands[-1].endswith("--index-url https://download.pytorch.org/whl/rocm6.2")
