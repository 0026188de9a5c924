"""Apple facts, merged from every source that says something about the Mac: its GPUs and the Python on it.

Sources, most direct first: ``system_profiler SPDisplaysDataType`` (the GPUs), ``macos.json`` (the live scan:
macOS version, chip, ``sysctl.proc_translated`` of gpudoctor's own Python), the framework probes' Python (the
*target* interpreter: its platform, machine, ``mac_ver()`` and Rosetta flag) and a pasted ``collect_env`` report
(``OS: macOS 15.3 (x86_64)``, ``Python platform: macOS-10.16-x86_64-i386-64bit``, the ``CPU:`` block's chip).

Rosetta: an x86_64 process on Apple silicon can only run translated, so the target runs under Rosetta when a
sysctl says so, or when its machine is x86_64 while the chip is Apple silicon (``hw.optional.arm64`` = 1, a chip
named "Apple M…", an Apple GPU). "10.16" is never a real macOS release: it is what an x86_64 Python built against
an old SDK reads (pytorch/pytorch#146236), so it is kept as what the Python saw, not as the Mac's version.

A discrete AMD GPU in an Intel Mac is listed as an Apple accelerator with ``apple.vendor`` "amd": on macOS it
runs only through Apple's Metal driver (MPS, tensorflow-metal), never ROCm, so the AMD/ROCm checks must not see it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import Accelerator, Vendor
from gpudoctor.facts.apple_model import AppleFacts, AppleGpu, MacPlatform, MpsRepl

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.framework_model import CollectEnvReport, PythonTarget

_COMPAT_VERSION = "10.16"
_METAL_VERSION = re.compile(r"^Metal \d{1,2}$")
_APPLE_CHIP = re.compile(r"^\s*Apple M\d", re.IGNORECASE)
_INTEL_CHIP = re.compile(r"\bIntel\b", re.IGNORECASE)
_OS_LINE = re.compile(r"^\s*macOS\s+(\d{1,2}(?:\.\d{1,3}){0,2})\b")
_PLATFORM_LINE = re.compile(r"^\s*macOS-(\d{1,2}(?:\.\d{1,3}){0,2})-")


def apple_facts(facts: Facts) -> AppleFacts:
    from gpudoctor.facts.system_profiler import parse_system_profiler

    gpus = parse_system_profiler(facts.evidence.text(Ev.MAC_DISPLAYS.value))
    scan = facts.evidence.json(Ev.MACOS.value)
    repl = next(
        (r for r in (parse_mps_repl(facts.evidence.text(key.value)) for key in _REPL_SOURCES) if r is not None), None
    )
    return AppleFacts(gpus=gpus, platform=mac_platform(scan, _target_python(facts), facts.collect_env, gpus), repl=repl)


# --------------------------------------------------------------------------- a pasted Python session

_REPL_SOURCES = (Ev.PASTE, Ev.TORCH_COLLECT_ENV)
_PROMPT = re.compile(r"^\s*(?:>>>|\.\.\.)\s?(?P<code>.*)$")
_RESULT = re.compile(r"\b(True|False)\s*$")
_NEWER = re.compile(r"is_macos_or_newer\(\s*(\d{1,2})\s*,\s*(\d{1,2})\s*\)")
_VERSION = re.compile(r"(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:[.+a-z][\w.+]{0,40})?)")
_MAX_REPL_LINES = 20_000


def parse_mps_repl(text: str | None) -> MpsRepl | None:
    """What a pasted ``>>>`` session printed for ``torch.backends.mps.is_built()`` / ``is_available()`` /
    ``is_macos_or_newer(major, minor)`` and ``torch.__version__``; None when it asked none of them."""
    if not text or ">>>" not in text:
        return None
    version: str | None = None
    built: bool | None = None
    available: bool | None = None
    newer: list[tuple[str, bool]] = []
    pending: str | None = None  # the code of the last prompt line whose first output line is still to come
    for line in text.splitlines()[:_MAX_REPL_LINES]:
        prompt = _PROMPT.match(line)
        if prompt:
            pending = prompt.group("code")
            continue
        if pending is None or not line.strip():
            continue
        code, pending = pending, None
        result = _RESULT.search(line)
        value = result.group(1) == "True" if result else None
        asked = _NEWER.search(code)
        if "__version__" in code:
            found = _VERSION.search(line)
            version = found.group(1) if found else version
        elif value is not None and asked:
            newer.append((f"{int(asked.group(1))}.{int(asked.group(2))}", value))
        elif value is not None and "mps.is_built()" in code:
            built = value
        elif value is not None and "mps.is_available()" in code:
            available = value
    if built is None and available is None and not newer:
        return None
    return MpsRepl(version, built, available, tuple(newer))


def _target_python(facts: Facts) -> PythonTarget | None:
    for framework in (facts.torch, facts.tensorflow, facts.jax, facts.cupy):
        if framework.python is not None:
            return framework.python
    return None


def mac_platform(
    scan: object, python: PythonTarget | None, report: CollectEnvReport | None, gpus: tuple[AppleGpu, ...] = ()
) -> MacPlatform | None:
    """The Mac as every source describes it; None when nothing says this is a Mac."""
    record = scan if isinstance(scan, dict) and scan.get("is_macos") is True else None
    python = python if python is not None and (python.platform or "").startswith("darwin") else None
    report_os = _match(_OS_LINE, report.os if report else None)
    report_platform = _match(_PLATFORM_LINE, report.python_platform if report else None)
    report = report if report is not None and (report_os or report_platform) else None
    if record is None and python is None and report is None and not gpus:
        return None
    sources = tuple(
        name
        for name, present in (
            ("macos.json", record is not None),
            ("probe", python is not None),
            ("collect_env", report is not None),
            ("system_profiler", bool(gpus)),
        )
        if present
    )
    chip = _text(record, "cpu_brand") or (report.cpu_name if report else None) or _chip_from_gpus(gpus)
    apple_silicon = _apple_silicon(record, chip, gpus, python, report)
    python_arch = (
        (python.machine if python else None) or (report.machine if report else None) or _text(record, "machine")
    )
    python_macos = (python.mac_version if python else None) or report_platform or _text(record, "mac_version")
    macos = _real_version(
        report_os,
        _text(record, "os_product_version"),
        _text(record, "mac_version"),
        python.mac_version if python else None,
    )
    translated, because = _translated(record, python, python_arch, apple_silicon, chip)
    return MacPlatform(
        macos_version=macos,
        chip=chip,
        apple_silicon=apple_silicon,
        python_arch=python_arch,
        translated=translated,
        translated_because=because,
        python_macos=python_macos,
        sources=sources,
    )


def _apple_silicon(
    record: dict[str, object] | None,
    chip: str | None,
    gpus: tuple[AppleGpu, ...],
    python: PythonTarget | None,
    report: CollectEnvReport | None,
) -> bool | None:
    arm64 = record.get("hw_optional_arm64") if record else None
    if arm64 == 1:
        return True
    if chip and _APPLE_CHIP.match(chip):
        return True
    if any(g.vendor == "apple" for g in gpus):
        return True
    # An arm64 Python runs only on Apple silicon (there is no arm64 translation on Intel Macs).
    if (python and python.machine == "arm64") or (report and report.machine == "arm64"):
        return True
    if chip and _INTEL_CHIP.search(chip):
        return False
    if arm64 == 0:
        return False
    return None


def _translated(
    record: dict[str, object] | None,
    python: PythonTarget | None,
    python_arch: str | None,
    apple_silicon: bool | None,
    chip: str | None,
) -> tuple[bool | None, str | None]:
    if python_arch == "x86_64" and apple_silicon:
        where = f"an {chip}" if chip and _APPLE_CHIP.match(chip) else "Apple silicon"
        return True, f"an x86_64 Python on {where} runs translated by Rosetta"
    if python is not None and python.translated is not None:
        return (
            python.translated,
            "the target Python runs translated (sysctl.proc_translated)" if python.translated else None,
        )
    if python_arch == "arm64":
        return False, None
    if python is None and record is not None and record.get("proc_translated") in (0, 1):
        # Only gpudoctor's own Python was asked: it speaks for the target when no probe ran.
        translated = record.get("proc_translated") == 1
        return translated, "sysctl.proc_translated = 1 (gpudoctor's Python)" if translated else None
    if apple_silicon is False:
        return False, None
    return None, None


def _real_version(*candidates: str | None) -> str | None:
    """The first version that is a real macOS release (not the compatibility "10.16")."""
    for candidate in candidates:
        if candidate and candidate != _COMPAT_VERSION and not candidate.startswith(_COMPAT_VERSION + "."):
            return candidate
    return None


def _chip_from_gpus(gpus: tuple[AppleGpu, ...]) -> str | None:
    """Apple silicon's GPU is named after the chip ("Chipset Model: Apple M3")."""
    return next((g.name for g in gpus if g.vendor == "apple" and g.name and _APPLE_CHIP.match(g.name)), None)


def _match(pattern: re.Pattern[str], text: str | None) -> str | None:
    match = pattern.match(text) if text else None
    return match.group(1) if match else None


def _text(record: dict[str, object] | None, key: str) -> str | None:
    value = record.get(key) if record else None
    return value.strip() or None if isinstance(value, str) else None


def apple_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    """The Mac's GPUs: system_profiler's list; without one, Apple silicon's own GPU named after the chip."""
    apple = facts.apple
    gpus = apple.gpus
    if not gpus and apple.platform and apple.platform.apple_silicon and apple.platform.chip:
        if _APPLE_CHIP.match(apple.platform.chip):
            gpus = (AppleGpu(name=apple.platform.chip, vendor="apple", bus="Built-In"),)
    source = "system_profiler" if apple.gpus else "chip"
    return tuple(
        Accelerator(
            vendor=Vendor.APPLE,
            index=index,
            name=gpu.name,
            bus_id=None,
            memory_total_mib=gpu.vram_mib,  # Apple silicon shares the system's memory: None there
            # "Metal 3"; older macOS prints a feature-set sentence, kept in ``apple.metal`` but too long for a label
            architecture=gpu.metal if gpu.metal and _METAL_VERSION.match(gpu.metal) else None,
            driver_sees=True,
            source=source,
            apple=gpu,
        )
        for index, gpu in enumerate(gpus)
    )
