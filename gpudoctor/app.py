"""What each command does: wire evidence -> facts -> checks -> results -> renderers.

Errors a person can fix (an unreadable snapshot, a path we must not overwrite,
an unknown check code) become one line on stderr and exit code 2; anything
else that breaks is gpudoctor's own fault: exit code 3.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from typing import Any, Callable

from gpudoctor import __version__
from gpudoctor.errors import UsageError
from gpudoctor.results import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, Report


def _fail(message: str) -> int:
    # One line, whatever a library's exception text looked like.
    sys.stderr.write(f"gpudoctor: error: {' '.join(message.split())}\n")
    return EXIT_USAGE


def _guarded(command: Callable[[Any], int]) -> Callable[[Any], int]:
    def run(args: Any) -> int:
        try:
            return command(args)
        except UsageError as exc:
            return _fail(str(exc))
        except BrokenPipeError:
            return EXIT_OK
        except Exception:  # noqa: BLE001 - our own bug: say so plainly, keep the traceback
            sys.stderr.write("gpudoctor: internal error (please report it):\n" + traceback.format_exc())
            return EXIT_INTERNAL

    return run


def _driver_words(driver) -> str | None:
    if driver.kernel_module_loaded:
        return driver.kernel_version
    if driver.userspace_version:
        return f"not loaded (user space {driver.userspace_version} installed)"
    return None


def _machine_summary(facts, collect_s: float | None) -> dict[str, Any]:
    from gpudoctor_checks.gpus import gpu_record

    os_release = facts.os_release
    driver = facts.driver
    return {
        "os": os_release.pretty_name if os_release else None,
        "kernel": facts.uname,
        "gpus": [gpu_record(g, driver) for g in facts.gpus],
        "gpus_on_bus": len(facts.pci_gpus),
        "driver_version": _driver_words(driver),
        "cuda_driver_max": driver.cuda_max if driver.kernel_module_loaded or facts.container.wsl else None,
        "container": facts.container.runtime,
        "wsl": facts.container.wsl_version if facts.container.wsl else None,
        "collect_duration_s": round(collect_s, 3) if collect_s is not None else None,
        "python": _python_summary(facts),
    }


def _python_summary(facts) -> dict[str, Any] | None:
    """The probed interpreter, so every report says whose frameworks it judged."""
    record = facts.target_python
    if not record:
        return None
    return {"executable": record.get("executable"), "version": record.get("version"), "how": record.get("how")}


def _options(args: Any) -> dict[str, Any]:
    return {
        "require_gpu": args.require_gpu,
        "min_gpus": args.min_gpus,
        "min_compute_capability": args.min_compute_capability,
        "min_gpu_memory": args.min_gpu_memory,
        "min_driver": args.min_driver,
        "cuda": args.cuda,
    }


def build_report(
    evidence, options: dict[str, Any], select=None, ignore=None, collect_s: float | None = None, registry=None
) -> tuple[Report, list[str]]:
    """Run every selected check over the evidence; returns the report and plugin load errors."""
    from gpudoctor.api import CheckContext
    from gpudoctor.facts.facts import Facts
    from gpudoctor.registry import load_registry
    from gpudoctor.runner import run_checks, selected_checks

    registry = registry or load_registry()
    for patterns, flag in ((select, "--select"), (ignore, "--ignore")):
        for pattern in patterns or []:
            if not any(c.code.startswith(pattern) for c in registry.checks):
                raise UsageError(f"{flag} {pattern} matches no check (see 'gpudoctor list-checks')")
    facts = Facts(evidence)
    results = run_checks(selected_checks(registry, select, ignore), facts, CheckContext(options))
    source = dict(evidence.origin) or {"kind": "live"}
    try:
        machine = _machine_summary(facts, collect_s)
    except Exception as exc:  # noqa: BLE001 - the checks already recorded whatever broke; keep the report
        machine = {"error": f"{type(exc).__name__}: {exc}"}
    report = Report(results=results, source=source, machine=machine)
    if any(result.code.startswith("TOPO") for result in results):
        try:
            topology = facts.machine_topology
            if topology.gpus:
                from gpudoctor.render.topology_json import topology_json

                report.sections["topology"] = topology_json(topology)
        except Exception:  # noqa: BLE001 - the TOPO checks already recorded what broke
            pass
    return report, registry.load_errors


def _write_junit(report: Report, path: str, force: bool, warnings_as_failures: bool) -> None:
    from gpudoctor.render.junit import render_junit

    if os.path.exists(path) and not force:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                ours = 'testsuites name="gpudoctor"' in handle.read(4096)
        except OSError:
            ours = False
        if not ours:
            raise UsageError(f"{path} exists and is not a gpudoctor JUnit report; pass --force to replace it")
    text = render_junit(report, warnings_as_failures=warnings_as_failures)
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _use_color(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def _run_smoke(args: Any, show_progress: bool):
    """Run the smoke workloads in the target Python, with a progress bar on a terminal; an evidence item."""
    from gpudoctor.evidence.smoke_runner import run_smoke
    from gpudoctor.evidence.target_python import resolve_target_python
    from gpudoctor.render.progress import smoke_progress

    target = resolve_target_python(getattr(args, "python", None), os.environ)
    with smoke_progress(show_progress) as on_progress:
        item = run_smoke(
            target.executable,
            framework=args.smoke_framework,
            mode=args.smoke_mode,
            budget=args.budget,
            on_progress=on_progress,
        )
    if item.error and "interrupt" in item.error:
        sys.stderr.write("gpudoctor: smoke interrupted; reporting what finished\n")
    return item


def _import_what_the_report_needs(output_format: str, extra: tuple[str, ...] = ()) -> None:
    """Import the parsers, runner and renderer while collection runs: after it, only work is left."""
    import importlib

    renderer = {"json": "json_report", "markdown": "markdown"}.get(output_format, "terminal")
    for module in (
        "gpudoctor.facts.facts",
        "gpudoctor.facts.framework_probe",
        "gpudoctor.runner",
        f"gpudoctor.render.{renderer}",
        *extra,
    ):
        importlib.import_module(module)


def _collect_while_importing(
    collect_call: Callable[[], Any], output_format: str, extra: tuple[str, ...] = ()
) -> tuple[Any, Any]:
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


def _target_python(args: Any):
    """The Python to probe frameworks in; None when no framework is to be probed."""
    if not args.frameworks:
        return None
    from gpudoctor.evidence.target_python import resolve_target_python

    return resolve_target_python(args.python, os.environ)


@_guarded
def cmd_check(args: Any) -> int:
    collect_s = None
    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot
        from gpudoctor.registry import load_registry

        evidence = read_snapshot(args.from_path)
        registry = load_registry()
    else:
        from gpudoctor.evidence.collect import collect

        target = _target_python(args)
        started = time.perf_counter()
        evidence, registry = _collect_while_importing(
            lambda: collect(
                timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
            ),
            args.format,
        )
        collect_s = time.perf_counter() - started
        if args.smoke:
            evidence.add(_run_smoke(args, show_progress=args.format == "text"))
    report, load_errors = build_report(evidence, _options(args), args.select, args.ignore, collect_s, registry)
    return _emit_report(report, load_errors, args)


def _emit_report(report: Report, load_errors: list[str], args: Any, text_before: str = "") -> int:
    """Warnings, the JUnit file, the report on stdout in the asked format; returns the exit code."""
    for error in load_errors:
        sys.stderr.write(f"gpudoctor: warning: {error}\n")
    exit_code = report.exit_code(args.fail_on)
    if args.junit_xml:
        _write_junit(report, args.junit_xml, args.force, args.fail_on == "warning")
    if args.format == "json":
        from gpudoctor.render.json_report import render_json

        sys.stdout.write(render_json(report, exit_code) + "\n")
    elif args.format == "markdown":
        from gpudoctor.render.markdown import render_markdown

        sys.stdout.write(render_markdown(report, redact=not args.no_redact))
    else:
        from gpudoctor.render.terminal import render_terminal

        sys.stdout.write(text_before + render_terminal(report, verbose=args.verbose, color=_use_color(sys.stdout)))
    sys.stdout.flush()
    return exit_code


def _default_snapshot_name() -> str:
    return time.strftime("gpudoctor-snapshot-%Y%m%d-%H%M%S.tar.gz")


@_guarded
def cmd_smoke(args: Any) -> int:
    """Run the workloads, collect the machine's evidence (GPU names, PCIe links), judge with the SMOKE checks."""
    from gpudoctor.evidence.collect import collect

    evidence = collect(timeout=args.timeout)
    evidence.add(_run_smoke(args, show_progress=args.format == "text"))
    report, load_errors = build_report(evidence, {}, ["SMOKE"], None)
    table = ""
    if args.format == "text":
        from gpudoctor.facts.facts import Facts
        from gpudoctor.render.smoke_table import render_smoke_table

        table = render_smoke_table(Facts(evidence).smoke)
    return _emit_report(report, load_errors, args, text_before=table)


def _refuse_existing(path: str, force: bool) -> None:
    """Nothing a person has is overwritten without asking: an existing path needs --force."""
    if os.path.lexists(path) and not force:
        raise UsageError(f"{path} already exists; choose another path or pass --force to replace it")


def _write_new_file(path: str, text: str, force: bool) -> None:
    _refuse_existing(path, force)
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


@_guarded
def cmd_topo(args: Any) -> int:
    """The wiring of the machine: the matrix and per-GPU links, the TOPO checks, and on request an SVG."""
    from gpudoctor.facts.facts import Facts
    from gpudoctor.render.topology_json import topology_json

    if args.svg and args.svg != "-":
        _refuse_existing(args.svg, args.force)  # before collecting, not after
    registry = None
    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot

        evidence = read_snapshot(args.from_path)
    else:
        from gpudoctor.evidence.collect import collect
        from gpudoctor.evidence.sources import TOPOLOGY_SOURCES

        evidence, registry = _collect_while_importing(
            lambda: collect(timeout=args.timeout, sources=TOPOLOGY_SOURCES),
            args.format,
            (
                "gpudoctor.facts.topology",
                "gpudoctor.facts.nvml_topology",
                "gpudoctor.render.topology_json",
                "gpudoctor.render.topology_text",
            ),
        )
    report, load_errors = build_report(evidence, {}, ["TOPO"], None, registry=registry)
    topo = Facts(evidence).machine_topology
    if args.svg:
        from gpudoctor.render.topology_svg import render_topology_svg

        svg = render_topology_svg(topo)
        if args.svg == "-":
            sys.stdout.write(svg)
            return report.exit_code(args.fail_on)
        _write_new_file(args.svg, svg, args.force)
        sys.stderr.write(f"gpudoctor: wrote {args.svg} ({len(topo.gpus)} GPU(s))\n")
    args.junit_xml = None
    args.no_redact = False
    if args.format == "json":
        report.sections["topology"] = topology_json(topo)  # also when empty: the key is always there
        return _emit_report(report, load_errors, args)
    from gpudoctor.render.topology_text import render_topology_text

    color = _use_color(sys.stdout)
    width = shutil.get_terminal_size((100, 24)).columns
    return _emit_report(
        report, load_errors, args, text_before=render_topology_text(topo, color=color, width=width) + "\n"
    )


def _generator_target(args: Any):
    """The MachineTarget a generator fits: a snapshot's, or this machine's (its driver, GPUs, distro)."""
    from gpudoctor.facts.facts import Facts
    from gpudoctor.generate.target import GENERATOR_SOURCES, target_from_facts

    if args.from_path:
        from gpudoctor.evidence.snapshot import read_snapshot

        return target_from_facts(
            Facts(read_snapshot(args.from_path)), args.for_driver, source=f"snapshot {args.from_path}"
        )
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.sources import SOURCES

    evidence = collect(timeout=args.timeout, sources=[s for s in SOURCES if s.name in GENERATOR_SOURCES])
    return target_from_facts(Facts(evidence), args.for_driver)


def _emit_generated(generated, args: Any, executable: bool = False) -> int:
    """The generated text on stdout or into -o FILE (never over an existing file without --force)."""
    if args.verbose:
        for choice in generated.choices:
            sys.stderr.write(f"gpudoctor: {choice.what}: {choice.chosen} — {choice.why}\n")
    if not args.output or args.output == "-":
        sys.stdout.write(generated.text)
        return EXIT_OK
    _write_new_file(args.output, generated.text, args.force)
    if executable:
        os.chmod(args.output, 0o755)
    sys.stderr.write(f"gpudoctor: wrote {args.output}\n")
    return EXIT_OK


@_guarded
def cmd_dockerfile(args: Any) -> int:
    from gpudoctor.generate.dockerfile import generate_dockerfile
    from gpudoctor.generate.model import DockerfileRequest

    if args.output and args.output != "-":
        _refuse_existing(args.output, args.force)  # before collecting, not after
    framework, version = args.framework
    request = DockerfileRequest(
        framework=framework,
        framework_version=version,
        python=args.python,
        flavor=args.flavor,
        os=args.os,
        cpu=args.cpu,
        requirements=args.requirements,
        target=_generator_target(args),
    )
    return _emit_generated(generate_dockerfile(request), args)


@_guarded
def cmd_install_script(args: Any) -> int:
    from gpudoctor.generate.install_script import generate_install_script
    from gpudoctor.generate.model import InstallScriptRequest

    if args.output and args.output != "-":
        _refuse_existing(args.output, args.force)
    framework, version = args.framework if args.framework else (None, None)
    request = InstallScriptRequest(
        distro=args.distro,
        driver=args.driver,
        cuda_toolkit=args.cuda_toolkit,
        cudnn=args.cudnn,
        container_toolkit=args.container_toolkit,
        framework=framework,
        framework_version=version,
        python=args.python,
        venv=args.venv,
        target=_generator_target(args),
    )
    return _emit_generated(generate_install_script(request), args, executable=True)


@_guarded
def cmd_collect(args: Any) -> int:
    from gpudoctor.evidence.collect import collect
    from gpudoctor.evidence.snapshot import write_snapshot

    path = args.output or _default_snapshot_name()
    _refuse_existing(path, args.force)
    target = _target_python(args)
    started = time.perf_counter()
    evidence = collect(
        timeout=args.timeout, target=target, frameworks=args.frameworks, probe_timeout=args.probe_timeout
    )
    if args.smoke:
        evidence.add(_run_smoke(args, show_progress=True))
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


@_guarded
def cmd_list_checks(args: Any) -> int:
    from gpudoctor.registry import load_registry

    registry = load_registry()
    if args.format == "json":
        rows = [{"code": c.code, "area": c.area, "title": c.title, "module": c.module} for c in registry.checks]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        width = max((len(c.code) for c in registry.checks), default=6)
        for spec in registry.checks:
            sys.stdout.write(f"{spec.code:<{width}}  {spec.area:<12} {spec.title}\n")
    for error in registry.load_errors:
        sys.stderr.write(f"gpudoctor: warning: {error}\n")
    return EXIT_OK


@_guarded
def cmd_explain(args: Any) -> int:
    from gpudoctor.registry import load_registry

    spec = load_registry().by_code(args.code)
    if spec is None:
        raise UsageError(f"unknown check code {args.code!r} (see 'gpudoctor list-checks')")
    sys.stdout.write(f"{spec.code}: {spec.title}  [area: {spec.area}]\n\n{spec.doc}\n")
    return EXIT_OK


@_guarded
def cmd_kb(args: Any) -> int:
    from gpudoctor.kb import kb_info
    from gpudoctor.kb.describe import render_kb_text

    if args.format == "json":
        if args.topic:
            raise UsageError("--format json prints the overview; leave out TOPIC")
        sys.stdout.write(json.dumps(kb_info(), indent=2) + "\n")
    else:
        sys.stdout.write(render_kb_text(topic=args.topic, item=args.item))
    return EXIT_OK


@_guarded
def cmd_schema(args: Any) -> int:
    from gpudoctor.render.json_report import load_schema

    sys.stdout.write(json.dumps(load_schema(), indent=2) + "\n")
    return EXIT_OK


COMMANDS: dict[str, Callable[[Any], int]] = {
    "check": cmd_check,
    "collect": cmd_collect,
    "list-checks": cmd_list_checks,
    "explain": cmd_explain,
    "schema": cmd_schema,
    "kb": cmd_kb,
    "smoke": cmd_smoke,
    "topo": cmd_topo,
    "dockerfile": cmd_dockerfile,
    "install-script": cmd_install_script,
}

__all__ = ["COMMANDS", "UsageError", "__version__", "build_report"]
