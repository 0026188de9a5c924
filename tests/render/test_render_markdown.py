"""Markdown renderer: golden output, redaction, table escaping."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings

import gpudoctor
from gpudoctor.render.markdown import cell, fenced, render_markdown
from gpudoctor.results import CheckResult, Report, Status
from tests.synthetic.sample_report import GPU0_UUID, GPU1_UUID, check_golden, report_strategy, sample_report


@pytest.fixture(autouse=True)
def pinned_version(monkeypatch):
    monkeypatch.setattr(gpudoctor, "__version__", "0.0.0+synthetic")


def test_golden():
    check_golden("report-synthetic.md", render_markdown(sample_report()))


def test_redacted_by_default():
    text = render_markdown(sample_report())
    assert GPU0_UUID not in text and GPU1_UUID not in text
    assert "GPU-REDACTED" in text
    assert re.search(r"GPU-[0-9a-f]{8}-", text) is None


def test_no_redact_keeps_uuids():
    text = render_markdown(sample_report(), redact=False)
    assert GPU0_UUID in text and GPU1_UUID in text


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]


def test_table_has_every_check_with_pipes_escaped():
    text = render_markdown(sample_report())
    rows = _table_rows(text)
    assert len(rows) == 1 + len(sample_report().results)  # header + one per check
    for row in rows:
        unescaped = re.findall(r"(?<!\\)\|", row)
        assert len(unescaped) == 6, row  # five columns
    assert "| Acme fabric link \\| plugin | link up \\| 200 Gb/s |" in text


def test_cell_escaping():
    assert cell("a|b") == "a\\|b"
    assert cell("two\nlines") == "two lines"
    assert cell("<script>") == "&lt;script&gt;"


def test_fenced_outgrows_backticks_inside():
    assert fenced("echo ```", "sh") == ["````sh", "echo ```", "````"]


def test_findings_with_fix_commands_in_sh_blocks():
    text = render_markdown(sample_report())
    assert "## Findings" in text
    assert "**Fix (needs root):** Upgrade the NVIDIA driver to the 550 branch" in text
    assert "  ```sh\n  apt-get update\n  apt-get install -y cuda-drivers-550\n  ```" in text
    # OK and n/a checks get no findings entry.
    assert "### ✅" not in text and "### ➖" not in text


def test_traceback_and_data_are_folded():
    text = render_markdown(sample_report())
    assert "<details><summary>Traceback</summary>" in text
    assert "KeyError: 'LD_LIBRARY_PATH'" in text
    assert "<details><summary>Check data (JSON)</summary>" in text
    assert '"link_gbps": 200' in text


def test_all_ok_report_has_no_findings_section():
    report = Report(results=[CheckResult("TST001", "gpus", "t", Status.OK, "fine")], source={"kind": "live"})
    text = render_markdown(report)
    assert "## Findings" not in text and "<details>" not in text
    assert "live machine" in text


@settings(max_examples=60, deadline=None)
@given(report=report_strategy())
def test_any_report_keeps_the_table_shape(report):
    rows = _table_rows(render_markdown(report))
    assert len(rows) == 1 + len(report.results)
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 6, row


def test_next_step_follows_the_summary():
    text = render_markdown(sample_report())
    summary = text.index("**Summary:**")
    step = text.index("**Next step:** Upgrade the NVIDIA driver to the 550 branch (CUDA001)")
    assert summary < step < text.index("## Checks")
    assert "```sh\napt-get update\napt-get install -y cuda-drivers-550\n```" in text[step:]
