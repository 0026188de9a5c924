"""Not known is not absent: a source that printed "Could not collect" never clears a check.

A real ``collect_env`` report (read in place) is judged as ``gpudoctor check --from report.txt`` would judge
it; the SYNTHETIC variants replace one of its lines with the "Could not collect" that collect_env prints when
nvidia-smi fails, and nothing else.
"""

from __future__ import annotations

import re

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.results import Status
from gpudoctor_checks import pytorch
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import judge

RTX_5090D_CU126 = "E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"


def _pasted(report: str) -> Evidence:
    """What ``gpudoctor check --from report.txt`` reads: the report as its one source."""
    evidence = Evidence(origin={"kind": "file"})
    evidence.add(EvidenceItem(name=Ev.TORCH_COLLECT_ENV.value, kind="file", text=report))
    return evidence


def _could_not_collect(report: str, *labels: str) -> str:
    """SYNTHETIC: the report with each labelled line's value replaced by "Could not collect"."""
    for label in labels:
        report, count = re.subn(rf"(?m)^({re.escape(label)}:).*$", r"\1 Could not collect", report)
        assert count == 1, label
    return report


def test_the_real_report_names_its_driver_and_gpu():
    report = fixture_text(RTX_5090D_CU126)
    assert judge(pytorch.torch_driver, _pasted(report)).status is Status.OK
    assert judge(pytorch.torch_build_matches, _pasted(report)).status is Status.OK


def test_a_driver_that_could_not_be_collected_is_unknown_not_missing():
    report = _could_not_collect(fixture_text(RTX_5090D_CU126), "Nvidia driver version")
    result = judge(pytorch.torch_driver, _pasted(report))
    assert result.status is Status.NOT_APPLICABLE
    assert "not known" in result.summary and "Could not collect" in result.summary
    assert "no loaded NVIDIA driver" not in result.summary


def _without_torch_warning(report: str) -> str:
    """SYNTHETIC: the report without torch's "not compatible" warning, the one other place that names its GPU."""
    return "\n".join(line for line in report.splitlines() if "RTX 5090" not in line and "sm_120" not in line)


def test_gpus_that_could_not_be_collected_never_read_as_no_gpu():
    report = _could_not_collect(
        fixture_text(RTX_5090D_CU126), "GPU models and configuration", "Nvidia driver version"
    ).replace("Is CUDA available: True", "Is CUDA available: False")
    assert "Is CUDA available: False" in report
    # torch's warning still names the RTX 5090 D: a GPU is there, and nvidia-smi gave no driver version.
    result = judge(pytorch.torch_cuda_init, _pasted(report))
    assert result.status is Status.PROBLEM, result.summary
    assert result.findings[0].cause == "driver-not-loaded"
    assert "driver-not-installed" in result.findings[0].other_causes
    assert "no NVIDIA GPU" not in result.summary
    # Without the warning nothing says whether there is a GPU: a warning that says so, and what settles it.
    result = judge(pytorch.torch_cuda_init, _pasted(_without_torch_warning(report)))
    assert result.status is Status.WARNING, result.summary
    assert "not known" in result.summary and "Could not collect" in result.summary
    assert "nvidia-smi" in result.findings[0].fix.commands
    assert "no NVIDIA GPU" not in result.summary


def test_a_cpu_build_beside_gpus_that_could_not_be_collected_is_not_called_fine():
    report = _could_not_collect(fixture_text(RTX_5090D_CU126), "GPU models and configuration", "Nvidia driver version")
    report = report.replace("2.6.0+cu126", "2.6.0+cpu")
    report = re.sub(r"(?m)^CUDA used to build PyTorch:.*$", "CUDA used to build PyTorch: None", report)
    result = judge(pytorch.torch_build_matches, _pasted(_without_torch_warning(report)))
    # Unknown is not fine: a CPU build where a GPU may be is a warning, not "ok" and not silence.
    assert result.status is Status.WARNING, result.summary
    assert "not known" in result.summary and result.findings[0].cause == "torch-cpu-build"


def test_a_driver_version_in_the_report_means_there_is_a_gpu():
    # nvidia-smi prints its "Driver Version" only once NVML reached a GPU, so the report's driver line alone
    # shows one: a CPU build beside it is a problem, whatever the GPU list said.
    report = _could_not_collect(fixture_text(RTX_5090D_CU126), "GPU models and configuration")
    report = report.replace("2.6.0+cu126", "2.6.0+cpu")
    report = re.sub(r"(?m)^CUDA used to build PyTorch:.*$", "CUDA used to build PyTorch: None", report)
    result = judge(pytorch.torch_build_matches, _pasted(_without_torch_warning(report)))
    assert result.status is Status.PROBLEM, result.summary
    assert "570.124.04" in result.summary and result.findings[0].cause == "torch-cpu-build"
