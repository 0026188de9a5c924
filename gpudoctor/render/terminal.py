"""The human report: one line per check, grouped by area, flutter-doctor style.

The report is first laid out as lines of (text, style) spans.  The plain mode
just joins the text, so it is a pure function that is easy to golden-test and
never imports rich; only the colour mode hands the same spans to rich.  That way
both modes always show the same content, and ``gpudoctor`` piped into a file or
run under NO_COLOR pays nothing for rich's import.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from typing import Optional, TextIO

import gpudoctor
from gpudoctor.areas import area_title
from gpudoctor.render.common import (
    NEEDS_ROOT,
    QUOTE_LINES,
    compact_json,
    consequences_by_root,
    machine_detail_lines,
    machine_summary_parts,
    next_step_headline,
    printable,
    shown_findings,
    source_description,
    summary_counts_text,
    system_summary_parts,
)
from gpudoctor.results import CheckResult, Finding, GpuRecord, Report, Severity, Status, group_by_area

Span = tuple[str, str]  # (text, rich style name; "" for none)
Line = list[Span]

# Fixed-width ASCII marks, so plain output lines up and greps well.
PLAIN_MARKS: dict[Status, str] = {
    Status.OK: "[ ok ]",
    Status.WARNING: "[warn]",
    Status.PROBLEM: "[FAIL]",
    Status.NOT_APPLICABLE: "[ n/a]",
    Status.CRASHED: "[CRSH]",
    Status.CONSEQUENCE: "[ -> ]",
}

# Single-cell symbols for a colour terminal.
COLOR_MARKS: dict[Status, str] = {
    Status.OK: "✓",
    Status.WARNING: "!",
    Status.PROBLEM: "✗",
    Status.NOT_APPLICABLE: "–",
    Status.CRASHED: "↯",
    Status.CONSEQUENCE: "↳",
}

STATUS_STYLES: dict[Status, str] = {
    Status.OK: "green",
    Status.WARNING: "yellow",
    Status.PROBLEM: "bold red",
    Status.NOT_APPLICABLE: "dim",
    Status.CRASHED: "magenta",
    Status.CONSEQUENCE: "yellow",
}

SEVERITY_STYLES: dict[Severity, str] = {
    Severity.INFO: "cyan",
    Severity.WARNING: "yellow",
    Severity.PROBLEM: "bold red",
}

CRASH_HINT = "crashed (run with -v for the traceback)"


def use_color(stream: Optional[TextIO] = None, environ: Optional[Mapping[str, str]] = None) -> bool:
    """Colour only on a real terminal, and never when NO_COLOR is set to anything
    non-empty (https://no-color.org) or the terminal says it is dumb."""
    environ = os.environ if environ is None else environ
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("TERM") == "dumb":
        return False
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # closed or odd stream
        return False


def render_terminal(report: Report, *, verbose: bool = False, color: bool = False, width: int = 100) -> str:
    """The report as text.  ``color=False`` (default) is plain ASCII marks and no
    escape codes; ``color=True`` renders symbols and ANSI colour through rich
    (``width`` only matters there: long lines are never wrapped, but rich needs one)."""
    # Every span through printable(): evidence and pasted reports reach the terminal as text, never as escapes.
    lines = [
        [(printable(text), style) for text, style in line] for line in layout(report, verbose=verbose, symbols=color)
    ]
    if not color:
        return "".join("".join(text for text, _ in line) + "\n" for line in lines)
    return render_spans_with_rich(lines, width)


def print_terminal(
    report: Report, *, verbose: bool = False, stream: Optional[TextIO] = None, color: Optional[bool] = None
) -> None:
    """Write the report to ``stream`` (stdout), colour decided by :func:`use_color`
    unless ``color`` forces it."""
    stream = sys.stdout if stream is None else stream
    if color is None:
        color = use_color(stream)
    stream.write(render_terminal(report, verbose=verbose, color=color))
    stream.flush()


def render_spans_with_rich(lines: list[Line], width: int) -> str:
    # Imported here on purpose: the plain path must not import rich at all.
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        color_system="standard",
        width=width,
        no_color=False,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=True,
        legacy_windows=False,
    )
    for line in lines:
        text = Text()
        for chunk, style in line:
            text.append(chunk, style=style or None)
        console.print(text)
    return buffer.getvalue()


# ---------------------------------------------------------------- layout


def layout(report: Report, *, verbose: bool, symbols: bool) -> list[Line]:
    """Every line of the report as styled spans (shared by both modes)."""
    lines: list[Line] = []
    lines += _header(report, verbose=verbose)
    code_width = max((len(r.code) for r in report.results), default=0)
    explains = consequences_by_root(report.results)
    for area, results in group_by_area(report.results):
        lines.append([])
        lines.append([(area_title(area), "bold underline")])
        for result in results:
            lines += _check_lines(result, code_width, verbose=verbose, symbols=symbols)
            if result.code in explains and result.status in (Status.PROBLEM, Status.WARNING):
                indent = " " * (2 + len(PLAIN_MARKS[result.status]) + 1)
                lines.append([(indent + "  also explains: ", "dim"), (", ".join(explains[result.code]), "")])
    lines.append([])
    lines += _footer(report)
    return lines


def _header(report: Report, *, verbose: bool) -> list[Line]:
    lines: list[Line] = [
        [
            (f"gpudoctor {gpudoctor.__version__}", "bold"),
            (f" — {source_description(report.source)}", ""),
        ]
    ]
    machine = report.machine
    parts = machine_summary_parts(machine)
    if parts:
        lines.append([("Machine: ", "bold"), (", ".join(parts), "")])
    system = system_summary_parts(machine)
    if system:
        lines.append([("System: ", "bold"), (", ".join(system), "")])
    if verbose:
        duration = machine.get("collect_duration_s")
        if isinstance(duration, (int, float)):
            lines.append([(f"Evidence collected in {duration:.2f}s", "dim")])
        for gpu in machine.get("gpus") or []:
            if isinstance(gpu, dict):
                lines.append([(f"  GPU {_gpu_detail(gpu)}", "dim")])
        # The Python the frameworks were probed in is on the System line already.
        for label, text in machine_detail_lines(machine):
            lines.append([(f"  {label}: {text}", "dim")])
    return lines


def _gpu_detail(gpu: GpuRecord) -> str:
    bits = [str(gpu.get("index", "?")) + ":", str(gpu.get("name") or "unknown GPU")]
    if gpu.get("memory_total_mib") is not None:
        bits.append(f"{gpu['memory_total_mib']} MiB")
    if gpu.get("compute_capability"):
        bits.append(f"cc {gpu['compute_capability']}")
    if gpu.get("bus_id"):
        bits.append(str(gpu["bus_id"]))
    if gpu.get("uuid"):
        bits.append(str(gpu["uuid"]))
    return " ".join(bits)


def _check_lines(result: CheckResult, code_width: int, *, verbose: bool, symbols: bool) -> list[Line]:
    status = result.status
    mark = COLOR_MARKS[status] if symbols else PLAIN_MARKS[status]
    head: Line = [
        ("  ", ""),
        (mark, STATUS_STYLES[status]),
        (" ", ""),
        (result.code, "bold"),
        (" " * (code_width - len(result.code) + 1), ""),
        (_one_line(result.title), ""),
    ]
    if result.summary:
        head.append((f": {_one_line(result.summary)}", "dim" if status is Status.NOT_APPLICABLE else ""))
    if verbose:
        head.append((f"  ({result.duration_s * 1000:.1f} ms)", "dim"))
    lines = [head]

    # Findings sit under the check's title column.
    indent = " " * (2 + len(mark) + 1)
    for finding in shown_findings(result, include_info=verbose):
        lines += _finding_lines(finding, indent, verbose=verbose)
    if status is Status.CRASHED:
        if verbose and result.traceback:
            for tb_line in result.traceback.rstrip("\n").splitlines():
                lines.append([(indent + "  " + tb_line, "magenta")])
        elif not verbose:
            lines.append([(indent + CRASH_HINT, "magenta")])
    if verbose and result.data:
        lines.append([(indent + "data: ", "dim"), (compact_json(result.data), "dim")])
    return lines


def _one_line(text: str) -> str:
    # The check line must stay one line whatever a check put in its title/summary.
    return " ".join(text.splitlines())


def _finding_lines(finding: Finding, indent: str, *, verbose: bool) -> list[Line]:
    lines: list[Line] = [
        [
            (indent, ""),
            (f"{finding.severity.value}:", SEVERITY_STYLES[finding.severity]),
            (f" {finding.message}", ""),
            (f"  [{finding.code}]" if verbose and finding.code else "", "dim"),
        ]
    ]
    inner = indent + "  "
    if finding.quote:
        quoted = finding.quote.splitlines()
        for number, line in enumerate(quoted[:QUOTE_LINES]):
            lines.append([(f"{inner}{'seen: ' if number == 0 else '      '}", "dim"), (line, "italic")])
    if verbose:
        for line in finding.evidence:
            lines.append([(f"{inner}evidence: {line}", "dim")])
    fix = finding.fix
    if fix is not None:
        lines.append([(inner, ""), ("fix:", "bold green"), (f" {fix.summary}", "")])
        for command in fix.commands:
            span: Line = [(f"{inner}  $ ", "dim"), (command, "bold")]
            if fix.needs_root:
                span.append((f"  {NEEDS_ROOT}", "yellow"))
            lines.append(span)
        if fix.url:
            lines.append([(f"{inner}  see {fix.url}", "dim")])
    return lines


def _footer(report: Report) -> list[Line]:
    counts = report.counts()
    lines: list[Line] = [[("Summary: ", "bold"), (summary_counts_text(report), "")]]
    step = report.next_step()
    if step is not None:
        lines.append([("Next step: ", "bold"), (next_step_headline(step), "")])
        for command in step.fix.commands:
            lines.append([(f"  $ {command}", "cyan")])
    flagged = [r for r in report.results if r.status in (Status.PROBLEM, Status.WARNING)]
    if flagged:
        example = next((r.code for r in flagged if r.status is Status.PROBLEM), flagged[0].code)
        lines.append([(f"Run 'gpudoctor explain CODE' (e.g. 'gpudoctor explain {example}') for details.", "")])
    if counts[Status.CRASHED.value]:
        lines.append(
            [
                (
                    "A crashed check is a gpudoctor bug, not a verdict on this machine; "
                    "please report it with the -v output.",
                    "magenta",
                )
            ]
        )
    return lines
