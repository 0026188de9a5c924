"""The node verdict a scheduler acts on (gpudoctor.verdict), judged over reports built from real snapshots:
the healthy H100 recorded on a lent machine, a CPU container, and snapshot folders written here holding a real
nvidia-smi error text from ../shared/fixtures.  The one line must fit a Slurm drain reason and a
node-problem-detector condition message (which keeps 80 characters): the check code and the cause first."""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.commands.node_run import NodeRun, produce_report, verdict_of
from gpudoctor.kb.fix_texts import all_fix_texts
from gpudoctor.results import Report, Status
from gpudoctor.verdict import (
    MAX_REASON_CHARS,
    REASON_PREFIX,
    VerdictState,
    brief_fix,
    node_verdict,
    one_line,
)
from tests.helpers.fixtures import fixture_text
from tests.helpers.strategies import any_code_points

RECORDED = pathlib.Path(__file__).resolve().parents[1] / "recorded"
HEALTHY_H100 = RECORDED / "h100-80gb-hbm3-vm"
CPU_CONTAINER = RECORDED / "cpu-container-debian"
VERSION_MISMATCH = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"
NO_DRIVER = "C/err-couldnt-communicate-kernel-upgrade-gcp-pr18.txt"
# node-problem-detector keeps this much of a custom plugin's output by default (max_output_length).
NPD_OUTPUT_CHARS = 80


def report_of(path: pathlib.Path, **options: Any) -> Report:
    args = argparse.Namespace(from_path=str(path), level="standard", **options)
    return produce_report(args).report


def snapshot_with_smi_text(tmp_path: pathlib.Path, fixture: str) -> pathlib.Path:
    """A snapshot folder holding only nvidia-smi.txt: a real nvidia-smi error output, verbatim."""
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "nvidia-smi.txt").write_text(fixture_text(fixture), encoding="utf-8")
    return folder


def assert_fit_for_a_scheduler(line: str) -> None:
    assert line.startswith(REASON_PREFIX)
    assert len(line) - len(REASON_PREFIX) <= MAX_REASON_CHARS
    assert "\n" not in line and "\r" not in line
    assert all(" " <= ch <= "~" for ch in line), line  # plain ASCII: sinfo cuts columns by bytes


def test_the_healthy_h100_is_ok_under_every_convention() -> None:
    verdict = node_verdict(report_of(HEALTHY_H100))
    assert verdict.state is VerdictState.OK
    assert verdict.code is None
    assert verdict.line().startswith("gpudoctor: ok: ")
    assert (verdict.exit_code("gpudoctor"), verdict.exit_code("npd"), verdict.exit_code("nagios")) == (0, 0, 0)
    assert_fit_for_a_scheduler(verdict.line())


def test_a_real_version_mismatch_names_the_check_the_cause_and_the_fix_first(tmp_path: pathlib.Path) -> None:
    verdict = node_verdict(report_of(snapshot_with_smi_text(tmp_path, VERSION_MISMATCH)))
    assert verdict.state is VerdictState.PROBLEM
    assert verdict.code == "DRV002"
    assert verdict.reason.startswith("DRV002 Driver/library version mismatch")
    assert verdict.reason.endswith("-> Reboot")  # the fix's instruction, not its first sentence (the cause)
    shown_by_npd = verdict.line()[:NPD_OUTPUT_CHARS]
    assert "DRV002" in shown_by_npd and "mismatch" in shown_by_npd
    assert (verdict.exit_code("gpudoctor"), verdict.exit_code("npd"), verdict.exit_code("nagios")) == (1, 1, 2)
    assert_fit_for_a_scheduler(verdict.line())


def test_a_driver_that_does_not_answer_is_drained_with_the_module_to_load(tmp_path: pathlib.Path) -> None:
    verdict = node_verdict(report_of(snapshot_with_smi_text(tmp_path, NO_DRIVER)))
    assert verdict.state is VerdictState.PROBLEM
    assert verdict.code == "DRV001"
    assert "-> Load the NVIDIA kernel module" in verdict.reason
    assert_fit_for_a_scheduler(verdict.line())


def test_a_failed_gate_comes_first_and_the_other_problems_are_counted(tmp_path: pathlib.Path) -> None:
    report = report_of(snapshot_with_smi_text(tmp_path, VERSION_MISMATCH), require_gpu=True)
    problems = report.counts()[Status.PROBLEM.value]
    assert problems >= 2
    verdict = node_verdict(report)
    assert verdict.code == "GATE001"
    assert verdict.reason.startswith("GATE001 ")
    assert verdict.reason.endswith(f" (+{problems - 1} more)")
    assert verdict.problems == problems
    assert_fit_for_a_scheduler(verdict.line())


def test_a_problem_found_stands_when_the_run_was_cut_short(tmp_path: pathlib.Path) -> None:
    report = report_of(snapshot_with_smi_text(tmp_path, VERSION_MISMATCH))
    verdict = node_verdict(report, stopped="the 5 s budget ran out")
    assert verdict.state is VerdictState.PROBLEM and verdict.code == "DRV002"


def test_a_healthy_run_cut_short_is_not_judged() -> None:
    verdict = verdict_of(NodeRun(report_of(HEALTHY_H100), stopped="the 5 s budget ran out"), argparse.Namespace())
    assert verdict.state is VerdictState.UNKNOWN
    assert verdict.code is None
    assert verdict.reason == "not judged: the 5 s budget ran out"
    assert (verdict.exit_code("gpudoctor"), verdict.exit_code("npd"), verdict.exit_code("nagios")) == (3, 2, 3)


def test_a_warning_passes_unless_warnings_fail() -> None:
    report = report_of(CPU_CONTAINER)
    warned = node_verdict(report)
    assert warned.state is VerdictState.WARNING
    assert warned.code is not None and warned.reason.startswith(warned.code + " ")
    assert (warned.exit_code("gpudoctor"), warned.exit_code("npd"), warned.exit_code("nagios")) == (0, 0, 1)
    failing = node_verdict(report, fail_on="warning")
    assert failing.state is VerdictState.PROBLEM
    assert failing.reason == warned.reason
    assert (failing.exit_code("gpudoctor"), failing.exit_code("npd"), failing.exit_code("nagios")) == (1, 1, 2)
    assert_fit_for_a_scheduler(failing.line())


def test_a_synthetic_crashed_check_makes_a_healthy_report_unknown() -> None:
    report = report_of(HEALTHY_H100)
    crashed = dataclasses.replace(report.results[0], status=Status.CRASHED)  # synthetic: a check that raised
    report.results[0] = crashed
    verdict = node_verdict(report)
    assert verdict.state is VerdictState.UNKNOWN
    assert verdict.code == crashed.code
    assert verdict.reason == f"not judged: check {crashed.code} crashed"


def test_every_fix_text_gives_a_short_instruction() -> None:
    for fix in all_fix_texts().values():
        brief = brief_fix(fix.summary)
        assert brief, fix.id
        assert len(brief) <= len(fix.summary)
        assert not brief.endswith("."), (fix.id, brief)
        assert "; " not in brief and "(" not in brief, (fix.id, brief)  # alternatives and asides stay in the report


def test_an_instruction_under_a_condition_keeps_its_condition() -> None:
    summary = "If it has a GPU, replace it with a CUDA build. Chosen: torch 2.13 cu132 (CUDA 13.2)."
    assert brief_fix(summary) == "If it has a GPU, replace it with a CUDA build"


def test_a_cause_before_a_colon_is_skipped_for_the_instruction() -> None:
    summary = "The GPU stopped answering (fell off the bus): save the kernel log, reboot, then check power."
    assert brief_fix(summary) == "Save the kernel log, reboot, then check power"


@given(any_code_points(), st.integers(min_value=0, max_value=400))
def test_one_line_is_always_one_short_printable_ascii_line(text: str, limit: int) -> None:
    line = one_line(text, limit)
    assert len(line) <= limit
    assert all(" " <= ch <= "~" for ch in line)
    assert line == line.strip()


# Printable ASCII but "@": no URL with credentials to remove, so what is kept is a prefix of the text.
@given(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="@")), st.integers(4, 300)
)
def test_a_cut_line_says_so_and_a_short_one_is_kept(text: str, limit: int) -> None:
    flat = " ".join(text.split())
    line = one_line(text, limit)
    if len(flat) <= limit:
        assert line == flat
    else:
        assert line.endswith("...")
        assert flat.startswith(line[: -len("...")].rstrip(" ,;:-"))


@given(any_code_points())
def test_brief_fix_takes_any_text(text: str) -> None:
    assert isinstance(brief_fix(text), str)
