"""The error-signature scan: wrapped messages match, quotes keep the lines, specific claims before generic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.signature_scan import scan_evidence, scan_text
from gpudoctor.kb.signatures import Signature, _needle, _needles


def _synthetic_signature(signature_id: str, pattern: str, severity: str = "problem") -> Signature:
    """A synthetic catalogue entry (the real catalogue is tested in tests/kb)."""
    return Signature(
        id=signature_id,
        source=pattern,
        meaning="synthetic",
        causes=("driver-too-old",),
        component="pytorch",
        severity=severity,
        examples=(),
        sources=(),
        group="synthetic",
        needles=_needles(pattern),
    )


TOO_OLD = _synthetic_signature("too-old", r"The NVIDIA driver on your system is too old \(found version \d+\)")
GENERIC = _synthetic_signature("generic", r"UserWarning: CUDA initialization", "warning")

# Real text from pytorch/pytorch#52675 as a terminal wrapped it (the wrap points are the synthetic part).
WRAPPED = """/prefix/miniconda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA
initialization: The NVIDIA driver on your system is too old
(found version 10010). Please update your GPU driver by downloading and installing a new version
  return torch._C._cuda_getDeviceCount() > 0
False
"""


def test_a_wrapped_message_matches_and_quotes_its_lines() -> None:
    (match,) = scan_text(WRAPPED, "pasted-text.txt", (TOO_OLD,))
    assert match.line == 2 and match.count == 1  # "The NVIDIA driver" starts on the second line
    assert match.quote.splitlines()[-1].startswith("(found version 10010)")


def test_an_earlier_signature_claims_its_lines_from_a_generic_one() -> None:
    matches = scan_text(WRAPPED, "pasted-text.txt", (TOO_OLD, GENERIC))
    assert [m.signature.id for m in matches] == ["too-old"]
    # Order decides: the generic one first takes the lines.
    assert [m.signature.id for m in scan_text(WRAPPED, "x", (GENERIC, TOO_OLD))] == ["generic"]


def test_needle_is_a_literal_every_match_contains() -> None:
    assert _needle(r"Failed to initialize NVML: Driver/library version mismatch") == (
        "failed to initialize nvml: driver/library version mismatch"
    )
    assert _needle(r"libcudart\.so(?:\.\d+)* ?: cannot open") == ": cannot open"
    assert _needle(r"a|b") == "" and _needle(r"abcdx?yz") == "abcd"
    assert _needles(r"cudaErrorNoDevice|no CUDA-capable device") == ("cudaerrornodevice", "no cuda-capable device")
    assert _needles(r"cudaErrorNoDevice|\d+") == ()


def test_json_probe_records_are_scanned_by_their_strings() -> None:
    evidence = Evidence()
    record = '{"run": {"error": "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)"}}'
    evidence.add(EvidenceItem(name=Ev.FRAMEWORK_TORCH.value, kind="json", text=record))
    evidence.add(EvidenceItem(name=Ev.ENV.value, kind="json", text='{"X": "too old (found version 1)"}'))
    found = scan_evidence(evidence)
    assert {m.source for m in found} <= {Ev.FRAMEWORK_TORCH.value}


@given(st.text(max_size=3000))
def test_any_text_scans_without_raising(text: str) -> None:
    for match in scan_text(text, "x", (TOO_OLD, GENERIC)):
        assert match.line >= 1 and match.quote


def test_a_message_run_into_cjk_prose_still_matches_at_its_word_boundary() -> None:
    # Real line (zhanghang1989/PyTorch-Encoding#383): the error follows Chinese text without a space.
    nvcc = _synthetic_signature("nvcc", r"\bnvcc fatal\s*: Unsupported gpu architecture")
    text = "宁好，我再gtx3090，cuda=11.0，pytorch=1.7的环境下尝试安装，但是报错nvcc fatal : Unsupported gpu architecture 'compute_86'"
    (match,) = scan_text(text, "x", (nvcc,))
    assert match.quote == text
