"""The driver's user-space libraries (the ``driver-libraries.json`` evidence of ``scan_driver_libraries``).

libnvidia-ml and libcuda come with the driver; the versioned file each name
resolves to ("libnvidia-ml.so.535.309.01") says which driver installed it.  Two
versions side by side, or one that differs from the kernel module, is the
classic "Driver/library version mismatch".  The parser takes the
already-decoded JSON and accepts any value.
"""

from __future__ import annotations

import os
import re

DRIVER_LIBRARY_STEMS = ("libnvidia-ml", "libcuda")
# A driver version has a major of three or more digits ("535.309.01", "418.56").
# That rule keeps out the names that are not driver versions: WSL's and Jetson's
# "libcuda.so.1.1", and the soname "libcuda.so.1" of a file that is no symlink.
_DRIVER_VERSION = r"\d{3,4}\.\d{1,4}(?:\.\d{1,4})?"


def _version_of(stem: str, path: str) -> str | None:
    match = re.fullmatch(rf"{re.escape(stem)}\.so\.({_DRIVER_VERSION})", os.path.basename(path), re.ASCII)
    return match.group(1) if match else None


def _read(data: object) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    versions: dict[str, list[str]] = {stem: [] for stem in DRIVER_LIBRARY_STEMS}
    paths: dict[str, dict[str, str]] = {stem: {} for stem in DRIVER_LIBRARY_STEMS}
    if not isinstance(data, dict):
        return versions, paths
    for stem, records in data.items():
        if not isinstance(stem, str) or stem == "paths" or not isinstance(records, list):
            continue
        found_versions = versions.setdefault(stem, [])
        found = paths.setdefault(stem, {})
        for record in records:
            if not isinstance(record, dict):
                continue
            path = record.get("path")
            realpath = record.get("realpath")
            if not isinstance(path, str) or not path:
                continue
            realpath = realpath if isinstance(realpath, str) and realpath else path
            found.setdefault(path, realpath)
            # The target's name decides; the link's own name ("libcuda.so.1") is
            # only a fallback, for a record without a realpath.
            version = _version_of(stem, realpath) or _version_of(stem, path)
            if version and version not in found_versions:
                found_versions.append(version)
    return versions, paths


def parse_driver_libraries(data: object) -> dict[str, list[str]]:
    """Driver versions per library: ``{"libnvidia-ml": [versions], "libcuda": [versions]}``.

    Versions are unique, in the order found (the scanner walks the loader's usual directories first);
    other library stems in the record get keys too.  An unreadable record gives empty lists.
    """
    return _read(data)[0]


def parse_driver_library_paths(data: object) -> dict[str, dict[str, str]]:
    """The files behind those versions: ``{"libnvidia-ml": {path: realpath}, "libcuda": {...}}``."""
    return _read(data)[1]
