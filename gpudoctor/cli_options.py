"""The command line's building blocks: argparse value types and the option groups several commands share.

``gpudoctor.cli`` puts them together into the parser.  Standard library only, like the parser itself, so
``gpudoctor --version`` and ``--help`` stay as fast as Python starts.
"""

from __future__ import annotations

import argparse
import math
import re

from gpudoctor.probes import protocol

# ---------------------------------------------------------------- value types


def _version_text(value: str, what: str, pattern: str) -> str:
    if not re.fullmatch(pattern, value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a {what}")
    return value.strip()


def compute_capability(value: str) -> str:
    return _version_text(value, "compute capability like 8.0", r"\d{1,2}\.\d")


def driver_version(value: str) -> str:
    return _version_text(value, "driver version like 535.104.05", r"\d{2,4}(\.\d{1,3}){0,2}")


def cuda_version(value: str) -> str:
    return _version_text(value, "CUDA version like 12.4", r"\d{1,2}\.\d{1,2}(\.\d{1,3})?")


def positive_float(value: str, maximum: float = 1e6) -> float:
    """A finite number above 0 and at most ``maximum``: "inf", "nan" and "1e308" are refused, not overflowed later."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite number")
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be greater than 0")
    if number > maximum:
        raise argparse.ArgumentTypeError(f"{value!r} is too large (at most {maximum:g})")
    return number


# A day: no command, probe or smoke run should be given longer, and time arithmetic stays far from overflow.
MAX_SECONDS = 86400.0


def seconds(value: str) -> float:
    """A time limit in seconds: finite, above 0, at most a day."""
    return positive_float(value, MAX_SECONDS)


def gibibytes(value: str) -> float:
    """A memory size in GiB: finite, above 0, and below any GPU's memory by far."""
    return positive_float(value, 1e5)


def positive_int(value: str, maximum: int = 1_000_000) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} must be at least 1")
    if number > maximum:
        raise argparse.ArgumentTypeError(f"{value!r} is too large (at most {maximum})")
    return number


def input_path(value: str) -> str:
    """A path to read (``-``: stdin): an empty one is a mistake (an unset shell variable), never "this machine"."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty path; give a snapshot directory, a .tar.gz, a file or '-'")
    return value


def codes(value: str) -> list[str]:
    found = [c.strip().upper() for c in value.split(",") if c.strip()]
    for code in found:
        if not re.fullmatch(r"[A-Z][A-Z0-9]*", code):
            raise argparse.ArgumentTypeError(f"{code!r} is not a check code or code prefix")
    return found


def framework_spec(value: str) -> tuple[str, str | None]:
    """ "torch" or "torch==2.7" -> ("torch", "2.7")."""
    name, _, version_text = value.strip().partition("==")
    name = name.strip().lower()
    aliases = {"pytorch": "torch", "tf": "tensorflow"}
    name = aliases.get(name, name)
    from gpudoctor.generate.model import GENERATOR_FRAMEWORKS  # light (dataclasses), and only when the option is given

    if name not in GENERATOR_FRAMEWORKS:
        choices = ", ".join(GENERATOR_FRAMEWORKS)
        raise argparse.ArgumentTypeError(f"unknown framework {value!r}: choose from {choices}")
    version = version_text.strip() or None
    if version is not None and not re.fullmatch(r"\d+(\.\d+){0,2}", version):
        raise argparse.ArgumentTypeError(f"{value!r}: the version must look like 2.7 or 2.7.1")
    return name, version


def framework_specs(value: str) -> list[tuple[str, str | None]]:
    """ "torch,tensorflow==2.20" -> [("torch", None), ("tensorflow", "2.20")]; each framework once."""
    specs = [framework_spec(part) for part in value.split(",") if part.strip()]
    if not specs:
        raise argparse.ArgumentTypeError("name at least one framework: torch, tensorflow or jax")
    names = [name for name, _ in specs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"{', '.join(repeated)} named more than once")
    return specs


def framework_spec_or_none(value: str) -> tuple[str, str | None] | None:
    return None if value.strip().lower() == "none" else framework_spec(value)


def python_version(value: str) -> str:
    return _version_text(value, "Python version", r"3\.\d{1,2}")


# The frameworks a probe exists for: the probe protocol's list (stdlib only, as cheap as this module).
FRAMEWORK_CHOICES = protocol.FRAMEWORKS


def frameworks(value: str) -> list[str]:
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


# ---------------------------------------------------------------- option groups several commands share


def add_generator_target(parser: argparse.ArgumentParser) -> None:
    target = parser.add_argument_group("the machine to fit (default: this one)")
    target.add_argument(
        "--for-driver",
        type=driver_version,
        metavar="VERSION",
        help="the host driver that will run it: a release, e.g. 550.54.15, or a branch, e.g. 550, meaning its "
        "oldest release gpudoctor knows (default: this machine's)",
    )
    target.add_argument(
        "--from",
        dest="from_path",
        type=input_path,
        metavar="PATH",
        help="fit the machine of a snapshot (directory, .tar.gz or one evidence file)",
    )
    add_timeout(target)


def add_output(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help=f"write {what} to FILE (default: stdout)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list every choice and why on stderr")


def add_cloud_metadata(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cloud-metadata",
        action="store_true",
        help="also ask the cloud's instance metadata service for the instance type (only where DMI names the "
        "cloud; one short request, 0.5 s at most). Without it gpudoctor makes no network call",
    )


def add_timeout(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="limit for each external command, e.g. a hanging nvidia-smi (default: 10)",
    )


def add_probe_options(parser: argparse.ArgumentParser) -> None:
    probes = parser.add_argument_group("framework probes (run in the target Python, never in gpudoctor's own)")
    probes.add_argument(
        "--python",
        metavar="PATH",
        help="the Python whose frameworks to probe: an interpreter, or a venv / conda prefix "
        "(default: the active virtual or conda environment, else gpudoctor's own Python)",
    )
    probes.add_argument(
        "--frameworks",
        type=frameworks,
        default=list(FRAMEWORK_CHOICES),
        metavar="LIST",
        help="which to probe, comma-separated: torch,tensorflow,jax,cupy; 'all' (default) or 'none'",
    )
    probes.add_argument(
        "--probe-timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="limit for each framework probe: importing TensorFlow can take seconds (default: 60)",
    )


def add_smoke_options(parser: argparse.ArgumentParser, flag: bool) -> None:
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
        choices=protocol.SMOKE_FRAMEWORKS,
        default=protocol.SMOKE_FRAMEWORKS[0],
        help="which framework runs the workloads (default: torch)",
    )
    mode = smoke.add_mutually_exclusive_group()
    mode.add_argument(
        f"{prefix}quick",
        dest="smoke_mode",
        action="store_const",
        const="quick",
        help="every workload once, within 25 s (about 20 s on an H100) (default)",
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
        type=seconds,
        metavar="SECONDS",
        help="stop starting new workloads after this long (default: "
        + ", ".join(f"{seconds:g} for --{mode}" for mode, seconds in protocol.SMOKE_BUDGET_S.items())
        + ")",
    )
    parser.set_defaults(smoke_mode="quick")


def rocm_version(value: str) -> str:
    return _version_text(value, "ROCm version like 6.2.2", r"\d{1,2}\.\d{1,3}(\.\d{1,5})?")


def add_vendor_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--vendor`` and ``--rocm`` for the generators (dockerfile, install-script): which GPU vendor's stack."""
    parser.add_argument(
        "--vendor",
        choices=("nvidia", "amd"),
        help=f"whose GPUs {what} is for: nvidia (CUDA) or amd (ROCm); default: the machine's (AMD GPUs and no "
        "NVIDIA ones mean amd), else nvidia",
    )
    parser.add_argument(
        "--rocm",
        type=rocm_version,
        metavar="VERSION",
        help="the ROCm release to fit, e.g. 6.2.2 (implies --vendor amd; default: the machine's ROCm)",
    )


# ---------------------------------------------------------------- scheduler hooks

LEVELS = ("quick", "standard", "full")
EXIT_CONVENTION_CHOICES = ("gpudoctor", "npd", "nagios")


def add_level_and_budget(parser: argparse.ArgumentParser | argparse._ArgumentGroup, default_level: str) -> None:
    """``--level`` and ``--budget``: how deep a node check goes and how long it may take in all."""
    parser.add_argument(
        "--level",
        choices=LEVELS,
        default=default_level,
        help="quick: the static checks (about a second; nothing is run in your Python but the frameworks "
        "--frameworks names); standard: + the framework probes; full: + the smoke workloads (a snapshot read "
        f"with --from is judged as it was collected) (default: {default_level})",
    )
    parser.add_argument(
        "--budget",
        dest="time_budget",
        type=seconds,
        metavar="SECONDS",
        help="the whole run's time limit: commands, probes and smoke share it; at its end whatever still runs is "
        "stopped, the report holds what finished, and the node is judged 'unknown' unless a problem was already "
        "found (default: none; no limit applies to a snapshot read with --from)",
    )


def add_node_verdict_options(parser: argparse.ArgumentParser) -> None:
    """What a scheduler hook needs from ``check``: a level, a budget, quiet output and its exit codes."""
    hooks = parser.add_argument_group(
        "scheduler hooks (Slurm Prolog / HealthCheckProgram, node-problem-detector plugins, Nagios-style monitors)"
    )
    add_level_and_budget(hooks, "standard")
    hooks.add_argument(
        "--exit-codes",
        choices=EXIT_CONVENTION_CHOICES,
        default="gpudoctor",
        help="gpudoctor: 0 ok, 1 problem, 2 bad usage, 3 failed or not judged (default); npd: node-problem-"
        "detector's 0 ok, 1 problem, 2 unknown (bad usage too); nagios: 0 OK, 1 WARNING, 2 CRITICAL (a problem), "
        "3 UNKNOWN (bad usage too). Warnings count as problems with --fail-on warning",
    )
    hooks.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing on stdout, whatever --format says (the exit code says it all; errors still go to "
        "stderr and --junit-xml is still written)",
    )
