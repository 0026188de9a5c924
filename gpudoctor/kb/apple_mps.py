"""PyTorch's MPS backend and TensorFlow's Metal plug-in on macOS: what each needs (``data/apple_mps.json``).

The macOS an MPS build needs has risen since launch (12.3 with 1.12, 13.0 by 2.5, 14.0 by 2.10), so the data keeps
(torch, macOS) pairs with their sources and :func:`mps_macos_floor` answers for a release between two pairs with
the older pair's floor, marked not exact ("at least").  Intel Macs get no torch wheel after 2.2.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.versions import release_tuple

DATA_FILE = "apple_mps.json"
_TORCH_RE = re.compile(r"\s*v?(\d{1,3})\.(\d{1,3})(?!\d)")


@dataclass(frozen=True)
class MacosFloor:
    """The macOS release a torch release's MPS backend needs."""

    torch: str  # the torch release of the row ("2.5")
    macos: str  # "13.0"
    exact: bool  # False: the torch asked about lies between two rows, this is the older row's (a lower bound)
    sources: tuple[str, ...]  # source keys of the data file
    next_floor: MacosFloor | None = None  # the next higher pair, when the answer is not exact


@functools.lru_cache(maxsize=1)
def _floors() -> tuple[MacosFloor, ...]:
    rows: list[MacosFloor] = []
    for raw in as_list(_load(DATA_FILE).get("mps_macos_floors")):
        row = as_dict(raw)
        torch, macos = row.get("torch"), row.get("macos")
        if isinstance(torch, str) and isinstance(macos, str) and release_tuple(torch) and release_tuple(macos):
            sources = tuple(s for s in as_list(row.get("sources")) if isinstance(s, str))
            rows.append(MacosFloor(torch, macos, True, sources))
    return tuple(sorted(rows, key=lambda r: release_tuple(r.torch, 2)))


def mps_macos_floor(torch_version: str | None) -> MacosFloor | None:
    """The macOS the MPS backend of ``torch_version`` ("2.5.1", "2.10.0.dev20251008", "2.6.0a0+git1eba9b3") needs.

    None for a torch older than MPS (before 1.12) or a version that does not parse.
    """
    key = _torch_key(torch_version)
    if key is None:
        return None
    floors = _floors()
    below = [f for f in floors if release_tuple(f.torch, 2) <= key]
    if not below:
        return None
    best = below[-1]
    if release_tuple(best.torch, 2) == key:
        return best
    above = [f for f in floors if release_tuple(f.torch, 2) > key]
    return MacosFloor(best.torch, best.macos, False, best.sources, above[0] if above else None)


def _torch_key(version: str | None) -> tuple[int, ...] | None:
    """(major, minor) of a torch version, nightlies and source builds included; None for junk."""
    match = _TORCH_RE.match(version[:100]) if version else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def macos_older_than(version: str | None, floor: str) -> bool | None:
    """Whether macOS ``version`` ("13.7.4") is older than ``floor`` ("14.0"); None when it does not parse."""
    have = release_tuple(version, 3) if version else ()
    need = release_tuple(floor, 3)
    if not have or not need:
        return None
    return have < need


def intel_mac_last_torch() -> tuple[str, tuple[str, ...]] | None:
    """The last torch release with x86_64 macOS wheels ("2.2") and its source keys."""
    row = as_dict(_load(DATA_FILE).get("intel_mac_last_torch"))
    torch = row.get("torch")
    if not isinstance(torch, str):
        return None
    return torch, tuple(s for s in as_list(row.get("sources")) if isinstance(s, str))


def arm64_python_commands() -> tuple[str, ...]:
    """Apple's commands for an arm64 (native) Python on Apple silicon (the Miniconda arm64 installer)."""
    row = as_dict(_load(DATA_FILE).get("arm64_python"))
    return tuple(c for c in as_list(row.get("commands")) if isinstance(c, str))


def tensorflow_metal() -> tuple[str, str] | None:
    """(distribution name, install command) of TensorFlow's Metal plug-in, from Apple's page."""
    row = as_dict(_load(DATA_FILE).get("tensorflow_metal"))
    name, command = row.get("distribution"), row.get("command")
    return (name, command) if isinstance(name, str) and isinstance(command, str) else None


def source_url(key: str) -> str | None:
    """The URL of one source key of the data file."""
    url = as_dict(as_dict(_load(DATA_FILE).get("sources")).get(key)).get("url")
    return url if isinstance(url, str) else None
