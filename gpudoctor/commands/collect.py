"""``gpudoctor collect``: write a snapshot of this machine's evidence for ``check --from`` elsewhere."""

from __future__ import annotations

import argparse
import signal
import sys
import time

from gpudoctor.commands.common import guarded
from gpudoctor.commands.live import ask_cloud_metadata_if_asked, run_smoke_until_signal, target_python
from gpudoctor.results import EXIT_OK


def _default_snapshot_name() -> str:
    return time.strftime("gpudoctor-snapshot-%Y%m%d-%H%M%S.tar.gz")


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.interrupts import interruptible
    from gpudoctor.evidence.safe_write import refuse_to_replace
    from gpudoctor.evidence.snapshot import write_snapshot

    path: str = args.output or _default_snapshot_name()
    # Before collecting, not after; a directory snapshot may go into an existing folder with --force.
    refuse_to_replace(path, args.force, directory=not path.endswith((".tar.gz", ".tgz")))
    target = target_python(args)
    started = time.perf_counter()
    with interruptible() as interruption:
        evidence = collect(
            timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
        )
    if interruption.signal is not None:
        # A snapshot missing sources would be diagnosed elsewhere as if they had failed here: none is written.
        sys.stderr.write(f"gpudoctor: collection was interrupted by {interruption.signal.name}; {path} not written\n")
        return 128 + int(interruption.signal)
    ask_cloud_metadata_if_asked(evidence, args)
    if args.smoke:
        smoke_item, smoke_signal = run_smoke_until_signal(args, show_progress=True)
        if smoke_signal == signal.SIGTERM:  # Ctrl-C keeps what finished (the item says it was interrupted)
            sys.stderr.write(f"gpudoctor: the smoke run was terminated (SIGTERM); {path} not written\n")
            return 128 + int(smoke_signal)
        evidence.add(smoke_item)
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
