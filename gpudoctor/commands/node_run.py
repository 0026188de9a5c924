"""One node check, as every scheduler hook runs it: the level and the budget applied to the options, the
report produced (live or from a snapshot), and the verdict.  ``check``, ``slurm-healthcheck`` and
``fleet node-check`` all go through here, so a node is judged the same whichever host asks.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.errors import UsageError
from gpudoctor.probes.protocol import FRAMEWORKS as FRAMEWORK_CHOICES
from gpudoctor.probes.protocol import SMOKE_FILE, smoke_budget_s

if TYPE_CHECKING:
    from gpudoctor.api import CheckOptions
    from gpudoctor.evidence.model import Evidence
    from gpudoctor.registry import Registry
    from gpudoctor.results import Report
    from gpudoctor.verdict import Verdict

# What each level runs, in the words the report and --help use.
LEVEL_WORDS = {
    "quick": "static checks only: no framework probe (unless --frameworks names some), no smoke workloads",
    "standard": "static checks and the framework probes",
    "full": "static checks, the framework probes and the smoke workloads",
}
# Of a --budget, what is kept back for building and printing the report once collection stops (at most).
_REPORT_RESERVE_S = 1.0
# Once the budget has run out, how often the watchdog looks again for a command that started since.
_RESTOP_S = 0.1
# The smoke workloads get what is left of the budget less this share (at most _SMOKE_SLACK_S): the probe only
# stops *starting* workloads at its budget, and the one running then must finish before the watchdog's stop.
_SMOKE_SLACK_SHARE = 0.25
_SMOKE_SLACK_S = 10.0
# Less than this left: the smoke workloads are not started at all (the interpreter alone takes a second).
_MIN_SMOKE_S = 2.0


def apply_level(args: argparse.Namespace) -> None:
    """``--level``: quick leaves the framework probes out (unless ``--frameworks`` named some) and never runs
    smoke; standard is the plain check; full adds the smoke workloads.  Options a command lacks are set here
    to the plain check's defaults, so every caller can hand its ``args`` over."""
    level = getattr(args, "level", None) or "standard"
    defaults = {
        "frameworks": list(FRAMEWORK_CHOICES),
        "probe_timeout": 60.0,
        "python": None,
        "smoke": False,
        "smoke_framework": "torch",
        "smoke_mode": "quick",
        "budget": None,
        "cloud_metadata": False,
        "timeout": 10.0,
    }
    for name, value in defaults.items():
        if not hasattr(args, name):
            setattr(args, name, value)
    if level == "quick" and args.smoke:
        raise UsageError("--smoke runs the smoke workloads, which --level quick leaves out: use --level full")
    if level == "quick" and list(args.frameworks) == list(FRAMEWORK_CHOICES):
        args.frameworks = []
    if level == "quick":
        args.smoke = False
    elif level == "full":
        args.smoke = True


def check_options(args: argparse.Namespace) -> CheckOptions:
    """The preflight gates asked for on the command line (none on commands that have no gates)."""
    return {
        "require_gpu": getattr(args, "require_gpu", False),
        "min_gpus": getattr(args, "min_gpus", None),
        "min_compute_capability": getattr(args, "min_compute_capability", None),
        "min_gpu_memory": getattr(args, "min_gpu_memory", None),
        "min_driver": getattr(args, "min_driver", None),
        "cuda": getattr(args, "cuda", None),
    }


@dataclass
class NodeRun:
    """A finished run: the report, and why it did not finish where it did not."""

    report: Report
    interrupted_by: signal.Signals | None = None
    stopped: str | None = None  # "the 60 s budget ran out", "interrupted by SIGTERM"


class RunBudget:
    """``--budget``: the deadline of the whole run, and the watchdog that keeps it.

    At the deadline every command gpudoctor is running is killed (and every one that starts after, until the
    run is over), so collection returns with what finished and the report is still built and printed.  The
    deadline comes a little before the budget's end, leaving that time to the report.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._deadline = None if seconds is None else time.monotonic() + seconds - min(_REPORT_RESERVE_S, seconds / 10)
        self._over = threading.Event()
        self._ran_out = threading.Event()

    @property
    def reason(self) -> str:
        return f"the {self.seconds:g} s budget ran out"

    @property
    def ran_out(self) -> bool:
        """Whether the run was cut short by the budget (the watchdog fired, or a step was left out for lack of time)."""
        return self._ran_out.is_set()

    def remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def limit(self, seconds: float) -> float:
        """A command's time limit, no longer than the budget: the watchdog stops it at the deadline in any
        case; this is the backstop, a little later, so that the watchdog's stop is the one its item records."""
        return seconds if self.seconds is None else min(seconds, self.seconds + _REPORT_RESERVE_S)

    def smoke_seconds(self, wanted: float) -> float | None:
        """The smoke workloads' budget within what is left, or None (and the run marked cut short) when too
        little is left to start them."""
        remaining = self.remaining()
        if remaining is None:
            return wanted
        usable = remaining - min(_SMOKE_SLACK_S, _SMOKE_SLACK_SHARE * remaining)
        if usable < _MIN_SMOKE_S:
            self._ran_out.set()
            return None
        return min(wanted, usable)

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """While inside, the watchdog holds the deadline (from a thread of its own: the main thread may be
        waiting on anything, and killing a command never needs a signal handler)."""
        if self._deadline is None:
            yield
            return
        watchdog = threading.Thread(target=self._watch, name="gpudoctor-budget", daemon=True)
        watchdog.start()
        try:
            yield
        finally:
            self._over.set()
            watchdog.join()

    def _watch(self) -> None:
        from gpudoctor.evidence.run_command import stop_all_commands

        if self._over.wait(max(self.remaining() or 0.0, 0.0)):
            return
        self._ran_out.set()
        # Again and again until the run is over: a command that was starting at the deadline registers a moment
        # later, and a collection thread may start one more after its neighbour was stopped.
        while True:
            stop_all_commands(self.reason)
            if self._over.wait(_RESTOP_S):
                return


def produce_report(args: argparse.Namespace, show_progress: bool = False) -> NodeRun:
    """The check's report: the snapshot in ``args.from_path`` if given, else this machine, live.

    ``args.time_budget`` (``--budget``) bounds a live run: the command and probe timeouts are cut to it, the
    smoke workloads get what is left, and at the deadline whatever still runs is stopped; the run is then
    "stopped" (its verdict unknown unless a problem was found).  A snapshot is only read: no budget applies.
    """
    from gpudoctor.commands.report import build_report

    apply_level(args)
    collect_s = None
    interrupted_by: signal.Signals | None = None
    budget = RunBudget(getattr(args, "time_budget", None))
    not_finished: list[str] = []
    from_path: str | None = getattr(args, "from_path", None)
    if from_path:
        from gpudoctor.evidence.snapshot import read_snapshot
        from gpudoctor.registry import load_registry

        evidence = read_snapshot(from_path)
        registry = load_registry()
    else:
        started = time.perf_counter()
        with budget.watching():
            evidence, registry, interrupted_by = _collect_live(args, budget, show_progress)
        collect_s = time.perf_counter() - started
        if budget.ran_out:
            not_finished = _drop_stopped_items(evidence)
            if args.smoke and interrupted_by is None and SMOKE_FILE not in evidence.items:
                not_finished = sorted({*not_finished, SMOKE_FILE})  # killed, or never started for lack of time
    report, _ = build_report(
        evidence, check_options(args), getattr(args, "select", None), getattr(args, "ignore", None), collect_s, registry
    )
    stopped = None
    if interrupted_by is not None:
        stopped = f"interrupted by {interrupted_by.name}"
    elif budget.ran_out:
        stopped = budget.reason
    if not from_path:
        _record_scope(report, args, budget, stopped, not_finished)
    return NodeRun(report, interrupted_by, stopped)


def _collect_live(
    args: argparse.Namespace, budget: RunBudget, show_progress: bool
) -> tuple[Evidence, Registry, signal.Signals | None]:
    """Collect this machine (and run the smoke workloads when asked) within the budget."""
    from gpudoctor.commands.live import (
        ask_cloud_metadata_if_asked,
        collect_while_importing,
        run_smoke_until_signal,
        target_python,
    )
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.interrupts import interruptible

    timeout, probe_timeout = budget.limit(args.timeout), budget.limit(args.probe_timeout)
    target = target_python(args)
    with interruptible() as interruption:
        evidence, registry = collect_while_importing(
            lambda: collect(timeout=timeout, target=target, frameworks=args.frameworks, probe_timeout=probe_timeout),
            getattr(args, "format", "json"),
        )
    interrupted_by = interruption.signal
    if interrupted_by is None and not budget.ran_out:
        ask_cloud_metadata_if_asked(evidence, args)  # live only: a snapshot is never asked for more
    if args.smoke and interrupted_by is None:
        wanted = args.budget if args.budget is not None else smoke_budget_s(args.smoke_mode)
        smoke_seconds = None if budget.ran_out else budget.smoke_seconds(wanted)
        if smoke_seconds is not None:  # else not started: the report's collection section says why
            args.budget = smoke_seconds
            smoke_item, interrupted_by = run_smoke_until_signal(args, show_progress=show_progress)
            evidence.add(smoke_item)
    return evidence, registry, interrupted_by


def _drop_stopped_items(evidence: Evidence) -> list[str]:
    """Leave out the items of the commands the budget's watchdog killed; their names.

    Half an answer is no evidence: a probe killed mid-import would read as a framework that crashes, a killed
    nvidia-smi as a damaged driver, a killed smoke run as workloads that crash.  Left out, each reads as not
    collected (as in a partial snapshot), the report's ``sections.collection`` names them, and the verdict is
    "unknown" unless a problem was found in what did finish.  The watchdog kills with SIGKILL; so does the
    kernel's OOM killer, whose rare victim in a run the budget cut short is then left out too.
    """
    stopped = [
        name for name, item in evidence.items.items() if item.exit_code == -signal.SIGKILL and not item.timed_out
    ]
    for name in stopped:
        del evidence.items[name]
    return stopped


def _record_scope(
    report: Report, args: argparse.Namespace, budget: RunBudget, stopped: str | None, not_finished: list[str]
) -> None:
    """What the run was asked to cover, in the report (``sections.collection``): the level, the budget, and
    why it stopped short, for the fleet report and whoever reads a node's JSON later."""
    scope: dict[str, object] = {"level": getattr(args, "level", None) or "standard"}
    if budget.seconds is not None:
        scope["budget_s"] = budget.seconds
    if stopped is not None and budget.ran_out:
        scope["stopped"] = stopped
        scope["note"] = f"{stopped}: the report holds only what finished"
        scope["not_finished"] = not_finished
    collection = report.sections.setdefault("collection", {})
    if isinstance(collection, dict):
        collection.update(scope)


def verdict_of(run: NodeRun, args: argparse.Namespace) -> Verdict:
    from gpudoctor.verdict import node_verdict

    return node_verdict(run.report, getattr(args, "fail_on", "problem"), run.stopped)
