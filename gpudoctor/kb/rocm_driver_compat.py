"""Which ROCm user space runs on which AMD GPU Driver (amdgpu-dkms): AMD's user and kernel-space support matrix.

The data is ``data/rocm_driver_compat.json``.  AMD's rule [ROCM_KMD_MATRIX]: the driver and its user space are
compatible up to a year apart from ROCm 6.4.0 on, +/- 2 releases before; the table lists the supported pairs.  The
matrix names a driver by its release (ROCm 6.3, amdgpu 30.10), but the host's tools print the kernel module's own
version (6.10.5); AMD publishes no table between the two [ROCM_INSTALL_684], so only the module versions a package
version or an AMD maintainer names are mapped (``module_versions``).  Everything else stays unknown.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "rocm_driver_compat.json"
_MAJOR_MINOR = re.compile(r"(\d{1,2})\.(\d{1,3})")


@dataclass(frozen=True)
class DriverRow:
    kmd: str  # "6.3" (a ROCm release) or "30.10" (the driver's own numbering)
    user_space: tuple[str, ...]  # ("6.1", "6.2", ...)
    source: str


def major_minor(version: object) -> str | None:
    """ "6.3.3" -> "6.3"; "6.2.41133-dd7f95766" -> "6.2"; junk -> None."""
    match = _MAJOR_MINOR.match(version.strip()) if isinstance(version, str) else None
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def _key(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


@functools.lru_cache(maxsize=1)
def driver_rows() -> tuple[DriverRow, ...]:
    rows = []
    for raw in as_list(_load(DATA_FILE).get("matrix")):
        row = as_dict(raw)
        kmd = major_minor(row.get("kmd"))
        spaces = tuple(v for v in (major_minor(s) for s in as_list(row.get("user_space"))) if v)
        if kmd and spaces:
            rows.append(DriverRow(kmd, spaces, str(row.get("source") or "")))
    return tuple(rows)


def driver_row(kmd: str | None) -> DriverRow | None:
    wanted = major_minor(kmd)
    return next((row for row in driver_rows() if row.kmd == wanted), None)


def kmd_release_of(module_version: str | None) -> str | None:
    """The driver release (matrix key) of a host's amdgpu module version; None where no source names it.

    A version in the driver's own numbering (30.10.1) is its release already."""
    if not isinstance(module_version, str):
        return None
    text = module_version.strip()
    if re.fullmatch(r"3\d\.\d{1,2}(?:\.\d{1,3})?", text):
        return major_minor(text)
    for raw in as_list(_load(DATA_FILE).get("module_versions")):
        row = as_dict(raw)
        if row.get("module") == text:
            return major_minor(row.get("kmd"))
    return None


def supports(kmd: str | None, user_space: str | None) -> bool | None:
    """True/False when the matrix has the driver release; None when it does not (or a version is junk)."""
    row = driver_row(kmd)
    wanted = major_minor(user_space)
    if row is None or wanted is None:
        return None
    return wanted in row.user_space


def newest_user_space(kmd: str | None) -> str | None:
    row = driver_row(kmd)
    return max(row.user_space, key=_key) if row else None


def drivers_for(user_space: str | None) -> tuple[str, ...]:
    """The driver releases that support a ROCm user space, newest first."""
    wanted = major_minor(user_space)
    found = [row.kmd for row in driver_rows() if wanted and wanted in row.user_space]
    return tuple(sorted(found, key=_key, reverse=True))


def sources() -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_load(DATA_FILE).get("sources")).items()}


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
