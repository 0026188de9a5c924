"""``gpudoctor check``: inspect this machine (or a snapshot) and report every check."""

from __future__ import annotations

import argparse
import signal
import time
from typing import TYPE_CHECKING

from gpudoctor.commands.common import guarded
from gpudoctor.commands.live import (
    ask_cloud_metadata_if_asked,
    collect_while_importing,
    run_smoke_until_signal,
    target_python,
)
from gpudoctor.commands.report import build_report, emit_report, mark_interrupted

if TYPE_CHECKING:
    from gpudoctor.api import CheckOptions


def check_options(args: argparse.Namespace) -> CheckOptions:
    """The preflight gates asked for on the command line."""
    return {
        "require_gpu": args.require_gpu,
        "min_gpus": args.min_gpus,
        "min_compute_capability": args.min_compute_capability,
        "min_gpu_memory": args.min_gpu_memory,
        "min_driver": args.min_driver,
        "cuda": args.cuda,
    }


@guarded
def main(args: argparse.Namespace) -> int:
    collect_s = None
    interrupted_by: signal.Signals | None = None
    if args.junit_xml:
        from gpudoctor.commands.common import refuse_existing

        refuse_existing(args.junit_xml, args.force)  # before the work, not after it
    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot
        from gpudoctor.registry import load_registry

        evidence = read_snapshot(args.from_path)
        registry = load_registry()
    else:
        from gpudoctor.evidence.collect import collect
        from gpudoctor.evidence.interrupts import interruptible

        target = target_python(args)
        started = time.perf_counter()
        with interruptible() as interruption:
            evidence, registry = collect_while_importing(
                lambda: collect(
                    timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
                ),
                args.format,
            )
        interrupted_by = interruption.signal
        if interrupted_by is None:
            ask_cloud_metadata_if_asked(evidence, args)  # live only: a snapshot is never asked for more
        collect_s = time.perf_counter() - started
        if args.smoke and interrupted_by is None:
            smoke_item, interrupted_by = run_smoke_until_signal(args, show_progress=args.format == "text")
            evidence.add(smoke_item)
    report, _ = build_report(evidence, check_options(args), args.select, args.ignore, collect_s, registry)
    if interrupted_by is None:
        return emit_report(report, args)
    exit_code = mark_interrupted(report, interrupted_by)
    emit_report(report, args)
    return exit_code
