"""What the generator commands (dockerfile, install-script) share: the machine to fit, writing the result."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gpudoctor.commands.common import write_new_file
from gpudoctor.results import EXIT_OK

if TYPE_CHECKING:
    from gpudoctor.generate.model import GeneratedFile, MachineTarget


def generator_target(args: argparse.Namespace) -> MachineTarget:
    """The machine a generator fits: a snapshot's, or this machine's (its driver, GPUs, distro)."""
    from gpudoctor.facts.facts import Facts
    from gpudoctor.generate.target import GENERATOR_SOURCES, resolve_for_driver, target_from_facts

    resolve_for_driver(args.for_driver)  # a driver branch it knows nothing of is refused before collecting
    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot

        return target_from_facts(
            Facts(read_snapshot(args.from_path)), args.for_driver, source=f"snapshot {args.from_path}"
        )
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.sources import SOURCES

    evidence = collect(
        timeout=args.timeout, sources=[s for s in SOURCES if s.name in {key.value for key in GENERATOR_SOURCES}]
    )
    return target_from_facts(Facts(evidence), args.for_driver)


def generator_vendor(args: argparse.Namespace) -> str | None:
    """Whose stack to generate for: ``--vendor``, ``--rocm`` (AMD), ``--for-driver`` (an NVIDIA driver, so NVIDIA),
    else None: the machine's. An NVIDIA driver asked for together with AMD's stack is refused (exit 2)."""
    from gpudoctor.errors import UsageError

    vendor: str | None = args.vendor
    amd = vendor == "amd" or args.rocm is not None
    if args.for_driver and amd:
        raise UsageError("--for-driver names an NVIDIA driver; it does not go with --vendor amd or --rocm")
    if vendor == "nvidia" and args.rocm is not None:
        raise UsageError("--rocm is AMD's stack; it does not go with --vendor nvidia")
    if vendor is None and args.for_driver:
        return "nvidia"
    return vendor


def emit_generated(generated: GeneratedFile, args: argparse.Namespace, executable: bool = False) -> int:
    """The generated text on stdout or into -o FILE (never over an existing file without --force)."""
    if args.verbose:
        for choice in generated.choices:
            sys.stderr.write(f"gpudoctor: {choice.what}: {choice.chosen} — {choice.why}\n")
    if not args.output or args.output == "-":
        sys.stdout.write(generated.text)
        return EXIT_OK
    write_new_file(args.output, generated.text, args.force, executable=executable)
    sys.stderr.write(f"gpudoctor: wrote {args.output}\n")
    return EXIT_OK
