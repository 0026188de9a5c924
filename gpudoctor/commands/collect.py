"""``gpudoctor collect``: write a snapshot of this machine's evidence for ``check --from`` elsewhere."""

from __future__ import annotations

import argparse
import sys
import time

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.live import run_smoke, target_python
from gpudoctor.results import EXIT_OK


def _default_snapshot_name() -> str:
    return time.strftime("gpudoctor-snapshot-%Y%m%d-%H%M%S.tar.gz")


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.snapshot import write_snapshot

    path: str = args.output or _default_snapshot_name()
    refuse_existing(path, args.force)
    target = target_python(args)
    started = time.perf_counter()
    evidence = collect(
        timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
    )
    if args.smoke:
        evidence.add(run_smoke(args, show_progress=True))
    elapsed = time.perf_counter() - started
    write_snapshot(evidence, path, redacted=not args.no_redact, force=args.force)
    failed = [item.name for item in evidence.items.values() if item.error]
    present = sum(1 for item in evidence.items.values() if item.text is not None)
    sys.stderr.write(
        f"Wrote {path}: {present} of {len(evidence.items)} sources in {elapsed:.2f} s"
        + (" (UUIDs and serials redacted)" if not args.no_redact else "")
        + ".\n"
    )
    if failed:
        sys.stderr.write(f"Not available here (recorded in manifest.json): {', '.join(failed)}\n")
    sys.stderr.write(f"Diagnose it anywhere with: gpudoctor check --from {path}\n")
    return EXIT_OK
