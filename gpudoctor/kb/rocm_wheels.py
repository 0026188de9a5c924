"""PyTorch's ROCm wheels: which ROCm variants each release publishes, and the index that serves them.

The data is ``data/rocm_wheels.json``, copied from shared/reference/accelerators.md §1c [P_TI]: the
``release`` entry of pytorch/test-infra's ``ROCM_ARCHES_DICT`` at each release commit.  A variant is the
wheel's local version tag ("rocm6.2.4"); its index is ``https://download.pytorch.org/whl/<variant>``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.versions import major_minor, version_key

TORCH_INDEX_BASE = "https://download.pytorch.org/whl"
DATA_FILE = "rocm_wheels.json"

_VARIANT_RE = re.compile(r"rocm(\d{1,2}(?:\.\d{1,3}){1,2})")
# "6.2.2", "6.2.2-116" (/opt/rocm/.info/version), "rocm6.2": the leading numeric release only.
_ROCM_RE = re.compile(r"\s*(?:rocm)?\s*v?(\d{1,2})\.(\d{1,3})(?:\.(\d{1,5}))?", re.IGNORECASE)


@dataclass(frozen=True)
class RocmWheelRelease:
    """One torch release (major.minor) and the ROCm variants it publishes, oldest first."""

    torch: str
    variants: tuple[str, ...]
    candidate: bool  # a release candidate, not yet a release: never chosen by default
    sources: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def rocm_wheel_releases() -> tuple[RocmWheelRelease, ...]:
    """Every torch release in the data, newest first; rows that do not parse are skipped."""
    rows: list[RocmWheelRelease] = []
    for raw in as_list(_load(DATA_FILE).get("releases")):
        row = as_dict(raw)
        torch = row.get("torch")
        variants = tuple(v for v in as_list(row.get("variants")) if isinstance(v, str) and _VARIANT_RE.fullmatch(v))
        if not isinstance(torch, str) or not variants:
            continue
        sources = tuple(s for s in as_list(row.get("sources")) if isinstance(s, str))
        rows.append(
            RocmWheelRelease(torch, tuple(sorted(variants, key=variant_key)), row.get("candidate") is True, sources)
        )
    return tuple(sorted(rows, key=lambda r: version_key(r.torch), reverse=True))


def variant_key(variant: str) -> tuple[int, int, int]:
    """``"rocm6.2.4"`` -> ``(6, 2, 4)``; ``"rocm6.3"`` -> ``(6, 3, 0)``; junk -> ``(0, 0, 0)``."""
    return rocm_key(variant) or (0, 0, 0)


def rocm_key(version: object) -> tuple[int, int, int] | None:
    """A ROCm release as a comparable triple: ``"6.2.2-116"`` -> ``(6, 2, 2)``; junk -> None."""
    if not isinstance(version, str) or len(version) > 100:
        return None
    match = _ROCM_RE.match(version)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def rocm_variants(torch_version: str) -> tuple[str, ...]:
    """The ROCm variants ("rocm6.2.4", "rocm6.3") a torch release publishes, oldest first; () when unknown."""
    wanted = major_minor(torch_version.split("+", 1)[0]) if isinstance(torch_version, str) else None
    for release in rocm_wheel_releases():
        if release.torch == wanted:
            return release.variants
    return ()


def index_url(variant: str) -> str:
    """``https://download.pytorch.org/whl/rocm6.3`` for "rocm6.3"."""
    return f"{TORCH_INDEX_BASE}/{variant}"


def newest_variant_for(rocm_version: str | None, torch_version: str | None = None) -> tuple[str, str] | None:
    """(torch release, variant) for a machine with ROCm ``rocm_version`` installed: the newest variant not
    newer than it, from the newest released torch that publishes that variant (or from ``torch_version``
    only, when given).  ``rocm_version`` None means "no ROCm constraint": the newest released variant.
    None when no published variant fits (ROCm older than every wheel, or an unknown torch release)."""
    ceiling = rocm_key(rocm_version) if rocm_version is not None else None
    if rocm_version is not None and ceiling is None:
        return None
    wanted_torch = major_minor(torch_version.split("+", 1)[0]) if torch_version else None
    best: tuple[tuple[int, int, int], str, str] | None = None
    for release in rocm_wheel_releases():  # newest torch first: ties keep the newer torch
        if wanted_torch is not None and release.torch != wanted_torch:
            continue
        if wanted_torch is None and release.candidate:
            continue
        for variant in release.variants:
            key = variant_key(variant)
            if ceiling is not None and key > ceiling:
                continue
            if best is None or key > best[0]:
                best = (key, release.torch, variant)
    return (best[1], best[2]) if best is not None else None


def all_variants() -> tuple[str, ...]:
    """Every variant any release (candidates included) publishes, oldest first."""
    seen = {variant for release in rocm_wheel_releases() for variant in release.variants}
    return tuple(sorted(seen, key=variant_key))


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
