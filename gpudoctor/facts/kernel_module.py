"""The loaded NVIDIA kernel module: /proc/driver/nvidia/version, /sys/module/nvidia/version, /proc/modules.

Pure parsers: text in, typed facts out.  They never raise; anything they cannot
read stays ``None`` (or an empty container), which downstream checks treat as
"unknown", never as "absent" or "wrong".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.facts.model import KernelModule

# A driver version as the kernel module prints it: "384.98", "565.57.01", L4T "35.3.1".
_VERSION = r"\d+(?:\.\d+)+"
_VERSION_LINE = re.compile(rf"^\s*({_VERSION})\s*$", re.ASCII)

# Proprietary module: "NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 ...".
# The architecture word sits before "Kernel Module" (x86_64, aarch64, ppc64le, x86).
_PROPRIETARY = re.compile(rf"NVIDIA UNIX\s+(?:(?P<arch>\S+)\s+)?Kernel Module\s+(?P<version>{_VERSION})\b", re.ASCII)
# Open module: "NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build ...".
_OPEN = re.compile(
    rf"NVIDIA UNIX\s+Open Kernel Module(?:\s+for\s+(?P<arch>\S+))?\s+(?P<version>{_VERSION})\b", re.ASCII
)
# "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)": keep the number,
# which is what a "module built with another compiler" check compares.
_GCC_NUMBER = re.compile(r"gcc version\s+(\d+(?:\.\d+)*)", re.IGNORECASE | re.ASCII)

# Desktop/datacenter driver branches have had three-digit majors for two decades;
# Jetson (L4T) reports its BSP release ("35.3.1") through the same file instead.
_L4T_MAX_MAJOR = 100


def _int_or_none(token: str) -> int | None:
    # ASCII digits only: str.isdigit() accepts "²", which int() refuses.
    if not (token.isascii() and token.isdigit()):
        return None
    try:
        return int(token)
    except ValueError:  # more digits than int() converts
        return None


def _major(version: str | None) -> int | None:
    if not version:
        return None
    return _int_or_none(version.split(".", 1)[0])


def parse_proc_driver_version(text: object) -> KernelModule:
    """Parse ``/proc/driver/nvidia/version``; an empty :class:`KernelModule` when nothing is readable.

    Lines before the ``NVRM version:`` line (a pasted shell prompt, a dmesg time
    stamp) are ignored.
    """
    if not isinstance(text, str):
        return KernelModule()
    raw_first_line: str | None = None
    flavor: str | None = None
    version: str | None = None
    architecture: str | None = None
    gcc_version: str | None = None
    for line in text.splitlines():
        if raw_first_line is None and "NVRM version:" in line:
            raw_first_line = line.strip()
            body = line.split("NVRM version:", 1)[1]
            match = _OPEN.search(body)
            if match:
                flavor = "open"
            else:
                match = _PROPRIETARY.search(body)
                if match:
                    flavor = "proprietary"
            if match:
                version = match.group("version")
                architecture = match.group("arch")
        elif gcc_version is None and "GCC version:" in line:
            rest = line.split("GCC version:", 1)[1].strip()
            number = _GCC_NUMBER.search(rest)
            gcc_version = number.group(1) if number else (rest or None)
    major = _major(version)
    # Orin-era Jetsons ship the open module but number it with the L4T release;
    # calling that "open 35.3.1" would send a version check hunting for a driver
    # branch that does not exist.
    if architecture == "aarch64" and major is not None and major < _L4T_MAX_MAJOR:
        flavor = "l4t"
    return KernelModule(
        version=version,
        flavor=flavor,
        architecture=architecture,
        gcc_version=gcc_version,
        raw_first_line=raw_first_line,
    )


def parse_sys_module_version(text: object) -> str | None:
    """Parse ``/sys/module/nvidia/version`` ("535.54.03\\n"); ``None`` unless a version line is there."""
    if not isinstance(text, str):
        return None
    for line in text.splitlines():
        match = _VERSION_LINE.match(line)
        if match:
            return match.group(1)
    return None


@dataclass(frozen=True)
class LoadedModule:
    """One line of ``/proc/modules``."""

    size: int
    refcount: int | None = None  # None on kernels built without module unloading ("-")
    used_by: list[str] = field(default_factory=list)
    state: str | None = None  # "Live", "Loading", "Unloading"
    tainted: str | None = None  # the taint flags, "POE"


def parse_proc_modules(text: object) -> dict[str, LoadedModule]:
    """Parse ``/proc/modules`` into ``{name: LoadedModule(size, refcount, used_by, state, tainted)}``.

    Line format (kernel ``m_show``): ``name size refcount deps state address [(taints)]``;
    ``deps`` is ``-`` or a comma list with a trailing comma, ``refcount`` is ``-``
    on kernels built without module unloading (kept as ``None``).  Lines that do
    not start with a name and a numeric size are skipped.
    """
    modules: dict[str, LoadedModule] = {}
    if not isinstance(text, str):
        return modules
    for line in text.splitlines():
        fields = line.split()
        size = _int_or_none(fields[1]) if len(fields) >= 2 else None
        if size is None:
            continue
        last = fields[-1]
        # Taint flags are optional and come last, in parentheses: "(POE)", "(OE)".
        tainted = len(fields) > 5 and last.startswith("(") and last.endswith(")") and len(last) > 2
        record = LoadedModule(
            size=size,
            refcount=_int_or_none(fields[2]) if len(fields) > 2 else None,
            used_by=[dep for dep in fields[3].split(",") if dep] if len(fields) > 3 and fields[3] != "-" else [],
            state=fields[4] if len(fields) > 4 else None,
            tainted=last[1:-1] if tainted else None,
        )
        modules.setdefault(fields[0], record)
    return modules
