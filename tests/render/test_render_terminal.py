"""Terminal renderer: golden output, colour rules (TTY / NO_COLOR), verbosity, lazy rich."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gpudoctor
from gpudoctor.render import terminal
from gpudoctor.render.terminal import print_terminal, render_terminal, use_color
from gpudoctor.results import CheckResult, Report, Status
from tests.synthetic.sample_report import REPO_ROOT, check_golden, report_strategy, sample_report

ANSI = re.compile(r"\x1b\[")


@pytest.fixture(autouse=True)
def pinned_version(monkeypatch):
    # Goldens must not change with every release.
    monkeypatch.setattr(gpudoctor, "__version__", "0.0.0+synthetic")


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_golden():
    check_golden("report-synthetic.txt", render_terminal(sample_report()))


def test_verbose_golden():
    check_golden("report-synthetic-verbose.txt", render_terminal(sample_report(), verbose=True))


def test_plain_is_ascii_marks_without_escapes():
    text = render_terminal(sample_report())
    assert not ANSI.search(text)
    for mark in ("[ ok ]", "[warn]", "[FAIL]", "[ n/a]", "[CRSH]"):
        assert mark in text
    assert "✓" not in text and "✗" not in text


def test_color_mode_uses_symbols_and_ansi():
    text = render_terminal(sample_report(), color=True)
    assert ANSI.search(text)
    for mark in ("✓", "!", "✗", "–", "↯"):
        assert mark in text
    assert "[ ok ]" not in text


def test_header_and_machine_line():
    first, machine, system = render_terminal(sample_report()).splitlines()[:3]
    assert first == "gpudoctor 0.0.0+synthetic — snapshot snapshots/synthetic-a100-node"
    assert machine == "Machine: 2 GPUs (2x NVIDIA A100-SXM4-80GB), driver 535.54.03, max CUDA 12.2"
    assert system.startswith("System: Debian GNU/Linux 12")


def test_missing_machine_keys_are_tolerated():
    report = Report(results=[], source={"kind": "live"}, machine={"gpus": []})
    text = render_terminal(report, verbose=True)
    assert text.splitlines()[0] == "gpudoctor 0.0.0+synthetic — live machine"
    assert "Machine: no NVIDIA GPUs" in text
    assert "driver" not in text
    bare = render_terminal(Report(results=[], source={}), verbose=True)
    assert "Machine:" not in bare and "Summary: 0 ok" in bare


def test_areas_in_fixed_order_plugins_last():
    text = render_terminal(sample_report())
    headings = [
        "PCI bus",
        "NVIDIA driver",
        "NVML",
        "CUDA toolkit",
        "cuDNN",
        "Environment",
        "Preflight gates",
        "acme_fabric",
    ]
    positions = [text.index(f"\n{h}\n") for h in headings]
    assert positions == sorted(positions)


def test_findings_and_fixes_under_warning_and_problem_lines():
    text = render_terminal(sample_report())
    assert "warning: Persistence mode is off" in text
    assert "fix: Upgrade the NVIDIA driver to the 550 branch" in text
    assert "$ apt-get install -y cuda-drivers-550  (needs root)" in text
    # Info findings, evidence and data only with -v.
    assert "info: GPUs sit on two different PCIe root ports" not in text
    assert "evidence:" not in text and "data:" not in text


def test_verbose_shows_traceback_timings_info_and_data():
    text = render_terminal(sample_report(), verbose=True)
    assert "KeyError: 'LD_LIBRARY_PATH'" in text
    assert "Traceback (most recent call last):" in text
    assert "(250.0 ms)" in text
    assert "info: GPUs sit on two different PCIe root ports" in text
    assert "evidence: nvcc --version: release 12.4, V12.4.131" in text
    assert 'data: {"link_gbps": 200}' in text
    assert terminal.CRASH_HINT not in text


def test_non_verbose_hides_traceback_and_timings():
    text = render_terminal(sample_report())
    assert "Traceback" not in text
    assert " ms)" not in text
    assert "crashed (run with -v for the traceback)" in text


def test_summary_line_and_hint():
    text = render_terminal(sample_report())
    assert "Summary: 4 ok, 1 warning, 1 problem, 2 not applicable, 1 crashed" in text
    assert "Run 'gpudoctor explain CODE' (e.g. 'gpudoctor explain CUDA001') for details." in text


def _report(*statuses: Status) -> Report:
    return Report(
        results=[CheckResult(f"TST{i:03d}", "gpus", f"check {i}", s, "s") for i, s in enumerate(statuses)],
        source={"kind": "live"},
    )


def test_summary_pluralises():
    text = render_terminal(
        _report(Status.WARNING, Status.WARNING, Status.PROBLEM, Status.PROBLEM, Status.CRASHED, Status.CRASHED)
    )
    assert "Summary: 0 ok, 2 warnings, 2 problems, 0 not applicable, 2 crashed" in text


def test_no_hint_when_all_ok():
    text = render_terminal(_report(Status.OK, Status.NOT_APPLICABLE))
    assert "Summary: 1 ok, 0 warnings, 0 problems, 1 not applicable, 0 crashed" in text
    assert "explain" not in text


@pytest.mark.parametrize(
    ("isatty", "environ", "expected"),
    [
        (True, {}, True),
        (True, {"NO_COLOR": "1"}, False),
        (True, {"NO_COLOR": "anything"}, False),
        (True, {"NO_COLOR": ""}, True),  # no-color.org: only a non-empty value disables
        (True, {"TERM": "dumb"}, False),
        (False, {}, False),
    ],
)
def test_use_color(isatty, environ, expected):
    stream = FakeTTY() if isatty else io.StringIO()
    assert use_color(stream, environ) is expected


def test_print_to_non_tty_is_plain(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    stream = io.StringIO()
    print_terminal(sample_report(), stream=stream)
    assert not ANSI.search(stream.getvalue())
    assert stream.getvalue() == render_terminal(sample_report())


def test_print_to_tty_honours_no_color(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    stream = FakeTTY()
    print_terminal(sample_report(), stream=stream)
    assert not ANSI.search(stream.getvalue())
    monkeypatch.setenv("NO_COLOR", "")
    stream = FakeTTY()
    print_terminal(sample_report(), stream=stream)
    assert ANSI.search(stream.getvalue())


def _run(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr


def test_plain_rendering_does_not_import_rich():
    _run(
        "import sys\n"
        "from tests.synthetic.sample_report import sample_report\n"
        "from gpudoctor.render.terminal import render_terminal, print_terminal\n"
        "import io\n"
        "assert render_terminal(sample_report(), verbose=True)\n"
        "print_terminal(sample_report(), stream=io.StringIO())\n"
        "assert 'rich' not in sys.modules, sorted(m for m in sys.modules if 'rich' in m)\n"
    )


def test_color_rendering_imports_rich():
    # The other side of the test above: proves the check would notice rich.
    _run(
        "import sys\n"
        "from tests.synthetic.sample_report import sample_report\n"
        "from gpudoctor.render.terminal import render_terminal\n"
        "render_terminal(sample_report(), color=True)\n"
        "assert 'rich' in sys.modules\n"
    )


@settings(max_examples=60, deadline=None)
@given(report=report_strategy(), verbose=st.booleans())
def test_any_report_renders_one_line_per_check(report, verbose):
    lines = render_terminal(report, verbose=verbose).splitlines()
    for result in report.results:
        mark = terminal.PLAIN_MARKS[result.status]
        assert any(line.startswith(f"  {mark} {result.code} ") for line in lines)
    assert len([line for line in lines if line.startswith("  [")]) >= len(report.results)
    assert render_terminal(report, verbose=verbose, color=True)
