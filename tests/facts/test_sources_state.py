"""Why a source has nothing to say: not collected, failed (with the error), absent — never mixed up."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.sources_state import Why, source_run


def _facts(*items: EvidenceItem) -> Facts:
    evidence = Evidence()
    for item in items:
        evidence.add(item)
    return Facts(evidence)


def test_a_source_left_out_of_the_snapshot_is_not_collected() -> None:
    facts = _facts()
    run = facts.source(EvidenceKey.NVIDIA_SMI)
    assert not run.answered
    assert run.missing is not None and run.missing.why is Why.NOT_COLLECTED
    assert run.missing.words() == "nvidia-smi.txt not collected"


def test_a_command_that_is_not_installed_is_absent() -> None:
    facts = _facts(EvidenceItem("nvidia-smi.txt", "command", text=None, error="nvidia-smi: command not found"))
    missing = facts.missing(EvidenceKey.NVIDIA_SMI)
    assert missing is not None and missing.why is Why.ABSENT


def test_a_command_that_timed_out_failed_and_says_so() -> None:
    item = EvidenceItem("nvidia-smi.txt", "command", text=None, timed_out=True, argv=["nvidia-smi"])
    missing = _facts(item).missing(EvidenceKey.NVIDIA_SMI)
    assert missing is not None and missing.why is Why.FAILED and missing.error == "timed out"


def test_an_unreadable_file_failed_with_its_error() -> None:
    item = EvidenceItem("dmesg-nvidia.txt", "command", text=None, exit_code=1, error="dmesg: read kernel buffer failed")
    missing = _facts(item).missing(EvidenceKey.KERNEL_LOG)
    assert missing is not None and missing.why is Why.FAILED
    assert missing.error == "dmesg: read kernel buffer failed"


def test_an_error_message_is_an_answer_worth_reading() -> None:
    text = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    run = _facts(EvidenceItem("nvidia-smi.txt", "command", text=text, exit_code=9)).source(EvidenceKey.NVIDIA_SMI)
    assert run.answered and run.missing is None


def test_source_runs_keep_collection_order_and_signals() -> None:
    facts = _facts(
        EvidenceItem("uname.txt", "command", text="Linux", exit_code=0, argv=["uname", "-a"]),
        EvidenceItem("lspci.txt", "command", text=None, exit_code=-9, argv=["lspci"]),
        EvidenceItem("nvml.json", "json", text=None, exit_code=-15, timed_out=True),
    )
    runs = facts.source_runs
    assert [run.name for run in runs] == ["uname.txt", "lspci.txt", "nvml.json"]
    assert runs[1].killed_by_signal == 9 and runs[1].command_words == "lspci"
    assert runs[2].killed_by_signal is None  # our own timeout, not a crash


def test_a_source_this_version_does_not_know_still_gets_a_record() -> None:
    run = source_run("future-source.json", EvidenceItem("future-source.json", "json", text="{}"))
    assert run.key is None and run.answered


@given(
    text=st.one_of(st.none(), st.text(max_size=40)),
    stderr=st.text(max_size=40),
    error=st.one_of(st.none(), st.text(max_size=40)),
    exit_code=st.one_of(st.none(), st.integers(-64, 255)),
    timed_out=st.booleans(),
)
def test_any_item_gets_a_consistent_record(
    text: str | None, stderr: str, error: str | None, exit_code: int | None, timed_out: bool
) -> None:
    item = EvidenceItem(
        "nvidia-smi.txt", "command", text=text, stderr=stderr, error=error, exit_code=exit_code, timed_out=timed_out
    )
    run = source_run("nvidia-smi.txt", item)
    assert (run.missing is None) == bool(text)
    if timed_out and not text:
        assert run.missing is not None and run.missing.why is Why.FAILED
