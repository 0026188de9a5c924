"""Text from evidence or a pasted report reaches the reader as data: an escape sequence, a carriage return or a
bidi override in a driver version, a GPU name or a message is shown escaped, never obeyed by the terminal.

The hostile values are SYNTHETIC; the real report they are pasted into is read in place when present."""

from __future__ import annotations

import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.render.common import printable
from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.terminal import render_terminal
from gpudoctor.results import CheckResult, Finding, Fix, Report, Severity, Status
from tests.helpers.fixtures import fixture_text

HOSTILE = "570.86\x1b[2J\x1b]0;owned\x07\rfake ok\u202etxt.exe\x00"


def _report() -> Report:
    finding = Finding(Severity.PROBLEM, f"driver {HOSTILE}", Fix(f"fix {HOSTILE}", (f"echo {HOSTILE}",)))
    result = CheckResult("DRV001", "driver", "t", Status.PROBLEM, f"loaded: {HOSTILE}", [finding])
    return Report(results=[result], source={"kind": "snapshot", "path": f"/tmp/{HOSTILE}"}, machine={})


def _no_controls(text: str) -> bool:
    return all(ch in "\n\t" or not unicodedata.category(ch).startswith("C") for ch in text)


def test_terminal_plain_and_colour_show_control_characters_escaped() -> None:
    plain = render_terminal(_report(), verbose=True)
    assert _no_controls(plain)
    assert "570.86\\x1b[2J\\x1b]0;owned\\x07\\rfake ok\\u202etxt.exe\\x00" in plain
    coloured = render_terminal(_report(), verbose=True, color=True)
    # rich's own colour codes are the only escapes left: none of the hostile ones survive
    assert "\x1b[2J" not in coloured and "\x1b]0;" not in coloured and "\r" not in coloured and "\u202e" not in coloured


def test_markdown_shows_control_characters_escaped() -> None:
    assert _no_controls(render_markdown(_report(), redact=False))


def test_ordinary_text_is_left_alone() -> None:
    text = "NVIDIA GeForce RTX 5090 D — 32 GiB ≥ 24\n\tnext line"
    assert printable(text) == text


@given(st.text())
def test_printable_never_leaves_a_control_character(text: str) -> None:
    assert _no_controls(printable(text))


def test_a_pasted_report_with_an_escape_in_its_driver_version(tmp_path) -> None:
    real = fixture_text("E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt")
    lines = [
        f"Nvidia driver version: {HOSTILE}" if line.startswith("Nvidia driver version:") else line
        for line in real.splitlines()
    ]
    path = tmp_path / "report.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--from", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    # A pasted report's colour and cursor codes are taken off when it is read; what is left is escaped.
    assert "570.86" in done.stdout and "\x1b" not in done.stdout and _no_controls(done.stdout)
