"""Collect evidence from the live machine, every source at once.

Thin on purpose: run a command, read a file, call a scan.  Each source runs in
its own thread (commands wait in subprocesses, so threads overlap fully), and
the slowest source bounds the whole collection, not the sum of them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

# Imported with this module, not in the probes' threads: an import there would hold the import lock
# while every other thread starts, and the probes (the slowest sources) would start last.
from gpudoctor.evidence.framework_probes import (
    DEFAULT_PROBE_TIMEOUT_S,
    absent_here,
    likely_installed,
    locate_absent,
    run_probe,
)
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.run_command import run_command
from gpudoctor.evidence.sources import SOURCES, Source

if TYPE_CHECKING:
    from gpudoctor.evidence.target_python import TargetPython

DEFAULT_TIMEOUT_S = 10.0

# Kernel log lines worth keeping: the NVIDIA driver's own (NVRM, Xid) and nouveau's; AMD's amdgpu and KFD;
# Intel's i915 and xe; and the PCI core's words about BARs (a GPU whose BAR found no space fails to probe).
_KERNEL_LOG_LINE = re.compile(
    r"NVRM|Xid|nvidia|nouveau|NVIDIA|amdgpu|\bkfd\b|\b(?:i915|xe) [0-9a-f]{4}:|BAR \d+: (?:no space|failed)",
    re.IGNORECASE,
)
_KERNEL_LOG_KEEP = 500


def _read_file(source: Source) -> EvidenceItem:
    item = EvidenceItem(name=source.name, kind="file")
    started = time.monotonic()
    path = source.path
    if source.fallback_path and not os.path.exists(path) and os.path.exists(source.fallback_path):
        path = source.fallback_path
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            item.text = handle.read(1_000_000)
    except FileNotFoundError:
        item.error = f"{path} does not exist"
    except OSError as exc:
        item.error = f"cannot read {path}: {exc.strerror or exc}"
    item.duration_s = time.monotonic() - started
    return item


def _run_scan(source: Source, scan: Callable[[], object]) -> EvidenceItem:
    item = EvidenceItem(name=source.name, kind="json")
    started = time.monotonic()
    try:
        item.text = json.dumps(scan(), indent=1, sort_keys=True, default=str)
    except Exception as exc:  # noqa: BLE001 - a scan that fails is recorded, the rest go on
        item.error = f"{type(exc).__name__}: {exc}"
    item.duration_s = time.monotonic() - started
    return item


def _filter_kernel_log(item: EvidenceItem) -> EvidenceItem:
    if item.text:
        lines = [line for line in item.text.splitlines() if _KERNEL_LOG_LINE.search(line)]
        item.text = "\n".join(lines[-_KERNEL_LOG_KEEP:]) + ("\n" if lines else "")
    return item


def driver_absent() -> bool:
    """No NVIDIA kernel module here, and not WSL (whose driver lives in Windows)."""
    if os.path.exists("/proc/driver/nvidia/version") or os.path.isdir("/usr/lib/wsl/lib"):
        return False
    try:
        with open("/proc/version", encoding="utf-8", errors="replace") as handle:
            return "microsoft" not in handle.read().lower()
    except OSError:
        return True


def skipped(source: Source) -> EvidenceItem:
    return EvidenceItem(
        name=source.name,
        kind=source.kind,
        argv=list(source.argv),
        error="skipped: no NVIDIA kernel module is loaded, so this can only repeat the error "
        "recorded in nvidia-smi.txt",
    )


def _target_python_record(target: TargetPython | None) -> dict[str, str | None]:
    if target is None:
        raise ValueError("no target Python was chosen")
    return {"executable": target.executable, "how": target.how, "note": target.note}


# Priority of the sources that are not on the critical path while a framework is being imported.
_BACKGROUND_NICE = 10


@dataclass(frozen=True)
class ProbePlan:
    """How the framework probes of one run are scheduled.

    ``heavy``: frameworks whose package sits in the target's site-packages; their probes start first,
    at normal priority, and everything else runs at a lower one meanwhile.  ``located``: the locator's
    answer (one process) for the other frameworks, most likely absent; only those it finds present get
    a probe of their own.
    """

    heavy: frozenset[str] = frozenset()
    located: Future[dict[str, EvidenceItem]] | None = None
    # Set when the locator found the interpreter itself hung: the heavy probes stop at once.
    interpreter_hung: threading.Event = field(default_factory=threading.Event)


def _probe(
    framework: str, target: TargetPython | None, probe_timeout: float | None, plan: ProbePlan, nice: int
) -> EvidenceItem:
    if target is None:
        raise ValueError(f"the {framework} probe needs a target Python")
    item = absent_here(framework, target.executable)
    if item is None and plan.located is not None and framework not in plan.heavy:
        item = plan.located.result().get(framework)
    if item is not None:
        return item
    timeout = probe_timeout or DEFAULT_PROBE_TIMEOUT_S
    item = run_probe(framework, target.executable, timeout, nice=nice, cancel=plan.interpreter_hung)
    if plan.interpreter_hung.is_set() and plan.located is not None:
        return plan.located.result().get(framework, item)
    return item


def _locate(frameworks: list[str], python: str, timeout: float, hung: threading.Event) -> dict[str, EvidenceItem]:
    located = locate_absent(frameworks, python, timeout)
    if any(item.timed_out for item in located.values()):
        hung.set()
    return located


def collect_source(
    source: Source,
    timeout: float,
    target: TargetPython | None = None,
    probe_timeout: float | None = None,
    plan: ProbePlan = ProbePlan(),
) -> EvidenceItem:
    """Collect one source; while heavy probes (importing a framework takes seconds) run, the rest yield the CPU."""
    nice = _BACKGROUND_NICE if plan.heavy and source.probe not in plan.heavy else 0
    if source.probe:
        return _probe(source.probe, target, probe_timeout, plan, nice)
    if source.name == "target-python.json":
        return _run_scan(source, lambda: _target_python_record(target))
    if source.kind == "file":
        return _read_file(source)
    if source.scan is not None:
        return _run_scan(source, source.scan)
    item = run_command(source.name, list(source.argv), timeout, nice=nice)
    if source.kind == "json":
        item.kind = "json"
    if source.name == "dmesg-nvidia.txt":
        item = _filter_kernel_log(item)
    return item


def live_sources(sources: Iterable[Source], target: TargetPython | None, frameworks: Iterable[str]) -> list[Source]:
    """The sources worth collecting here: no pasted-report sources; probes only with a target Python."""
    wanted = set(frameworks) if target is not None else set()
    return [
        s
        for s in sources
        if s.live
        and (s.probe is None or s.probe in wanted)
        and (s.name != "target-python.json" or target is not None)
        and (not s.platforms or sys.platform.startswith(s.platforms))
    ]


def collect(
    timeout: float = DEFAULT_TIMEOUT_S,
    sources: Iterable[Source] = SOURCES,
    on_done: Callable[[EvidenceItem], None] | None = None,
    target: TargetPython | None = None,
    frameworks: Iterable[str] = (),
    probe_timeout: float | None = None,
) -> Evidence:
    """Collect every source concurrently; ``on_done`` is told about each as it finishes.

    ``target`` (a :class:`~gpudoctor.evidence.target_python.TargetPython`) is the Python the
    ``frameworks`` probes run in; without one no framework is probed.
    """
    sources = live_sources(sources, target, frameworks)
    evidence = Evidence(origin={"kind": "live"})
    skip_driver_queries = driver_absent()
    # Probes first: they are the slowest (importing a framework takes seconds), so they start at once.
    sources_by_start = sorted(sources, key=lambda s: s.probe is None)
    probes = [s.probe for s in sources if s.probe]  # none without a target (live_sources)
    python = target.executable if target is not None else sys.executable
    heavy = frozenset(p for p in probes if likely_installed(p, python))
    own_python = os.path.abspath(python) == os.path.abspath(sys.executable)
    # Every probe is located, the heavy ones too: the locator imports nothing, so when it hangs the
    # interpreter does, and the heavy probes are stopped then instead of running to the probe timeout.
    to_locate = [] if own_python else probes
    hung = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, len(sources) + 1)) as pool:
        located = pool.submit(_locate, to_locate, python, timeout, hung) if to_locate else None
        plan = ProbePlan(heavy, located, hung)
        futures = [
            pool.submit(skipped, source)
            if source.needs_driver and skip_driver_queries
            else pool.submit(collect_source, source, timeout, target, probe_timeout, plan)
            for source in sources_by_start
        ]
        for future in futures:
            item = future.result()
            evidence.add(item)
            if on_done:
                on_done(item)
    # Keep the catalogue's order so snapshots and reports are stable.
    evidence.items = {s.name: evidence.items[s.name] for s in sources}
    return evidence
