"""Collecting a live machine for a command: overlapping imports with collection, the target Python,
the smoke workloads."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from types import FrameType

    from gpudoctor.evidence.model import Evidence, EvidenceItem
    from gpudoctor.evidence.target_python import TargetPython
    from gpudoctor.registry import Registry


def _import_what_the_report_needs(output_format: str, extra: tuple[str, ...] = ()) -> None:
    """Import the parsers, runner and renderer while collection runs: after it, only work is left."""
    renderer = {"json": "json_report", "markdown": "markdown"}.get(output_format, "terminal")
    for module in (
        "gpudoctor.facts.facts",
        "gpudoctor.facts.framework_probe",
        "gpudoctor.runner",
        f"gpudoctor.render.{renderer}",
        *extra,
    ):
        importlib.import_module(module)


def collect_while_importing(
    collect_call: Callable[[], Evidence], output_format: str, extra: tuple[str, ...] = ()
) -> tuple[Evidence, Registry]:
    """Collect live evidence and, meanwhile, load the checks and the renderers: (evidence, registry).

    Commands run in subprocesses, so the imports overlap them instead of following them.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(collect_call)
        from gpudoctor.registry import load_registry

        registry = load_registry()
        _import_what_the_report_needs(output_format, extra)
        return pending.result(), registry


def target_python(args: argparse.Namespace) -> TargetPython | None:
    """The Python to probe frameworks in; None when no framework is to be probed."""
    if not args.frameworks:
        return None
    from gpudoctor.evidence.target_python import resolve_target_python

    return resolve_target_python(args.python, os.environ)


def run_smoke(args: argparse.Namespace, show_progress: bool) -> EvidenceItem:
    """Run the smoke workloads in the target Python, with a progress bar on a terminal; an evidence item."""
    from gpudoctor.evidence.smoke_runner import run_smoke as run_workloads
    from gpudoctor.evidence.target_python import resolve_target_python
    from gpudoctor.render.progress import smoke_progress

    target = resolve_target_python(getattr(args, "python", None), os.environ)
    with smoke_progress(show_progress) as on_progress:
        item = run_workloads(
            target.executable,
            framework=args.smoke_framework,
            mode=args.smoke_mode,
            budget=args.budget,
            on_progress=on_progress,
        )
    if item.error and "interrupt" in item.error:
        sys.stderr.write("gpudoctor: smoke interrupted; reporting what finished\n")
    return item


def run_smoke_until_signal(args: argparse.Namespace, show_progress: bool) -> tuple[EvidenceItem, signal.Signals | None]:
    """:func:`run_smoke`, with SIGTERM handled as Ctrl-C is (the probe stops and prints what finished, its
    process group and temporary folder go); also the signal that cut it short, if one did.
    """
    received: list[signal.Signals] = []
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signal.Signals(signum))
        raise KeyboardInterrupt

    if in_main_thread:
        for signum in previous:
            signal.signal(signum, on_signal)
    try:
        item = run_smoke(args, show_progress)
    finally:
        if in_main_thread:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    return item, (received[0] if received else None)


def ask_cloud_metadata_if_asked(
    evidence: Evidence, args: argparse.Namespace, environ: dict[str, str] | None = None
) -> EvidenceItem | None:
    """With ``--cloud-metadata``, ask the metadata service of the cloud that DMI (or cloud-init) names, and add
    what it said to ``evidence``; the item added, or None without the flag (then nothing is sent anywhere).

    Only after live collection: the provider is decided by the facts, and a service gpudoctor does not know (or
    no cloud at all) is never guessed at: the item then says why nothing was sent.
    """
    if not getattr(args, "cloud_metadata", False):
        return None
    from gpudoctor.evidence.cloud_metadata import PROVIDERS, ask_cloud_metadata, not_asked_item
    from gpudoctor.facts.facts import Facts

    cloud = Facts(evidence).platform.cloud
    if cloud is None or cloud.provider not in PROVIDERS:
        named = f" ({cloud.provider_name})" if cloud is not None else ""
        item = not_asked_item(f"DMI names no cloud whose metadata service gpudoctor knows{named}; nothing was sent")
    else:
        item = ask_cloud_metadata(cloud.provider, environ=environ)
    evidence.add(item)
    return item
