"""Command-line interface: argument parsing only; each command's work lives in ``gpudoctor.commands``.

Kept light on purpose: ``gpudoctor --version`` and ``--help`` import nothing but argparse and the
standard-library value types and option groups of ``gpudoctor.cli_options``, so they answer as fast as
Python starts.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gpudoctor import __version__
from gpudoctor.cli_fleet import add_fleet_commands
from gpudoctor.cli_options import (
    add_cloud_metadata,
    add_generator_target,
    add_node_verdict_options,
    add_output,
    add_probe_options,
    add_smoke_options,
    add_timeout,
    add_vendor_options,
    codes,
    compute_capability,
    cuda_version,
    driver_version,
    framework_spec_or_none,
    framework_specs,
    gibibytes,
    input_path,
    positive_int,
    python_version,
)

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but bad usage is one clear line on stderr and exit code 2: or, when the command line asks for
    ``--exit-codes nagios``, 3 (Nagios's UNKNOWN: its 2 is CRITICAL, a page about a machine nobody checked)."""

    _argv: list[str] | None = None  # what this parser was given to parse, for error()

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._argv, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {' '.join(message.split())} (see '{self.prog} --help')\n")
        convention = _exit_convention(sys.argv[1:] if self._argv is None else self._argv)
        if convention is None:
            sys.exit(EXIT_USAGE)
        from gpudoctor.verdict import USAGE_EXIT  # only on this path: --help stays light

        sys.exit(USAGE_EXIT.get(convention, EXIT_USAGE))


def _exit_convention(argv: Sequence[str]) -> str | None:
    """The ``--exit-codes`` value a command line asks for (the last one, as argparse takes it), or None.

    Read by hand, since the parse itself failed: ``--exit-codes X``, ``--exit-codes=X`` and the abbreviations
    argparse accepts (``--exit X``); nothing after ``--``."""
    asked = None
    for index, token in enumerate(argv):
        if token == "--":
            break
        name, equals, value = token.partition("=")
        if len(name) >= len("--exit") and "--exit-codes".startswith(name):
            if equals:
                asked = value
            elif index + 1 < len(argv):
                asked = argv[index + 1]
    return asked


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpudoctor",
        description="Check that a GPU machine's NVIDIA stack is wired up right, and say exactly what to fix.",
        epilog="Exit codes: 0 no problems (warnings allowed), 1 problems found, 2 bad usage or unreadable input, "
        "3 gpudoctor itself failed. Run 'gpudoctor COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"gpudoctor {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    check = commands.add_parser(
        "check",
        help="inspect this machine (or a snapshot) and report",
        description="Inspect the NVIDIA stack of this machine, or of a snapshot with --from, and report "
        "each check with a fix for whatever is wrong.",
    )
    check.add_argument(
        "--from",
        dest="from_path",
        type=input_path,
        metavar="PATH",
        help="diagnose a snapshot (directory, .tar.gz, or a single evidence file) instead of this machine",
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "markdown", "line"),
        default="text",
        help="output format on stdout (default: text; markdown is redacted for pasting into an issue; line: the "
        "verdict in one line, 'gpudoctor: DRV002 ...', for a scheduler hook)",
    )
    check.add_argument("-v", "--verbose", action="store_true", help="show details, evidence, timings and tracebacks")
    check.add_argument("--junit-xml", metavar="PATH", help="also write a JUnit XML report to PATH")
    check.add_argument(
        "--force", action="store_true", help="replace an existing --junit-xml file (a link itself, never its target)"
    )
    check.add_argument("--no-redact", action="store_true", help="keep GPU UUIDs and serials in Markdown output")
    check.add_argument(
        "--fail-on",
        choices=("problem", "warning"),
        default="problem",
        help="exit 1 on problems only (default) or on warnings too",
    )
    check.add_argument(
        "--select",
        type=codes,
        action="extend",
        metavar="CODES",
        help="run only these checks (comma-separated codes or prefixes, e.g. DRV,CUDA002)",
    )
    check.add_argument(
        "--ignore", type=codes, action="extend", metavar="CODES", help="skip these checks (codes or prefixes)"
    )
    gates = check.add_argument_group("preflight gates (each unmet gate is a problem)")
    gates.add_argument("--require-gpu", action="store_true", help="at least one usable NVIDIA GPU")
    gates.add_argument("--min-gpus", type=positive_int, metavar="N", help="at least N usable GPUs")
    gates.add_argument(
        "--min-compute-capability",
        type=compute_capability,
        metavar="X.Y",
        help="every GPU at least this compute capability",
    )
    gates.add_argument(
        "--min-gpu-memory",
        type=gibibytes,
        metavar="GB",
        help="every GPU at least GB of memory as sold (an H100 80GB meets 80 though it reports 79.6 GiB)",
    )
    gates.add_argument("--min-driver", type=driver_version, metavar="VERSION", help="driver at least VERSION")
    gates.add_argument("--cuda", type=cuda_version, metavar="X.Y", help="the driver must be able to run CUDA X.Y")
    add_timeout(check)
    add_cloud_metadata(check)
    add_probe_options(check)
    add_smoke_options(check, flag=True)
    add_node_verdict_options(check)

    collect = commands.add_parser(
        "collect",
        help="write a snapshot of this machine's evidence",
        description="Write the raw evidence (one file per source, plus manifest.json) so someone else can run "
        "'gpudoctor check --from' on it. GPU UUIDs and serials are redacted unless --no-redact.",
    )
    collect.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="directory to create, or a file ending in .tar.gz (default: gpudoctor-snapshot-<date>.tar.gz here)",
    )
    collect.add_argument("--no-redact", action="store_true", help="keep GPU UUIDs and serial numbers")
    collect.add_argument("--force", action="store_true", help="replace PATH if it exists")
    add_timeout(collect)
    add_cloud_metadata(collect)
    add_probe_options(collect)
    add_smoke_options(collect, flag=True)

    smoke = commands.add_parser(
        "smoke",
        help="prove real acceleration: matmul, a CNN training step, bandwidth, all-reduce",
        description="Run real workloads in the target Python on every accelerator and on the CPU, and judge them "
        "against the CPU and against the hardware's own limits (spec TFLOP/s, the PCIe link). Memory is "
        "sized from each GPU's free memory; Ctrl-C stops cleanly and still reports what finished.",
    )
    smoke.add_argument(
        "--python",
        metavar="PATH",
        help="the Python to run in: an interpreter, or a venv / conda prefix (default: the active "
        "virtual or conda environment, else gpudoctor's own Python)",
    )
    smoke.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output on stdout (default: text; json is quiet on stderr)",
    )
    smoke.add_argument("-v", "--verbose", action="store_true", help="show details, data and timings")
    smoke.add_argument("--junit-xml", metavar="PATH", help="also write a JUnit XML report to PATH")
    smoke.add_argument(
        "--force", action="store_true", help="replace an existing --junit-xml file (a link itself, never its target)"
    )
    smoke.add_argument(
        "--fail-on",
        choices=("problem", "warning"),
        default="problem",
        help="exit 1 on problems only (default) or on warnings too",
    )
    add_timeout(smoke)
    add_cloud_metadata(smoke)
    add_smoke_options(smoke, flag=False)

    topo = commands.add_parser(
        "topo",
        help="show how the GPUs, NICs and CPUs are wired (PCIe, NVLink, NUMA) and judge it",
        description="Show the machine's GPU topology: the GPU/NIC matrix (nvidia-smi topo -m words), each GPU's PCIe "
        "link now and at best, NVLinks up and down, peer-to-peer access, NUMA nodes and this process's "
        "CPUs, NVSwitches and the fabric manager; then the TOPO checks. --svg draws it.",
    )
    topo.add_argument(
        "--from",
        dest="from_path",
        type=input_path,
        metavar="PATH",
        help="read a snapshot (directory or .tar.gz) or a saved `nvidia-smi topo -m` / `-q -x` output "
        "instead of this machine",
    )
    topo.add_argument("--format", choices=("text", "json"), default="text", help="output on stdout (default: text)")
    topo.add_argument("--svg", metavar="FILE", help="also draw the topology as an SVG picture into FILE ('-': stdout)")
    topo.add_argument("--force", action="store_true", help="replace an existing --svg file")
    topo.add_argument("-v", "--verbose", action="store_true", help="show details and evidence of the checks")
    topo.add_argument(
        "--fail-on",
        choices=("problem", "warning"),
        default="problem",
        help="exit 1 on problems only (default) or on warnings too",
    )
    add_timeout(topo)

    dockerfile = commands.add_parser(
        "dockerfile",
        help="write a Dockerfile whose CUDA base and framework build fit this machine's driver and GPUs",
        description="Write a Dockerfile: an nvidia/cuda base image the driver can run (a tag NVIDIA publishes), the "
        "framework build matching it installed pinned from the right index, a venv, a non-root user, "
        "BuildKit caches, and gpudoctor itself as a preflight. Its header says what was chosen and why. "
        "Impossible combinations are refused with the nearest one that works.",
    )
    add_generator_target(dockerfile)
    add_vendor_options(dockerfile, "the Dockerfile")
    dockerfile.add_argument(
        "--framework",
        type=framework_specs,
        default=[("torch", None)],
        metavar="NAME[==VERSION][,...]",
        help="torch (default), tensorflow or jax, optionally pinned: torch==2.7; several, comma-separated, for one "
        "image with all of them (torch,tensorflow,jax): one venv when their CUDA libraries agree, else one each",
    )
    dockerfile.add_argument(
        "--jupyter",
        action="store_true",
        help="add JupyterLab as the image's service (non-root, port 8888, a kernel per framework venv; the header "
        "says how to pass the token)",
    )
    dockerfile.add_argument(
        "--python", type=python_version, metavar="X.Y", help="the Python in the image (default: the base OS's own)"
    )
    dockerfile.add_argument(
        "--flavor",
        choices=("runtime", "devel"),
        default="runtime",
        help="runtime (default) or devel (nvcc and headers, to build CUDA extensions)",
    )
    dockerfile.add_argument(
        "--os",
        metavar="TOKEN",
        help="the base OS as nvidia/cuda tags name it: ubuntu24.04 (default when it fits), ubuntu22.04, ...",
    )
    dockerfile.add_argument("--cpu", action="store_true", help="a CPU-only image (no CUDA base, CPU wheels)")
    dockerfile.add_argument(
        "--requirements",
        metavar="FILE",
        help="also COPY and pip install this requirements file (a path in the build context)",
    )
    dockerfile.add_argument(
        "--preflight",
        choices=("auto", "pypi", "wheel", "none"),
        default="auto",
        help="where the image's gpudoctor (its default command, the preflight check) comes from: pypi "
        "(gpudoctor==VERSION from PyPI), wheel (a wheel of this gpudoctor written next to -o FILE and COPY'd in), "
        "none (no preflight; a comment says how to add it); auto (default): pypi when this gpudoctor was installed "
        "from a package index, else wheel with -o FILE, else none",
    )
    add_output(dockerfile, "the Dockerfile")

    script = commands.add_parser(
        "install-script",
        help="write a shell script that installs the driver, CUDA, cuDNN, the container toolkit "
        "and a framework venv for this distro",
        description="Write a bash install script for this machine's distro (or --distro): the NVIDIA driver (never "
        "inside WSL), optionally the CUDA toolkit, cuDNN and the NVIDIA Container Toolkit, and a Python "
        "venv with the framework from the right index. Every step is skipped when already done; the "
        "script has --dry-run, --yes and an OS guard, verifies repository keys and never pipes a download "
        "into a shell.",
    )
    add_generator_target(script)
    add_vendor_options(script, "the script")
    script.add_argument(
        "--distro",
        metavar="NAME",
        help="ubuntu20.04, ubuntu22.04, ubuntu24.04, debian12, rhel8, rhel9, rocky8, rocky9, alma8, "
        "alma9, amzn2023, or wsl-<one of those> (default: this machine's)",
    )
    script.add_argument("--no-driver", dest="driver", action="store_false", help="leave the driver step out")
    script.add_argument("--cuda-toolkit", type=cuda_version, metavar="X.Y", help="also install this CUDA toolkit")
    script.add_argument("--cudnn", action="store_true", help="also install cuDNN")
    script.add_argument("--container-toolkit", action="store_true", help="also install the NVIDIA Container Toolkit")
    script.add_argument(
        "--framework",
        type=framework_spec_or_none,
        default=("torch", None),
        metavar="NAME[==VERSION]|none",
        help="the framework for the venv (default torch; none: no venv)",
    )
    script.add_argument("--python", type=python_version, metavar="X.Y", help="the Python of the venv")
    script.add_argument(
        "--venv", default="~/.venvs/gpu", metavar="PATH", help="where the venv goes (default: ~/.venvs/gpu)"
    )
    add_output(script, "the script")

    list_checks = commands.add_parser(
        "list-checks",
        help="list every check with its code",
        description="List every check (built-in and plugins) with code, area and title.",
    )
    list_checks.add_argument("--format", choices=("text", "json"), default="text")

    explain = commands.add_parser(
        "explain",
        help="explain a check: what, why, how to fix",
        description="Print a check's documentation: what it checks, why it matters, how to fix it.",
    )
    explain.add_argument("code", help="check code, e.g. DRV002")

    kb = commands.add_parser(
        "kb",
        help="show what gpudoctor knows (driver/CUDA, PyTorch, TensorFlow, cuDNN, GPUs) and how current",
        description="Show the knowledge base: each data file, how current it is and its sources; with a TOPIC, "
        "its table.",
    )
    kb.add_argument(
        "topic",
        nargs="?",
        metavar="TOPIC",
        help="driver, torch, tensorflow, cudnn, gpus, jax, cupy, specs, rocm, pcie, xid, health, docker, instances, ngc, "
        "notebooks, signatures or causes (default: an overview)",
    )
    kb.add_argument(
        "item",
        nargs="?",
        metavar="ITEM",
        help="one entry of the topic, e.g. `gpudoctor kb xid 79`, `gpudoctor kb causes driver-too-old`, "
        "`gpudoctor kb instances p4d.24xlarge`",
    )
    kb.add_argument("--format", choices=("text", "json"), default="text")

    commands.add_parser(
        "schema",
        help="print the JSON Schema of 'check --format json'",
        description="Print the JSON Schema that 'gpudoctor check --format json' output follows.",
    )
    add_fleet_commands(commands)
    return parser


def _tolerate_narrow_encodings() -> None:
    """A terminal or pipe that can't take UTF-8 (LANG=C without UTF-8 mode, PYTHONIOENCODING=ascii) gets escapes
    for what it can't show (a GPU name in Chinese, an em dash) instead of a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (getattr(stream, "encoding", "") or "").lower().replace("_", "-") != "utf-8":
            reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    _tolerate_narrow_encodings()
    given = sys.argv[1:] if argv is None else argv
    if given == ["--version"]:  # what scripts and probes ask most: answered before the ~20 subparsers are built
        sys.stdout.write(f"gpudoctor {__version__}\n")
        return 0
    args = build_parser().parse_args(given)
    if args.command is None:
        build_parser().print_help()
        return EXIT_USAGE
    from gpudoctor.commands import run

    command: str = args.command
    try:
        return run(command, args)
    except KeyboardInterrupt:
        sys.stderr.write("gpudoctor: interrupted\n")
        return 130
