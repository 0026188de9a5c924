"""Which vendors the evidence names: only theirs are parsed and checked, the others cost nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.api import CheckContext
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.registry import load_registry
from gpudoctor.results import Status
from gpudoctor.runner import run_check


def _facts(*items: EvidenceItem) -> Facts:
    evidence = Evidence()
    for item in items:
        evidence.add(item)
    return Facts(evidence)


def _paste(text: str) -> Facts:
    return _facts(EvidenceItem(name="pasted-text.txt", kind="file", text=text))


def test_nothing_names_no_vendor() -> None:
    assert _facts().vendors_in_evidence == frozenset()


@pytest.mark.parametrize(
    ("text", "vendor"),
    [
        ("RuntimeError: HIP error: invalid device function", "amd"),
        ("amdgpu 0000:83:00.0: amdgpu: Fatal error during GPU init", "amd"),
        ("[TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0)]", "google"),
        ("RuntimeError: The MPS backend is supported on MacOS 13.0+.", "apple"),
        ("[level_zero:gpu][level_zero:0] Intel(R) Arc(TM) A770 Graphics", "intel"),
    ],
)
def test_a_pasted_line_names_its_vendor(text: str, vendor: str) -> None:
    assert vendor in _paste(text).vendors_in_evidence


def test_words_inside_other_words_name_nothing() -> None:
    """SYNTHETIC text: "output" holds t-p-u, "chipset" h-i-p, "dumps" m-p-s; none of them is a vendor's word."""
    text = "the output of the chipset dumps shows nothing; Tesla T4 on driver 550"
    assert _paste(text).vendors_in_evidence == frozenset()


def test_a_vendor_check_is_not_applicable_where_nothing_names_the_vendor() -> None:
    registry = load_registry()
    facts = _facts()
    for code in ("ROCM001", "XPU001", "MPS001", "TPU001"):
        spec = registry.by_code(code)
        assert spec is not None and spec.vendor is not None
        result = run_check(spec, facts, CheckContext({}))
        assert result.status is Status.NOT_APPLICABLE and "nothing" in result.summary


def test_the_pci_bus_alone_names_a_vendor() -> None:
    """SYNTHETIC sysfs scan record: one AMD MI210 function, no driver, no tool."""
    record = {"readable": True, "devices": [{"address": "0000:83:00.0", "vendor": "0x1002", "device": "0x740f",
                                             "class": "0x038000"}]}  # fmt: skip
    facts = _facts(EvidenceItem(name="pci-devices.json", kind="json", text=json.dumps(record)))
    assert facts.vendors_in_evidence == frozenset({"amd"})
    assert [a.vendor.value for a in facts.accelerators] == ["amd"]


def test_a_check_of_a_machine_without_other_vendors_loads_none_of_their_models(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The whole report of an empty snapshot, in a fresh interpreter: no AMD, Intel, Apple or TPU model is imported."""
    (tmp_path / "os-release").write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    code = (
        "import sys; from gpudoctor.evidence.snapshot import read_snapshot; "
        "from gpudoctor.commands.report import build_report; "
        f"build_report(read_snapshot({str(tmp_path)!r}), {{}}); "
        "print(sorted(m for m in sys.modules if m.split('.')[-1] in "
        "('amd_model', 'intel_model', 'apple_model', 'tpu_model', 'amd_smi', 'rocm_smi', 'xpu_smi', 'jax_devices')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="tpuo libTPU_xdhasm\n", max_size=400))
def test_the_window_search_finds_what_a_whole_text_regex_finds(text: str) -> None:
    """The literal-then-window search agrees with the plain regex over the whole (lower-cased) text."""
    from gpudoctor.facts.vendor_presence import _TEXT_WORDS, _has_word

    lowered = text.lower()
    for words in _TEXT_WORDS.values():
        for literal, confirm in words:
            expected = bool(confirm.search(lowered)) if confirm is not None else literal in lowered
            assert _has_word(lowered, literal, confirm) == expected
