"""The report as GitHub-flavoured Markdown, for pasting into an issue.

A table of every check up front (readers skim), then only what needs action,
with fix commands in ``sh`` blocks ready to copy; bulky data and tracebacks are
folded into ``<details>``.  Redacted by default, like PyTorch's collect_env: an
issue is public, GPU UUIDs and serial numbers identify a machine, home directories
and user names a person.
"""

from __future__ import annotations

import json
import re
from typing import Any

import gpudoctor
from gpudoctor.areas import area_title
from gpudoctor.evidence.redact import redact as redact_text
from gpudoctor.evidence.redact import strip_url_credentials
from gpudoctor.render.common import (
    NEEDS_ROOT,
    accelerators_text,
    consequences_by_root,
    machine_detail_lines,
    next_step_headline,
    printable,
    source_description,
    summary_counts_text,
)
from gpudoctor.results import (
    CheckResult,
    Finding,
    GpuRecord,
    MachineSummary,
    Report,
    Severity,
    Status,
    group_by_area,
)

STATUS_CELLS: dict[Status, str] = {
    Status.OK: "✅ ok",
    Status.WARNING: "⚠️ warning",
    Status.PROBLEM: "❌ problem",
    Status.NOT_APPLICABLE: "➖ n/a",
    Status.CRASHED: "💥 crashed",
    Status.CONSEQUENCE: "↳ follows",
}

_SEVERITY_LABELS = {Severity.INFO: "info", Severity.WARNING: "warning", Severity.PROBLEM: "problem"}


def render_markdown(report: Report, *, redact: bool = True) -> str:
    parts = [
        "# gpudoctor report",
        "",
        f"gpudoctor {gpudoctor.__version__} — {source_description(report.source)}",
        "",
    ]
    parts += _machine_section(report.machine)
    parts += [f"**Summary:** {summary_counts_text(report)}", ""]
    parts += _next_step_section(report)
    parts += _checks_table(report)
    parts += _findings_section(report)
    parts += _data_section(report)
    text = printable("\n".join(parts).rstrip("\n") + "\n")
    # Redact the finished text, not the pieces: nothing can slip through a
    # section that forgot to.  Credentials go even under --no-redact: they are secrets, not identifiers.
    return redact_text(text) if redact else strip_url_credentials(text)


# ---------------------------------------------------------------- helpers


def cell(text: Any) -> str:
    """Text safe inside a table cell: pipes escaped, one line, no raw HTML."""
    value = str(text).replace("\\", "\\\\").replace("|", "\\|")
    value = value.replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(value.split())


def _inline(text: Any) -> str:
    """Prose outside tables: keep '<...>' from being swallowed as HTML."""
    return str(text).replace("<", "&lt;").replace(">", "&gt;")


def fenced(body: str, info: str = "") -> list[str]:
    """A code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *body.rstrip("\n").splitlines(), fence]


def _next_step_section(report: Report) -> list[str]:
    step = report.next_step()
    if step is None:
        return []
    lines = [f"**Next step:** {_inline(next_step_headline(step))}", ""]
    if step.fix.commands:
        lines += [*fenced("\n".join(step.fix.commands), "sh"), ""]
    return lines


def _machine_section(machine: MachineSummary) -> list[str]:
    if not machine:
        return []
    lines = ["## Machine", ""]
    for label, text in (("OS", machine.get("os")), ("Kernel", machine.get("kernel"))):
        if text:
            lines.append(f"- **{label}:** {_inline(text)}")
    if machine.get("driver_version") or machine.get("cuda_driver_max"):
        driver = str(machine.get("driver_version") or "unknown")
        if machine.get("cuda_driver_max"):
            driver += f" (supports CUDA up to {machine['cuda_driver_max']})"
        lines.append(f"- **NVIDIA driver:** {_inline(driver)}")
    if isinstance(machine.get("gpus"), list):
        gpus = machine["gpus"]
        lines.append(f"- **GPUs:** {len(gpus)}")
        for gpu in gpus:
            lines.append(f"  - {_inline(_gpu_line(gpu))}")
    others = accelerators_text(machine)
    if others:
        lines.append(f"- **Other accelerators:** {_inline(others)}")
    python = machine.get("python")
    if isinstance(python, dict) and python.get("executable"):
        version = f"Python {python['version']} " if python.get("version") else ""
        how = f" ({python['how']})" if python.get("how") else ""
        lines.append(f"- **Frameworks probed in:** {_inline(version + 'at ' + str(python['executable']) + how)}")
    if isinstance(machine.get("collect_duration_s"), (int, float)):
        lines.append(f"- **Evidence collected in:** {machine['collect_duration_s']:.2f} s")
    # Whatever else the summary holds, in words (never a raw key or a JSON null).
    for label, text in machine_detail_lines(machine):
        lines.append(f"- **{_inline(label)}:** {_inline(text)}")
    return lines + [""]


def _gpu_line(gpu: GpuRecord) -> str:
    if not isinstance(gpu, dict):  # a report read back from JSON may hold anything
        return str(gpu)
    bits = [f"{gpu.get('index', '?')}: {gpu.get('name') or 'unknown GPU'}"]
    if gpu.get("memory_total_mib") is not None:
        bits.append(f"{gpu['memory_total_mib']} MiB")
    if gpu.get("compute_capability"):
        bits.append(f"compute capability {gpu['compute_capability']}")
    if gpu.get("bus_id"):
        bits.append(f"bus {gpu['bus_id']}")
    if gpu.get("uuid"):
        bits.append(str(gpu["uuid"]))
    return ", ".join(bits)


def _checks_table(report: Report) -> list[str]:
    lines = ["## Checks", "", "| Status | Area | Code | Check | Summary |", "|---|---|---|---|---|"]
    for area, results in group_by_area(report.results):
        for r in results:
            lines.append(
                f"| {STATUS_CELLS[r.status]} | {cell(area_title(area))} | {cell(r.code)} "
                f"| {cell(r.title)} | {cell(r.summary)} |"
            )
    return lines + [""]


def _needs_section(result: CheckResult) -> bool:
    return result.status in (Status.WARNING, Status.PROBLEM, Status.CRASHED)


def _findings_section(report: Report) -> list[str]:
    flagged = [r for _, results in group_by_area(report.results) for r in results if _needs_section(r)]
    if not flagged:
        return []
    lines = ["## Findings", ""]
    explains = consequences_by_root(report.results)
    for result in flagged:
        lines += [f"### {STATUS_CELLS[result.status]}: {result.code} {_inline(result.title)}", ""]
        for finding in result.findings:
            if finding.severity is not Severity.INFO:
                lines += _finding(finding)
        if result.code in explains:
            lines += [f"Also explains: {', '.join(explains[result.code])}", ""]
        if result.status is Status.CRASHED:
            lines += [f"A gpudoctor bug, not a verdict on this machine: {_inline(result.summary)}", ""]
            if result.traceback:
                lines += ["<details><summary>Traceback</summary>", ""]
                lines += fenced(result.traceback, "text")
                lines += ["", "</details>", ""]
    return lines


def _finding(finding: Finding) -> list[str]:
    code = f" ({finding.code})" if finding.code else ""
    lines = [f"- **{_SEVERITY_LABELS[finding.severity]}**{code}: {_inline(finding.message)}", ""]
    if finding.quote:
        lines += ["  Seen:", ""]
        lines += ["  " + line for line in fenced(finding.quote, "text")]
        lines.append("")
    if finding.evidence:
        lines += ["  Evidence:", ""]
        lines += ["  " + line for line in fenced("\n".join(finding.evidence), "text")]
        lines.append("")
    fix = finding.fix
    if fix is not None:
        root = f" {NEEDS_ROOT}" if fix.needs_root else ""
        lines += [f"  **Fix{root}:** {_inline(fix.summary)}", ""]
        if fix.commands:
            lines += ["  " + line for line in fenced("\n".join(fix.commands), "sh")]
            lines.append("")
        if fix.url:
            lines += [f"  See <{fix.url}>", ""]
    return lines


def _data_section(report: Report) -> list[str]:
    data = {r.code: r.data for _, results in group_by_area(report.results) for r in results if r.data}
    if not data:
        return []
    body = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return ["<details><summary>Check data (JSON)</summary>", "", *fenced(body, "json"), "", "</details>", ""]
