"""Building the report (checks over facts, the machine summary, the areas' sections) and writing it out."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING, Any, Callable

from gpudoctor.commands.common import report_load_errors, use_color, write_new_file
from gpudoctor.errors import UsageError
from gpudoctor.results import (
    AcceleratorRecord,
    FactsSeen,
    GpuRecord,
    MachineSummary,
    PlatformSummary,
    PythonSummary,
    Report,
    ReportSource,
    gpu_record,
)

if TYPE_CHECKING:
    from gpudoctor.api import CheckOptions
    from gpudoctor.evidence.model import Evidence
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.model import DriverFacts
    from gpudoctor.registry import Registry


def _driver_words(driver: DriverFacts) -> str | None:
    if driver.kernel_module_loaded:
        return driver.kernel_version
    if driver.userspace_version:
        return f"not loaded (user space {driver.userspace_version} installed)"
    return None


def _python_summary(facts: Facts) -> PythonSummary | None:
    """The probed interpreter, so every report says whose frameworks it judged."""
    target = facts.target_python
    if not target.known:
        return None
    return {"executable": target.executable, "version": target.version, "how": target.how}


def _other_accelerators(facts: Facts) -> list[AcceleratorRecord]:
    from gpudoctor.facts.accelerators import Vendor, display_name

    return [
        {
            "vendor": a.vendor.value,
            "name": display_name(a),
            "architecture": a.architecture,
            "memory_total_mib": a.memory_total_mib,
            "bus_id": a.bus_id,
            "driver_sees": a.driver_sees,
        }
        for a in facts.accelerators
        if a.vendor is not Vendor.NVIDIA
    ]


def _accelerator_stacks(facts: Facts) -> dict[str, str]:
    """The other vendors' software stacks by version, where one is there to name: ROCm, macOS, libtpu."""
    stacks: dict[str, str] = {}
    named = facts.vendors_in_evidence
    if "amd" in named and facts.amd.rocm.version and (facts.amd.present or facts.amd.driver.loaded):
        stacks["rocm"] = facts.amd.rocm.version
    apple = facts.apple.platform if "apple" in named else None
    if apple is not None and facts.apple.present and apple.macos_version:
        stacks["macos"] = apple.macos_version
    if "google" in named and facts.tpu.present and facts.tpu.libtpu_version:
        stacks["libtpu"] = facts.tpu.libtpu_version
    return stacks


def machine_summary(facts: Facts, collect_s: float | None) -> MachineSummary:
    """The machine in a few values, for the report's header."""
    from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK

    os_release = facts.os_release
    driver = facts.driver
    container = facts.container
    census = facts.gpu_census
    # The driver's inventory first; without one, the GPUs whatever else shows them (the topology table, the
    # PCI bus, a framework): a topology paste of 8 GPUs is a machine with 8 GPUs, not one without any.
    listed = facts.gpus or list(census.sketch)
    gpus: list[GpuRecord] = [gpu_record(g, driver.cuda_max) for g in listed]
    return {
        "os": os_release.pretty_name if os_release else None,
        "kernel": facts.uname,
        "gpus": gpus,
        "gpus_known": bool(gpus) or census.known,
        "gpus_on_bus": len([g for g in facts.pci_gpus if g.address != UNPLACED_LSPCI_BLOCK])
        if facts.pci_scan_available
        else None,
        "accelerators": _other_accelerators(facts),
        "accelerator_stacks": _accelerator_stacks(facts),
        "driver_version": _driver_words(driver),
        "cuda_driver_max": driver.cuda_max if driver.kernel_module_loaded or container.wsl else None,
        "container": container.runtime,
        "wsl": container.wsl_version if container.wsl else None,
        "collect_duration_s": round(collect_s, 3) if collect_s is not None else None,
        "python": _python_summary(facts),
        "platform": _platform_summary(facts),
    }


def _platform_summary(facts: Facts) -> PlatformSummary | None:
    """Where the machine runs, for the header's machine line: "AWS g5.xlarge: 1× NVIDIA A10G 24 GB expected"."""
    from gpudoctor.kb.cloud_instances import instance_type

    platform = facts.platform
    cloud, notebook, image = platform.cloud, platform.notebook, platform.image
    if cloud is None and notebook is None and image is None:
        return None
    row = instance_type(cloud.provider, cloud.instance_type) if cloud is not None and cloud.instance_type else None
    return {
        "provider": cloud.provider if cloud else None,
        "provider_name": cloud.provider_name if cloud else None,
        "instance_type": cloud.instance_type if cloud else None,
        "expected": row.expected if row is not None and row.gpu_count > 0 else None,
        "notebook": notebook.name if notebook else None,
        "image": image.name if image else None,
    }


def _topology_section(facts: Facts) -> Any | None:
    from gpudoctor.render.topology_json import topology_json

    topology = facts.machine_topology
    return topology_json(topology) if topology.gpus else None


# Area -> (section name, its builder): a report whose checks cover the area carries the section
# (JSON-ready; None when there is nothing to show).  A builder that raises leaves the section out:
# the area's checks have already recorded what broke.
SECTION_BUILDERS: dict[str, tuple[str, Callable[[Facts], Any | None]]] = {
    "topology": ("topology", _topology_section),
}


def _sections(facts: Facts, areas: set[str]) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    for area, (name, build) in SECTION_BUILDERS.items():
        if area not in areas:
            continue
        try:
            value = build(facts)
        except Exception:  # noqa: BLE001 - the area's checks already recorded what broke
            continue
        if value is not None:
            sections[name] = value
    return sections


def build_report(
    evidence: Evidence,
    options: CheckOptions,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    collect_s: float | None = None,
    registry: Registry | None = None,
) -> tuple[Report, list[str]]:
    """Run every selected check over the evidence; returns the report and the registry's load errors
    (also in ``report.internal_errors``)."""
    from gpudoctor.api import CheckContext
    from gpudoctor.facts.facts import Facts
    from gpudoctor.registry import load_registry
    from gpudoctor.runner import run_checks, selected_checks

    registry = registry or load_registry()
    registry.require_checks()
    for patterns, flag in ((select, "--select"), (ignore, "--ignore")):
        for pattern in patterns or []:
            if not any(c.code.startswith(pattern) for c in registry.checks):
                raise UsageError(f"{flag} {pattern} matches no check (see 'gpudoctor list-checks')")
    facts = Facts(evidence)
    results = run_checks(selected_checks(registry, select, ignore), facts, CheckContext(options))
    source = _source(evidence.origin)
    try:
        machine = machine_summary(facts, collect_s)
    except Exception as exc:  # noqa: BLE001 - the checks already recorded whatever broke; keep the report
        machine = {"error": f"{type(exc).__name__}: {exc}"}
    seen = _facts_seen(facts)
    if seen is not None:
        machine["facts_seen"] = seen
    report = Report(results=results, source=source, machine=machine, internal_errors=list(registry.load_errors))
    report.sections.update(_sections(facts, {r.area for r in results}))
    return report, registry.load_errors


def _facts_seen(facts: Facts) -> FactsSeen | None:
    """What the evidence states, or None when reading it failed (the checks record what broke)."""

    try:
        stated = facts.stated
    except Exception:  # noqa: BLE001 - a summary must never cost the report
        return None
    return {
        "gpu_names": list(stated.gpu_names),
        "driver_versions": list(stated.driver_versions),
        "cuda_driver_versions": list(stated.cuda_driver_versions),
        "cuda_runtime_versions": list(stated.cuda_runtime_versions),
        "torch_versions": list(stated.torch_versions),
        "torch_cuda_versions": list(stated.torch_cuda_versions),
        "tensorflow_versions": list(stated.tensorflow_versions),
        "cudnn_versions": list(stated.cudnn_versions),
    }


def mark_interrupted(report: Report, signum: signal.Signals) -> int:
    """Say in the report (and on stderr) that the run was cut short by a signal; the exit code of the signal."""
    note = f"the run was interrupted by {signum.name}: the report holds only what finished"
    report.sections["collection"] = {"interrupted": True, "signal": signum.name, "note": note}
    sys.stderr.write(f"gpudoctor: {note}\n")
    return 128 + int(signum)


def _source(origin: dict[str, Any]) -> ReportSource:
    """The evidence's origin as the report names it (live unless a snapshot said otherwise)."""
    kind = origin.get("kind")
    if not isinstance(kind, str):
        return {"kind": "live"}
    source: ReportSource = {"kind": kind}
    path = origin.get("path")
    if isinstance(path, str):
        source["path"] = path
    return source


def write_junit(report: Report, path: str, force: bool, warnings_as_failures: bool) -> None:
    """The JUnit file; any existing path (an earlier report too) is replaced only with --force.

    Whether an existing file is an earlier report of ours can't be told from its content (anyone can
    write that text), so none is replaced silently.
    """
    from gpudoctor.render.junit import render_junit

    write_new_file(path, render_junit(report, warnings_as_failures=warnings_as_failures), force)


def emit_report(report: Report, args: argparse.Namespace, text_before: str = "", exit_code: int | None = None) -> int:
    """Load errors, the JUnit file, the report on stdout in the asked format; returns the exit code (the report's
    own unless ``exit_code`` says otherwise: a run stopped by its budget is not judged clean)."""
    report_load_errors(report.internal_errors)
    fail_on: str = args.fail_on
    if exit_code is None:
        exit_code = report.exit_code(fail_on)
    junit_xml: str | None = getattr(args, "junit_xml", None)
    if junit_xml:
        write_junit(report, junit_xml, args.force, fail_on == "warning")
    output_format: str = args.format
    if output_format == "json":
        from gpudoctor.render.json_report import render_json

        sys.stdout.write(render_json(report, exit_code) + "\n")
    elif output_format == "markdown":
        from gpudoctor.render.markdown import render_markdown

        sys.stdout.write(render_markdown(report, redact=not args.no_redact))
    else:
        from gpudoctor.render.terminal import render_terminal

        sys.stdout.write(text_before + render_terminal(report, verbose=args.verbose, color=use_color(sys.stdout)))
    sys.stdout.flush()
    return exit_code
