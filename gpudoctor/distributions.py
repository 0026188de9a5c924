"""Installed Python distributions, read straight from their ``*.dist-info`` folders.

``importlib.metadata`` answers the same questions but imports email, zipfile and
socket on the way (about 0.1 s on a small machine, more than all of gpudoctor's
evidence collection).  Entry points and a distribution's version and files are
simple text files, so we read them directly.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class EntryPoint:
    name: str
    value: str  # "package.module" or "package.module:attr"
    distribution: str


@dataclass(frozen=True)
class DistInfo:
    name: str
    version: str | None
    path: str  # the .dist-info / .egg-info folder

    def files(self) -> list[str]:
        """Paths listed in RECORD (wheel installs) or installed-files.txt / SOURCES.txt (older forms)."""
        for record in ("RECORD", "installed-files.txt", "SOURCES.txt"):
            text = _read(os.path.join(self.path, record))
            if text is not None:
                return [line.split(",")[0].strip() for line in text.splitlines() if line.strip()]
        return []


def canonical(name: str) -> str:
    """PEP 503 normalisation: 'nvidia_ml_py' and 'nvidia-ml-py' are the same distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _metadata_field(folder: str, field: str) -> str | None:
    text = _read(os.path.join(folder, "METADATA")) or _read(os.path.join(folder, "PKG-INFO")) or ""
    match = re.search(rf"^{field}:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else None


def iter_distributions(paths: list[str] | None = None) -> Iterator[DistInfo]:
    """Each installed distribution once, first on ``sys.path`` wins (as the import system decides)."""
    seen: set[str] = set()
    for entry in paths if paths is not None else sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for folder in names:
            if not folder.endswith((".dist-info", ".egg-info")):
                continue
            full = os.path.join(entry or ".", folder)
            stem = folder.rsplit(".", 1)[0]
            name_part, _, version_part = stem.partition("-")
            name = _metadata_field(full, "Name") if not version_part else name_part
            key = canonical(name or name_part)
            if key in seen:
                continue
            seen.add(key)
            version = version_part.split("-")[0] or _metadata_field(full, "Version")
            yield DistInfo(name=key, version=version or None, path=full)


def entry_points(group: str, paths: list[str] | None = None) -> list[EntryPoint]:
    """Entry points of one group from every distribution's entry_points.txt."""
    found: list[EntryPoint] = []
    for dist in iter_distributions(paths):
        text = _read(os.path.join(dist.path, "entry_points.txt"))
        if not text:
            continue
        section = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                continue
            if section == group and "=" in line:
                name, _, value = line.partition("=")
                found.append(EntryPoint(name.strip(), value.strip(), dist.name))
    return found


def find_distribution(name: str, paths: list[str] | None = None) -> DistInfo | None:
    wanted = canonical(name)
    return next((d for d in iter_distributions(paths) if d.name == wanted), None)
