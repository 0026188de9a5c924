"""One node check, as every scheduler hook runs it: the level and the budget applied to the options, the
report produced (live or from a snapshot), and the verdict.  ``check``, ``slurm-healthcheck`` and
``fleet node-check`` all go through here, so a node is judged the same whichever host asks.
"""

from __future__ import annotations

import argparse
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.probes.protocol import FRAMEWORKS as FRAMEWORK_CHOICES

if TYPE_CHECKING:
    from gpudoctor.api import CheckOptions
    from gpudoctor.results import Report
    from gpudoctor.verdict import Verdict


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


def produce_report(args: argparse.Namespace, show_progress: bool = False) -> NodeRun:
    """The check's report: the snapshot in ``args.from_path`` if given, else this machine, live."""
    from gpudoctor.commands.report import build_report

    apply_level(args)
    collect_s = None
    interrupted_by: signal.Signals | None = None
    from_path: str | None = getattr(args, "from_path", None)
    if from_path:
        from gpudoctor.evidence.snapshot import read_snapshot
        from gpudoctor.registry import load_registry

        evidence = read_snapshot(from_path)
        registry = load_registry()
    else:
        from gpudoctor.commands.live import (
            ask_cloud_metadata_if_asked,
            collect_while_importing,
            run_smoke_until_signal,
            target_python,
        )
        from gpudoctor.evidence.collect import collect
        from gpudoctor.evidence.interrupts import interruptible

        target = target_python(args)
        started = time.perf_counter()
        with interruptible() as interruption:
            evidence, registry = collect_while_importing(
                lambda: collect(
                    timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
                ),
                getattr(args, "format", "json"),
            )
        interrupted_by = interruption.signal
        if interrupted_by is None:
            ask_cloud_metadata_if_asked(evidence, args)  # live only: a snapshot is never asked for more
        collect_s = time.perf_counter() - started
        if args.smoke and interrupted_by is None:
            smoke_item, interrupted_by = run_smoke_until_signal(args, show_progress=show_progress)
            evidence.add(smoke_item)
    report, _ = build_report(
        evidence, check_options(args), getattr(args, "select", None), getattr(args, "ignore", None), collect_s, registry
    )
    stopped = f"interrupted by {interrupted_by.name}" if interrupted_by is not None else None
    return NodeRun(report, interrupted_by, stopped)


def verdict_of(run: NodeRun, args: argparse.Namespace) -> Verdict:
    from gpudoctor.verdict import node_verdict

    return node_verdict(run.report, getattr(args, "fail_on", "problem"), run.stopped)
