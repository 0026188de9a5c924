"""``gpudoctor topo``: the machine's wiring (matrix, links, NUMA), the TOPO checks, and on request an SVG."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from typing import TYPE_CHECKING

from gpudoctor.commands.common import guarded, refuse_existing, use_color, write_new_file
from gpudoctor.commands.live import collect_while_importing
from gpudoctor.commands.report import build_report, emit_report
from gpudoctor.results import Report, Severity
from gpudoctor.words import counted

if TYPE_CHECKING:
    from gpudoctor.registry import Registry

# What the machine summary's os, kernel and container come from (container.json and proc-version.txt tell
# containers and WSL apart, env.json holds NVIDIA_VISIBLE_DEVICES and friends).
SYSTEM_SOURCE_NAMES = ("os-release", "uname.txt", "proc-version.txt", "container.json", "env.json")

# TOPO001's findings name their GPU first ("GPU 3: PCIe link x8 of x16 — ...").
_GPU_FINDING = re.compile(r"GPU (\d+):")


def link_fixes(report: Report) -> dict[int, str]:
    """GPU index -> the fix TOPO001 gives for its PCIe link, for the picture's tooltips."""
    fixes: dict[int, str] = {}
    for result in report.results:
        if result.code != "TOPO001":
            continue
        for finding in result.findings:
            match = _GPU_FINDING.match(finding.message)
            if match and finding.fix is not None and finding.severity is not Severity.INFO:
                fixes.setdefault(int(match.group(1)), finding.fix.summary)
    return fixes


@guarded
def main(args: argparse.Namespace) -> int:
    """The wiring of the machine: the matrix and per-GPU links, the TOPO checks, and on request an SVG."""
    from gpudoctor.facts.facts import Facts
    from gpudoctor.render.topology_json import topology_json

    if args.svg and args.svg != "-":
        refuse_existing(args.svg, args.force)  # before collecting, not after
    registry: Registry | None = None
    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot

        evidence = read_snapshot(args.from_path)
    else:
        from gpudoctor.evidence.collect import collect
        from gpudoctor.evidence.sources import TOPOLOGY_SOURCES, source_by_name

        # The report's machine summary names the OS, kernel and container: read them too (cheap files and
        # scans), so `topo --format json` states them as `check` does instead of leaving them null.
        system = tuple(s for s in map(source_by_name, SYSTEM_SOURCE_NAMES) if s is not None)
        evidence, registry = collect_while_importing(
            lambda: collect(timeout=args.timeout, sources=TOPOLOGY_SOURCES + system),
            args.format,
            (
                "gpudoctor.facts.topology",
                "gpudoctor.facts.nvml_topology",
                "gpudoctor.render.topology_json",
                "gpudoctor.render.topology_text",
            ),
        )
    report, _ = build_report(evidence, {}, ["TOPO"], None, registry=registry)
    topo = Facts(evidence).machine_topology
    if args.svg:
        from gpudoctor.render.topology_svg import render_topology_svg

        svg = render_topology_svg(topo, link_fixes=link_fixes(report))
        if args.svg == "-":
            sys.stdout.write(svg)
            exit_code: int = report.exit_code(args.fail_on)
            return exit_code
        write_new_file(args.svg, svg, args.force)
        count = len(topo.gpus) + len(topo.amd_gpus)
        sys.stderr.write(f"gpudoctor: wrote {args.svg} ({counted(count, 'GPU')})\n")
    if args.format == "json":
        report.sections["topology"] = topology_json(topo)  # also when empty: the key is always there
        return emit_report(report, args)
    from gpudoctor.render.topology_text import render_topology_text

    color = use_color(sys.stdout)
    width = shutil.get_terminal_size((100, 24)).columns
    return emit_report(report, args, text_before=render_topology_text(topo, color=color, width=width) + "\n")
