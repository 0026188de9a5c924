"""Driver ↔ CUDA: which CUDA a driver runs, natively or by minor-version compatibility."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from gpudoctor.kb.loading import _driver_data
from gpudoctor.kb.versions import _platform_column, parse_cuda_version, parse_driver_version

# --------------------------------------------------------------------------- driver vs CUDA


@dataclass(frozen=True)
class _ToolkitRow:
    cuda: tuple[int, int]
    cuda_full: tuple[int, int, int]
    stage: str  # "ga", "update", "rc"
    minimum: tuple[int, int, int] | None
    minimum_text: str | None
    sources: tuple[str, ...]


@functools.lru_cache(maxsize=None)
def _toolkit_rows(column: str) -> tuple[_ToolkitRow, ...]:
    rows = []
    for raw in _driver_data().get("toolkit_driver", []):
        cuda = parse_cuda_version(raw.get("cuda"))
        full = parse_cuda_version(raw.get("cuda_full"))
        if cuda is None or full is None or full[2] is None:
            continue
        text = raw.get(column)
        rows.append(
            _ToolkitRow(
                cuda=(cuda[0], cuda[1]),
                cuda_full=(full[0], full[1], full[2]),
                stage=str(raw.get("stage", "")),
                minimum=parse_driver_version(text),
                minimum_text=text if parse_driver_version(text) else None,
                sources=tuple(raw.get("sources", ())),
            )
        )
    rows.sort(key=lambda row: row.cuda_full)
    return tuple(rows)


def _ga_row(rows: tuple[_ToolkitRow, ...], cuda: tuple[int, int]) -> _ToolkitRow | None:
    same_minor = [row for row in rows if row.cuda == cuda]
    for row in same_minor:
        if row.stage == "ga":
            return row
    return same_minor[0] if same_minor else None


def _row_for(cuda_text: object, column: str) -> _ToolkitRow | None:
    """The Table 3 row a CUDA version names: the GA row for "12.2", the exact row for "12.2.2".

    A patch number the table does not list falls back to the GA row of that minor: component
    versions such as nvcc's "12.2.91" (CUDA 12.2 GA) are not update numbers, and reading them
    as one would ask for a newer driver than the toolkit needs.
    """
    cuda = parse_cuda_version(cuda_text)
    if cuda is None:
        return None
    rows = _toolkit_rows(column)
    major, minor, patch = cuda
    if patch is not None:
        for row in rows:
            if row.cuda_full == (major, minor, patch):
                return row
    return _ga_row(rows, (major, minor))


def max_cuda_for_driver(driver_version: str, platform: str = "linux") -> str | None:
    """The newest CUDA "major.minor" whose GA release this driver fully supports.

    ``"535.54.03"`` -> ``"12.2"``; ``"470.256.02"`` -> ``"11.4"``; a driver older than every row
    (CUDA 10.0 needs 410.48) -> ``None``.  nvidia-smi's "CUDA Version" says this for real; use
    this only when the evidence lacks it.  On Windows the 13.x rows have no driver minimum
    (Table 3: N/A), so the answer there stops at 12.x.
    """
    column = _platform_column(platform)
    driver = parse_driver_version(driver_version)
    if column is None or driver is None:
        return None
    best: tuple[int, int] | None = None
    for row in _toolkit_rows(column):
        if row.stage != "ga" or row.minimum is None:
            continue
        if row.minimum <= driver and (best is None or row.cuda > best):
            best = row.cuda
    return None if best is None else f"{best[0]}.{best[1]}"


def min_driver_for_cuda(cuda: str, platform: str = "linux") -> str | None:
    """The oldest driver with full support for a CUDA release (Table 3), as printed there.

    ``"12.2"`` -> ``"535.54.03"`` (the GA row); ``"12.2.2"`` -> ``"535.104.05"`` (that update);
    a patch the table does not list (nvcc's "12.2.91") -> the GA row.
    ``None`` when the version is unknown or the table has no minimum (13.4; Windows for 13.x).
    """
    column = _platform_column(platform)
    if column is None:
        return None
    row = _row_for(cuda, column)
    return None if row is None else row.minimum_text


@functools.lru_cache(maxsize=None)
def _mvc_rows() -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for raw in _driver_data().get("minor_version_compat", []):
        major = raw.get("cuda_major")
        if isinstance(major, int) and not isinstance(major, bool):
            rows[major] = raw
    return rows


def mvc_floor(cuda_major: int | float | str, platform: str = "linux") -> str | None:
    """The oldest driver that runs *any* CUDA ``cuda_major``.x release under minor-version
    compatibility: 11 -> 450.80.02, 12 -> 525.60.13, 13 -> 580.65.06 (Linux).  ``None`` for
    majors without minor-version compatibility (10.x and older) or where it is not confirmed."""
    column = _platform_column(platform)
    if column is None or isinstance(cuda_major, bool):
        return None
    if isinstance(cuda_major, float) and not cuda_major.is_integer():
        return None
    try:
        major = int(cuda_major)
    except (TypeError, ValueError, OverflowError):
        return None
    row = _mvc_rows().get(major)
    if row is None:
        return None
    text = row.get(column)
    return text if parse_driver_version(text) else None


@dataclass(frozen=True)
class DriverCudaVerdict:
    """Can this driver run this CUDA release, and if not, what does it need?

    ``status``: ``"native"`` (full support), ``"minor_version_compat"`` (runs, with the limits
    in ``message``), ``"too_old"`` (needs a newer driver: ``needs_driver`` for full support,
    ``mvc_floor`` for the least that runs it) or ``"unknown"`` (no data).
    """

    status: str
    driver: str | None
    cuda: str | None
    platform: str
    needs_driver: str | None = None
    mvc_floor: str | None = None
    driver_max_cuda: str | None = None
    message: str = ""
    sources: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "driver": self.driver,
            "cuda": self.cuda,
            "platform": self.platform,
            "needs_driver": self.needs_driver,
            "mvc_floor": self.mvc_floor,
            "driver_max_cuda": self.driver_max_cuda,
            "message": self.message,
            "sources": list(self.sources),
        }


_MVC_LIMITS = (
    "Limits: features that need the newer driver are unavailable, and PTX built by the newer "
    "toolkit cannot be JIT-compiled by this driver, so a program that ships only PTX for your "
    "GPU (no ready-made SASS) fails to load its kernels."
)


def driver_runs_cuda(driver_version: str, cuda: str, platform: str = "linux") -> DriverCudaVerdict:
    """Whether ``driver_version`` runs CUDA ``cuda`` ("12.4", "12.4.1", "cu124") on ``platform``.

    535.54.03 runs 12.2 natively; 525.85.12 runs 12.4 under minor-version compatibility;
    470.x is too old for any 12.x (full support for 12.2 needs 535.54.03, the 12.x floor is
    525.60.13); 575.x is too old for 13.0 (the 13.x floor is 580.65.06).
    """
    platform_name = platform if isinstance(platform, str) else repr(platform)
    driver = parse_driver_version(driver_version)
    wanted = parse_cuda_version(cuda)
    column = _platform_column(platform)
    driver_text = str(driver_version).strip() if driver is not None else None
    cuda_text = None if wanted is None else str(cuda).strip()

    def unknown(message: str) -> DriverCudaVerdict:
        return DriverCudaVerdict("unknown", driver_text, cuda_text, platform_name, message=message)

    if column is None:
        return unknown(f"No driver table for platform {platform_name!r} (known: linux, windows, wsl).")
    if driver is None:
        return unknown(f"{driver_version!r} is not a driver version like 535.54.03.")
    if wanted is None:
        return unknown(f"{cuda!r} is not a CUDA version like 12.2 or 12.2.2.")

    major = wanted[0]
    row = _row_for(cuda, column)
    full_min = row.minimum if row is not None else None
    full_text = row.minimum_text if row is not None else None
    floor_text = mvc_floor(major, platform)
    floor = parse_driver_version(floor_text)
    max_cuda = max_cuda_for_driver(str(driver_version), platform)
    sources: tuple[str, ...] = tuple(row.sources) if row is not None else ()
    if floor is not None:
        sources += tuple(s for s in _mvc_rows()[major].get("sources", ()) if s not in sources)
    where = "Windows" if column == "windows_min" else "Linux"

    def verdict(status: str, message: str) -> DriverCudaVerdict:
        return DriverCudaVerdict(
            status,
            driver_text,
            cuda_text,
            platform_name,
            needs_driver=full_text,
            mvc_floor=floor_text,
            driver_max_cuda=max_cuda,
            message=message,
            sources=sources,
        )

    if full_min is not None and driver >= full_min:
        return verdict(
            "native",
            f"Driver {driver_text} fully supports CUDA {cuda_text} (it needs at least {full_text} on {where}).",
        )
    if floor is not None and driver >= floor:
        if full_min is None:
            lead = (
                f"The driver CUDA {cuda_text} asks for on {where} is not in the table, but "
                f"driver {driver_text} runs CUDA {major}.x applications through minor-version "
                f"compatibility (any {major}.x runtime works on a driver >= {floor_text})."
            )
        else:
            lead = (
                f"Driver {driver_text} is older than the {full_text} that CUDA {cuda_text} asks "
                f"for, but CUDA {major}.x applications still run on it through minor-version "
                f"compatibility (any {major}.x runtime works on a driver >= {floor_text})."
            )
        upgrade = f" Upgrade the driver to {full_text} or newer for full support." if full_text else ""
        return verdict("minor_version_compat", f"{lead} {_MVC_LIMITS}{upgrade}")
    if full_min is None and floor is None:
        return verdict("unknown", f"No {where} driver minimum is known for CUDA {cuda_text}.")
    if full_text and floor_text and full_min == floor:
        needs = f"it needs {full_text} or newer, the oldest driver for any CUDA {major}.x"
    elif full_text and floor_text:
        needs = (
            f"full support needs {full_text} or newer, and even minor-version compatibility "
            f"for CUDA {major}.x needs {floor_text} or newer"
        )
    elif full_text:
        needs = f"it needs {full_text} or newer (no minor-version compatibility is listed for CUDA {major}.x)"
    else:
        needs = f"minor-version compatibility for CUDA {major}.x needs {floor_text} or newer"
    message = f"Driver {driver_text} is too old for CUDA {cuda_text}: {needs}."
    if max_cuda:
        message += (
            f" This driver supports CUDA up to {max_cuda}: install a newer driver, or use a "
            f"build of your framework made for CUDA {max_cuda} or older."
        )
    else:
        message += " Install a newer driver."
    return verdict("too_old", message)


def oldest_driver_release(branch: object) -> str | None:
    """The oldest release of driver branch ``branch`` ("550") the knowledge base knows: the lowest Linux minimum
    of CUDA Table 3 (driver_cuda.json) on that branch, "550.54.14"; None for a branch it knows no release of."""
    text = str(branch).strip()
    if not text.isdigit() or not 2 <= len(text) <= 4:
        return None
    found = []
    for row in _driver_data().get("toolkit_driver", []):
        release = row.get("linux_min") if isinstance(row, dict) else None
        parsed = parse_driver_version(release)
        if parsed is not None and parsed[0] == int(text):
            found.append((parsed, str(release)))
    return min(found)[1] if found else None
