"""What every renderer agrees on: counts wording, the machine's phrases, text of a finding.

Kept here so the terminal, Markdown and JUnit outputs name and count things
identically; area titles and order come from the areas table (``gpudoctor.areas``),
the grouping and the next step from the results layer.  Standard library only:
importing a renderer must stay cheap (the terminal's plain path in particular must
never pull in rich).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from gpudoctor.evidence.redact import strip_url_credentials
from gpudoctor.results import (
    CheckResult,
    Finding,
    GpuRecord,
    MachineSummary,
    NextStep,
    Report,
    ReportSource,
    Severity,
    Status,
)

# Order of statuses in summaries (and the JSON counts object).
STATUS_ORDER: tuple[Status, ...] = (
    Status.OK,
    Status.WARNING,
    Status.PROBLEM,
    Status.NOT_APPLICABLE,
    Status.CRASHED,
    Status.CONSEQUENCE,
)

# Singular / plural wording of each status in a summary line.
_STATUS_WORDS: dict[Status, tuple[str, str]] = {
    Status.OK: ("ok", "ok"),
    Status.WARNING: ("warning", "warnings"),
    Status.PROBLEM: ("problem", "problems"),
    Status.NOT_APPLICABLE: ("not applicable", "not applicable"),
    Status.CRASHED: ("crashed", "crashed"),
    Status.CONSEQUENCE: ("follows from another", "follow from others"),
}

# "Worst" for the JSON summary: a problem outranks a crash (as in the exit
# code), and anything outranks "not applicable".
_WORST_RANK: dict[Status, int] = {
    Status.NOT_APPLICABLE: 0,
    Status.OK: 1,
    Status.CONSEQUENCE: 1,
    Status.WARNING: 2,
    Status.CRASHED: 3,
    Status.PROBLEM: 4,
}

NEEDS_ROOT = "(needs root)"


def printable(text: str) -> str:
    """``text`` safe for a terminal or a pasted report: every control or format character (ESC sequences,
    carriage returns, bidi overrides, NULs) is shown as its escape (``\\x1b``), not obeyed; newlines and tabs
    stay.  What the machine or a pasted file said reaches the reader as data, never as instructions to the
    terminal.  Credentials in URLs (``https://user:token@host``) are removed here too: every renderer's
    text passes through, and a secret read from old evidence must not reach a screen or a paste."""
    text = strip_url_credentials(text)
    if text.isprintable():
        return text
    return "".join(
        ch if ch in "\n\t" or not unicodedata.category(ch).startswith("C") else ascii(ch)[1:-1] for ch in text
    )


def worst_status(results: Iterable[CheckResult]) -> Status:
    statuses = [r.status for r in results]
    if not statuses:
        return Status.OK
    return max(statuses, key=lambda s: _WORST_RANK[s])


def summary_counts_text(report: Report) -> str:
    """'12 ok, 2 warnings, 1 problem, 5 not applicable, 0 crashed'."""
    counts = report.counts()
    parts = []
    for status in STATUS_ORDER:
        n = counts[status.value]
        if n == 0 and status is Status.CONSEQUENCE:
            continue  # a status most reports never have; its count is always in the JSON
        singular, plural = _STATUS_WORDS[status]
        parts.append(f"{n} {singular if n == 1 else plural}")
    return ", ".join(parts)


def source_description(source: ReportSource) -> str:
    kind = source.get("kind")
    if kind == "live":
        return "live machine"
    if kind == "snapshot":
        path = source.get("path")
        return f"snapshot {path}" if path else "snapshot"
    return str(kind) if kind else "unknown source"


# What the header says when no source that lists GPUs was read: unknown, never "none".
GPUS_NOT_KNOWN = "GPUs not known (nothing that lists them was collected)"
_UNNAMED = "model not reported"


def gpu_names_text(gpus: list[GpuRecord], known: object = True) -> str:
    """'2 GPUs (2x NVIDIA A100-SXM4-80GB)' (identical names folded together); 'no NVIDIA GPUs' only when
    ``known`` (the summary's ``gpus_known``) says the empty list is established, else :data:`GPUS_NOT_KNOWN`."""
    if not gpus:
        return "no NVIDIA GPUs" if known is not False else GPUS_NOT_KNOWN
    names: dict[str, int] = {}
    for gpu in gpus:
        # A report read back from JSON may hold anything here: show it rather than fail.
        name = str(gpu.get("name") or _UNNAMED) if isinstance(gpu, dict) else str(gpu)
        names[name] = names.get(name, 0) + 1
    noun = "GPU" if len(gpus) == 1 else "GPUs"
    if list(names) == [_UNNAMED]:
        return f"{len(gpus)} {noun} ({_UNNAMED})"
    listed = ", ".join(name if n == 1 else f"{n}x {name}" for name, n in names.items())
    return f"{len(gpus)} {noun} ({listed})"


_STACK_WORDS = {"rocm": "ROCm", "macos": "macOS", "libtpu": "libtpu"}


def accelerators_text(machine: MachineSummary) -> str | None:
    """'2 × AMD Instinct MI210 (gfx90a), ROCm 6.1.2': the other vendors' accelerators, folded by name, and
    their stacks' versions; None when the summary lists none."""
    records = machine.get("accelerators")
    if not isinstance(records, list) or not records:
        return None
    labels: dict[str, int] = {}
    for record in records:
        if not isinstance(record, dict):
            continue
        name = str(record.get("name") or f"{record.get('vendor') or 'unknown'} device")
        arch = record.get("architecture")
        label = f"{name} ({arch})" if arch and str(arch) not in name else name
        labels[label] = labels.get(label, 0) + 1
    text = ", ".join(f"{count} × {label}" for label, count in labels.items())
    stacks = machine.get("accelerator_stacks")
    if isinstance(stacks, dict):
        text = ", ".join([text] + [f"{_STACK_WORDS.get(str(k), str(k))} {v}" for k, v in stacks.items()])
    return text


def platform_text(machine: MachineSummary) -> str | None:
    """'AWS g5.xlarge: 1× NVIDIA A10G 24 GB expected, Google Colab, image NGC PyTorch 24.01': where the machine
    runs, from the summary's ``platform`` record; None when it has none.  A report read back from JSON may hold
    anything there: only strings are shown (every renderer escapes the text it prints)."""
    record = machine.get("platform")
    if not isinstance(record, dict):
        return None

    def text(key: str) -> str | None:
        value = record.get(key)
        return value if isinstance(value, str) and value.strip() else None

    parts = []
    cloud = " ".join(v for v in (text("provider_name") or text("provider"), text("instance_type")) if v)
    if cloud:
        expected = text("expected")
        parts.append(f"{cloud}: {expected} expected" if expected and text("instance_type") else cloud)
    if text("notebook"):
        parts.append(str(text("notebook")))
    if text("image"):
        parts.append(f"image {text('image')}")
    return ", ".join(parts) or None


def machine_summary_parts(machine: MachineSummary) -> list[str]:
    """Short phrases about the machine, for whichever keys are present: where it runs first."""
    where = platform_text(machine)
    parts = [where] if where else []
    others = accelerators_text(machine)
    gpus = machine.get("gpus")
    # A machine whose accelerators are all another vendor's says what it has, not "no NVIDIA GPUs".
    if others and not (isinstance(gpus, list) and gpus):
        return [*parts, others]
    if "gpus" in machine and isinstance(machine["gpus"], list):
        text = gpu_names_text(machine["gpus"], machine.get("gpus_known", True))
        if not machine["gpus"] and machine.get("accelerators") == [] and machine.get("gpus_on_bus") == 0:
            text = "no GPU or TPU on the PCI bus"  # the bus was read, and no vendor's accelerator is on it
        parts.append(text)
    if machine.get("driver_version"):
        parts.append(f"driver {machine['driver_version']}")
    if machine.get("cuda_driver_max"):
        parts.append(f"max CUDA {machine['cuda_driver_max']}")
    if others:
        parts.append(others)
    return parts


def system_summary_parts(machine: MachineSummary) -> list[str]:
    parts = []
    if machine.get("os"):
        parts.append(str(machine["os"]))
    if machine.get("kernel"):
        parts.append(f"kernel {machine['kernel']}")
    python = machine.get("python")
    if isinstance(python, dict) and python.get("executable"):
        version = f" {python['version']}" if python.get("version") else ""
        parts.append(f"Python{version} at {python['executable']}")
    return parts


# The header's own keys (the GPU list, driver, OS, kernel, Python, timing): every renderer shows them itself.
MACHINE_HEADLINE_KEYS = frozenset(
    {"os", "kernel", "gpus", "driver_version", "cuda_driver_max", "python", "collect_duration_s"}
)
# facts_seen key -> what it lists, in the order the report names them.
_FACTS_SEEN_LABELS = {
    "gpu_names": "GPU names",
    "driver_versions": "driver",
    "cuda_driver_versions": "CUDA the driver supports",
    "cuda_runtime_versions": "CUDA runtime",
    "torch_versions": "PyTorch",
    "torch_cuda_versions": "PyTorch's CUDA",
    "tensorflow_versions": "TensorFlow",
    "cudnn_versions": "cuDNN",
}


def machine_detail_lines(machine: MachineSummary) -> list[tuple[str, str]]:
    """(label, text) for what the machine summary holds beyond the header's own keys, in words: nothing for a
    value that is unset (``null`` says only "not collected"), and what is missing with its reason where the
    summary states one.  Keys a newer gpudoctor (or a hand-edited report) adds are shown, labelled from
    their name, rather than dropped."""
    details: list[tuple[str, str]] = []
    if machine.get("gpus_known") is False:
        details.append(("GPUs", GPUS_NOT_KNOWN))
    if "gpus_on_bus" in machine:
        on_bus = machine.get("gpus_on_bus")
        text = str(on_bus) if on_bus is not None else "not known (the PCI bus was not read)"
        details.append(("NVIDIA GPUs on the PCI bus", text))
    where = platform_text(machine)
    if where:
        details.append(("Runs on", where))
    if machine.get("container"):
        details.append(("Container", str(machine["container"])))
    wsl = machine.get("wsl")
    if wsl is not None and wsl is not False:
        details.append(("WSL", f"version {wsl}" if isinstance(wsl, (int, str)) and str(wsl).isdigit() else "yes"))
    seen = machine.get("facts_seen")
    if isinstance(seen, dict):
        stated = [
            f"{label} {', '.join(str(v) for v in values)}"
            for key, label in _FACTS_SEEN_LABELS.items()
            if isinstance(values := seen.get(key), list) and values
        ]
        details.append(("The evidence states", "; ".join(stated) if stated else "no GPU name or version"))
    if machine.get("error"):
        details.append(("Machine summary incomplete", str(machine["error"])))
    known = MACHINE_HEADLINE_KEYS | {
        "gpus_known",
        "gpus_on_bus",
        "container",
        "wsl",
        "facts_seen",
        "error",
        "accelerators",
        "accelerator_stacks",
        "platform",
    }
    for key, value in dict(machine).items():
        if key in known or value is None:
            continue
        label = str(key).replace("_", " ").capitalize()
        details.append((label, value if isinstance(value, str) else compact_json(value)))
    return details


def next_step_headline(step: NextStep) -> str:
    """'Reseat the card ... (TOPO001)': the fix to do first and the check that asks for it."""
    return f"{step.fix.summary} ({step.code})"


def compact_json(value: Any) -> str:
    """One-line JSON for data dicts; unknown types shown via str() rather than failing."""
    return json.dumps(value, ensure_ascii=False, default=str)


# How many lines of a finding's quoted evidence a report shows (the JSON has all of it).
QUOTE_LINES = 3


def consequences_by_root(results: Iterable[CheckResult]) -> dict[str, list[str]]:
    """Root check code -> the codes of the checks whose findings were folded under it, in report order."""
    explains: dict[str, list[str]] = {}
    for result in results:
        for finding in result.findings:
            root = finding.consequence_of
            if root and result.code not in explains.setdefault(root, []):
                explains[root].append(result.code)
    return explains


def shown_findings(result: CheckResult, *, include_info: bool) -> list[Finding]:
    return [f for f in result.findings if include_info or f.severity is not Severity.INFO]


def finding_text_lines(finding: Finding, *, evidence: bool = True) -> list[str]:
    """A finding as plain indented lines (used by JUnit bodies; the terminal
    styles the same structure itself)."""
    lines = [f"{finding.severity.value}: {finding.message}"]
    if evidence:
        lines += [f"  evidence: {line}" for line in finding.evidence]
    fix = finding.fix
    if fix is not None:
        lines.append(f"  fix: {fix.summary}")
        for command in fix.commands:
            lines.append(f"    $ {command}" + (f"  {NEEDS_ROOT}" if fix.needs_root else ""))
        if fix.url:
            lines.append(f"    see {fix.url}")
    return lines
