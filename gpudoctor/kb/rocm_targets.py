"""AMD GPU targets (``gfx90a``, ``gfx942``, ``gfx1100`` ...): family, products, ROCm support, PyTorch's wheels.

The LLVM target, not the marketing name, decides whether a binary runs on an AMD GPU: ROCm libraries and
framework wheels carry code objects for a fixed list of targets, and a GPU outside it fails at first use
(``hipErrorNoBinaryForGpu``).  ``data/rocm_targets.json`` holds, each row with its sources: the target's
family and products, its status in the ROCm releases whose system requirements were read, the targets
PyTorch's ROCm wheels are compiled for, and the ``HSA_OVERRIDE_GFX_VERSION`` values people use so a sibling
chip's code objects load (a workaround, meant only within one family).

As everywhere in ``kb``: unknown is ``None``, junk in gives ``None``, nothing is guessed.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from gpudoctor.kb.loading import _load, as_dict, as_list

TARGETS_FILE = "rocm_targets.json"
_GFX = re.compile(r"gfx[0-9]{2,4}[0-9a-f]")
_OVERRIDE = re.compile(r"\s*([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{1,2})\s*")
_VERSION = re.compile(r"\s*(?:rocm)?\s*([0-9]{1,2})\.([0-9]{1,2})(?:\.([0-9]{1,6}))?")


def normalize_gfx(value: object) -> str | None:
    """``"gfx90a:sramecc+:xnack-"`` / ``"GFX942"`` / ``"amdgcn-amd-amdhsa--gfx1100"`` -> the bare target, else None."""
    if not isinstance(value, str) or len(value) > 200:
        return None
    match = re.search(r"(?<![0-9a-z])gfx[0-9a-f]{3,5}(?![0-9a-z])", value.lower())
    if match is None or not _GFX.fullmatch(match.group(0)):
        return None
    return match.group(0)


def _data() -> dict[str, Any]:
    return _load(TARGETS_FILE)


@functools.lru_cache(maxsize=1)
def _targets() -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for row in as_list(_data().get("targets")):
        if isinstance(row, dict) and isinstance(row.get("gfx"), str):
            rows[row["gfx"]] = row
    return rows


def known_targets() -> tuple[str, ...]:
    """Every target the table has a row for."""
    return tuple(_targets())


def target_family(gfx: object) -> str | None:
    """``"gfx90a"`` -> ``"CDNA2"``, ``"gfx1031"`` -> ``"RDNA2"``; None for a target the table does not know."""
    target = normalize_gfx(gfx)
    row = _targets().get(target) if target else None
    family = row.get("family") if row else None
    return family if isinstance(family, str) else None


def target_products(gfx: object) -> tuple[str, ...]:
    """The products the sources list for a target ("Instinct MI210", "Radeon RX 7900 XTX" ...)."""
    target = normalize_gfx(gfx)
    row = _targets().get(target) if target else None
    return tuple(p for p in as_list(row.get("products")) if isinstance(p, str)) if row else ()


def target_sources(gfx: object) -> tuple[str, ...]:
    """The source keys of a target's row (``sources`` of the data file says what each is)."""
    target = normalize_gfx(gfx)
    row = _targets().get(target) if target else None
    return tuple(s for s in as_list(row.get("sources")) if isinstance(s, str)) if row else ()


def _version_tuple(value: object) -> tuple[int, int, int] | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    match = _VERSION.match(value)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def support_in_rocm(gfx: object, rocm_version: object) -> str | None:
    """The target's status in the ROCm release series of ``rocm_version`` ("6.2.2", "6.2", "rocm6.2.4").

    "supported", "deprecated", "unsupported" as that release's Linux system requirements say, "not listed" for
    a target a complete table leaves out; None when no table of that series was read or it is silent.  The
    tables are per release series (6.2 -> the 6.2.2 requirements, 6.4 -> 6.4.1's).
    """
    target, wanted = normalize_gfx(gfx), _version_tuple(rocm_version)
    if target is None or wanted is None:
        return None
    for table in as_list(_data().get("rocm_support")):
        release = _version_tuple(as_dict(table).get("release"))
        if release is None or release[:2] != wanted[:2]:
            continue
        status = as_dict(table.get("status")).get(target)
        if isinstance(status, str):
            return status
        return "not listed" if table.get("complete") is True else None
    return None


def _wheel_lists() -> tuple[frozenset[str], frozenset[str], frozenset[str], tuple[int, int, int] | None]:
    wheels = as_dict(_data().get("torch_wheels"))
    common = frozenset(t for t in as_list(wheels.get("common")) if isinstance(t, str))
    extra = frozenset(t for t in as_list(wheels.get("legacy_extra")) if isinstance(t, str))
    legacy = frozenset(v for v in as_list(wheels.get("legacy_variants")) if isinstance(v, str))
    return common, extra, legacy, _version_tuple(wheels.get("therock_from"))


def torch_wheel_targets(rocm_variant: str | None = None) -> tuple[str, ...] | None:
    """The targets PyTorch's ROCm wheels of ``rocm_variant`` ("rocm7.2") are compiled for; None when unknown.

    Without a variant: the current legacy-image builds (common list plus gfx900/gfx906).  A variant older than
    those the build script in the table covers gives None: what its wheels were built for is not known here.
    """
    common, extra, legacy, therock = _wheel_lists()
    if rocm_variant is None:
        return tuple(sorted(common | extra))
    variant = rocm_variant.strip().lower()
    if not variant.startswith("rocm"):
        variant = "rocm" + variant
    if variant in legacy or any(variant.startswith(v + ".") for v in legacy):
        return tuple(sorted(common | extra))
    wanted = _version_tuple(variant)
    if wanted is not None and therock is not None and wanted[:2] == therock[:2]:
        return tuple(sorted(common))
    return None


def in_torch_wheels(gfx: object, rocm_variant: str | None = None) -> bool | None:
    """Whether PyTorch's ROCm wheels (of ``rocm_variant`` where given) carry code for ``gfx``; None when unknown."""
    target = normalize_gfx(gfx)
    targets = torch_wheel_targets(rocm_variant) if rocm_variant is None or isinstance(rocm_variant, str) else None
    if target is None or targets is None:
        return None
    return target in targets


def _override_rows() -> list[dict[str, Any]]:
    return [row for row in as_list(_data().get("overrides")) if isinstance(row, dict)]


def override_for(gfx: object) -> str | None:
    """The ``HSA_OVERRIDE_GFX_VERSION`` value people use for this target ("10.3.0" for an RDNA2 card that is not
    gfx1030, "11.0.0" for an RDNA3 card that is not gfx1100); None where the table has none (or none is needed)."""
    target = normalize_gfx(gfx)
    family = target_family(target)
    for row in _override_rows():
        if family and row.get("family") == family and row.get("native") != target:
            value = row.get("value")
            return value if isinstance(value, str) else None
    return None


def override_target(value: object) -> str | None:
    """The target an ``HSA_OVERRIDE_GFX_VERSION`` value makes the runtime present: "10.3.0" -> "gfx1030",
    "9.0.10" -> "gfx90a" (the stepping is printed in hex), "9.4.2" -> "gfx942"; None for anything else."""
    if not isinstance(value, str) or len(value) > 32:
        return None
    match = _OVERRIDE.fullmatch(value)
    if match is None:
        return None
    major, minor, stepping = (int(part) for part in match.groups())
    if not 6 <= major <= 19 or minor > 9 or stepping > 15:
        return None
    return f"gfx{major}{minor}{stepping:x}"


def same_family(first: object, second: object) -> bool | None:
    """Whether two targets are of one family (where an override is meant to be used); None when either is
    unknown to the table."""
    a, b = target_family(first), target_family(second)
    if a is None or b is None:
        return None
    return a == b


def source_title(key: str) -> str | None:
    """What a source key of the table refers to."""
    entry = as_dict(as_dict(_data().get("sources")).get(key))
    title = entry.get("title")
    return title if isinstance(title, str) else None
