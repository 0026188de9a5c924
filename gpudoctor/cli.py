"""Command-line interface: argument parsing only; each command's work lives in ``gpudoctor.commands``.

Kept light on purpose: ``gpudoctor --version`` and ``--help`` import nothing but
argparse, so they answer as fast as Python starts.
"""

from __future__ import annotations

import argparse
import re
import sys

from gpudoctor import __version__

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but bad usage is one clear line on stderr and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def _version_text(value: str, what: str, pattern: str) -> str:
    if not re.fullmatch(pattern, value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a {what}")
    return value.strip()


def _compute_capability(value: str) -> str:
    return _version_text(value, "compute capability like 8.0", r"\d{1,2}\.\d")


def _driver_version(value: str) -> str:
    return _version_text(value, "driver version like 535.104.05", r"\d{2,4}(\.\d{1,3}){0,2}")


def _cuda_version(value: str) -> str:
    return _version_text(value, "CUDA version like 12.4", r"\d{1,2}\.\d{1,2}(\.\d{1,3})?")


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be greater than 0")
    return number


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    return number


def _codes(value: str) -> list[str]:
    codes = [c.strip().upper() for c in value.split(",") if c.strip()]
    for code in codes:
        if not re.fullmatch(r"[A-Z][A-Z0-9]*", code):
            raise argparse.ArgumentTypeError(f"{code!r} is not a check code or code prefix")
    return codes


_FRAMEWORKS = ("torch", "tensorflow", "jax")


def _framework_spec(value: str) -> tuple[str, str | None]:
    """ "torch" or "torch==2.7" -> ("torch", "2.7")."""
    name, _, version_text = value.strip().partition("==")
    name = name.strip().lower()
    aliases = {"pytorch": "torch", "tf": "tensorflow"}
    name = aliases.get(name, name)
    if name not in _FRAMEWORKS:
        raise argparse.ArgumentTypeError(f"unknown framework {value!r}: choose from {', '.join(_FRAMEWORKS)}")
    version = version_text.strip() or None
    if version is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", version):
        raise argparse.ArgumentTypeError(f"{value!r}: the version must look like 2.7 or 2.7.1")
    return name, version


def _framework_spec_or_none(value: str) -> tuple[str, str | None] | None:
    return None if value.strip().lower() == "none" else _framework_spec(value)


def _python_version(value: str) -> str:
    return _version_text(value, "Python version", r"3\.\d{1,2}")


def _add_generator_target(parser: argparse.ArgumentParser) -> None:
    target = parser.add_argument_group("the machine to fit (default: this one)")
    target.add_argument(
        "--for-driver",
        type=_driver_version,
        metavar="VERSION",
        help="the host driver that will run it, e.g. 550.54.15 (default: this machine's)",
    )
    target.add_argument(
        "--from",
        dest="from_path",
        metavar="PATH",
        help="fit the machine of a snapshot (directory, .tar.gz or one evidence file)",
    )
    _add_timeout(target)


def _add_output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help=f"write {what} to FILE (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list every choice and why on stderr")


def _add_timeout(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="limit for each external command, e.g. a hanging nvidia-smi (default: 10)",
    )


FRAMEWORK_CHOICES = ("torch", "tensorflow", "jax", "cupy")


def _frameworks(value: str) -> list[str]:
    names = [n.strip().lower() for n in value.split(",") if n.strip()]
    if names == ["none"]:
        return []
    if names == ["all"]:
        return list(FRAMEWORK_CHOICES)
    for name in names:
        if name not in FRAMEWORK_CHOICES:
            raise argparse.ArgumentTypeError(
                f"{name!r} is not one of {', '.join(FRAMEWORK_CHOICES)} (or 'all', 'none')"
            )
    return names


def _add_probe_options(parser: argparse.ArgumentParser) -> None:
    probes = parser.add_argument_group("framework probes (run in the target Python, never in gpudoctor's own)")
    probes.add_argument(
        "--python",
        metavar="PATH",
        help="the Python whose frameworks to probe: an interpreter, or a venv / conda prefix "
        "(default: the active virtual or conda environment, else gpudoctor's own Python)",
    )
    probes.add_argument(
        "--frameworks",
        type=_frameworks,
        default=list(FRAMEWORK_CHOICES),
        metavar="LIST",
        help="which to probe, comma-separated: torch,tensorflow,jax,cupy; 'all' (default) or 'none'",
    )
    probes.add_argument(
        "--probe-timeout",
        type=_positive_float,
        default=60.0,
        metavar="SECONDS",
        help="limit for each framework probe: importing TensorFlow can take seconds (default: 60)",
    )


def _add_smoke_options(parser: argparse.ArgumentParser, flag: bool) -> None:
    """``flag``: the options come with a ``--smoke`` switch (check, collect); ``smoke`` itself always runs."""
    smoke = parser.add_argument_group("smoke workloads (real matmul, CNN training step, bandwidth, all-reduce)")
    if flag:
        smoke.add_argument(
            "--smoke",
            action="store_true",
            help="also run the smoke workloads in the target Python (seconds to minutes)",
        )
    # Beside check's --frameworks (which probes to run) a bare --framework would invite mix-ups.
    prefix = "--smoke-" if flag else "--"
    smoke.add_argument(
        f"{prefix}framework",
        dest="smoke_framework",
        choices=("torch", "tensorflow"),
        default="torch",
        help="which framework runs the workloads (default: torch)",
    )
    mode = smoke.add_mutually_exclusive_group()
    mode.add_argument(
        f"{prefix}quick",
        dest="smoke_mode",
        action="store_const",
        const="quick",
        help="the whole suite in about 10 s on a GPU (default)",
    )
    mode.add_argument(
        f"{prefix}full",
        dest="smoke_mode",
        action="store_const",
        const="full",
        help="bigger sizes and more repeats, for numbers to compare",
    )
    smoke.add_argument(
        f"{prefix}budget",
        dest="budget",
        type=_positive_float,
        metavar="SECONDS",
        help="stop starting new workloads after this long (default: 25 for --quick, 180 for --full)",
    )
    parser.set_defaults(smoke_mode="quick")


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
        metavar="PATH",
        help="diagnose a snapshot (directory, .tar.gz, or a single evidence file) instead of this machine",
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="output format on stdout (default: text; markdown is redacted for pasting into an issue)",
    )
    check.add_argument("-v", "--verbose", action="store_true", help="show details, evidence, timings and tracebacks")
    check.add_argument("--junit-xml", metavar="PATH", help="also write a JUnit XML report to PATH")
    check.add_argument(
        "--force", action="store_true", help="overwrite an existing --junit-xml file that gpudoctor did not write"
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
        type=_codes,
        action="extend",
        metavar="CODES",
        help="run only these checks (comma-separated codes or prefixes, e.g. DRV,CUDA002)",
    )
    check.add_argument(
        "--ignore", type=_codes, action="extend", metavar="CODES", help="skip these checks (codes or prefixes)"
    )
    gates = check.add_argument_group("preflight gates (each unmet gate is a problem)")
    gates.add_argument("--require-gpu", action="store_true", help="at least one usable NVIDIA GPU")
    gates.add_argument("--min-gpus", type=_positive_int, metavar="N", help="at least N usable GPUs")
    gates.add_argument(
        "--min-compute-capability",
        type=_compute_capability,
        metavar="X.Y",
        help="every GPU at least this compute capability",
    )
    gates.add_argument("--min-gpu-memory", type=_positive_float, metavar="GIB", help="every GPU at least GIB memory")
    gates.add_argument("--min-driver", type=_driver_version, metavar="VERSION", help="driver at least VERSION")
    gates.add_argument("--cuda", type=_cuda_version, metavar="X.Y", help="the driver must be able to run CUDA X.Y")
    _add_timeout(check)
    _add_probe_options(check)
    _add_smoke_options(check, flag=True)

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
    _add_timeout(collect)
    _add_probe_options(collect)
    _add_smoke_options(collect, flag=True)

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
        "--force", action="store_true", help="overwrite an existing --junit-xml file gpudoctor did not write"
    )
    smoke.add_argument(
        "--fail-on",
        choices=("problem", "warning"),
        default="problem",
        help="exit 1 on problems only (default) or on warnings too",
    )
    _add_timeout(smoke)
    _add_smoke_options(smoke, flag=False)

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
    _add_timeout(topo)

    dockerfile = commands.add_parser(
        "dockerfile",
        help="write a Dockerfile whose CUDA base and framework build fit this machine's driver and GPUs",
        description="Write a Dockerfile: an nvidia/cuda base image the driver can run (a tag NVIDIA publishes), the "
        "framework build matching it installed pinned from the right index, a venv, a non-root user, "
        "BuildKit caches, and gpudoctor itself as a preflight. Its header says what was chosen and why. "
        "Impossible combinations are refused with the nearest one that works.",
    )
    _add_generator_target(dockerfile)
    dockerfile.add_argument(
        "--framework",
        type=_framework_spec,
        default=("torch", None),
        metavar="NAME[==VERSION]",
        help="torch (default), tensorflow or jax, optionally pinned: torch==2.7",
    )
    dockerfile.add_argument(
        "--python", type=_python_version, metavar="X.Y", help="the Python in the image (default: the base OS's own)"
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
    _add_output(dockerfile, "the Dockerfile")

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
    _add_generator_target(script)
    script.add_argument(
        "--distro",
        metavar="NAME",
        help="ubuntu20.04, ubuntu22.04, ubuntu24.04, debian12, rhel8, rhel9, rocky8, rocky9, alma8, "
        "alma9, amzn2023, or wsl-<one of those> (default: this machine's)",
    )
    script.add_argument("--no-driver", dest="driver", action="store_false", help="leave the driver step out")
    script.add_argument("--cuda-toolkit", type=_cuda_version, metavar="X.Y", help="also install this CUDA toolkit")
    script.add_argument("--cudnn", action="store_true", help="also install cuDNN")
    script.add_argument("--container-toolkit", action="store_true", help="also install the NVIDIA Container Toolkit")
    script.add_argument(
        "--framework",
        type=_framework_spec_or_none,
        default=("torch", None),
        metavar="NAME[==VERSION]|none",
        help="the framework for the venv (default torch; none: no venv)",
    )
    script.add_argument("--python", type=_python_version, metavar="X.Y", help="the Python of the venv")
    script.add_argument(
        "--venv", default="~/.venvs/gpu", metavar="PATH", help="where the venv goes (default: ~/.venvs/gpu)"
    )
    _add_output(script, "the script")

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
        help="driver, torch, tensorflow, cudnn, gpus, jax, cupy, specs, pcie, xid or health (default: an overview)",
    )
    kb.add_argument("item", nargs="?", metavar="ITEM", help="one entry of the topic, e.g. `gpudoctor kb xid 79`")
    kb.add_argument("--format", choices=("text", "json"), default="text")

    commands.add_parser(
        "schema",
        help="print the JSON Schema of 'check --format json'",
        description="Print the JSON Schema that 'gpudoctor check --format json' output follows.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
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
