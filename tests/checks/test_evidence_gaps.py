"""COL002: unknown is not healthy. A GPU is expected but the evidence does not show it working."""

from __future__ import annotations

from gpudoctor.api import CheckContext
from gpudoctor.evidence.snapshot import paste_evidence
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Status
from gpudoctor_checks.evidence_gaps import evidence_clears_gpu
from tests.helpers.fixtures import fixture_text

CTX = CheckContext({})


def _outcome(text: str):  # type: ignore[no-untyped-def]
    return evidence_clears_gpu.func(Facts(paste_evidence(text.encode(), "paste")), CTX)


def test_a_cuda_build_with_nothing_else_known_is_a_warning_naming_what_settles_it() -> None:
    # Synthetic: the first lines of a collect_env report, the rest not pasted.
    outcome = _outcome("PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n")
    assert outcome.status is Status.WARNING
    (finding,) = outcome.findings
    assert finding.cause == "gpu-stack-unverified"
    assert "nvidia-smi" in finding.fix.commands and any("gpudoctor collect" in c for c in finding.fix.commands)


def test_a_working_nvidia_smi_table_clears_the_driver() -> None:
    outcome = _outcome(fixture_text("C/gls-8x-h100-sxm-565.57.01.txt"))
    assert outcome.status is Status.OK


def test_text_with_no_gpu_in_it_expects_nothing() -> None:
    assert _outcome("Traceback (most recent call last):\nValueError: bad shape\n").status is Status.NOT_APPLICABLE
