"""cuDNN installs: versions from headers and library file names, grouped by major version.

Two evidence sources feed it: the ``cudnn.json`` record of ``scan_cudnn``
(headers reduced to their ``#define CUDNN_MAJOR/MINOR/PATCHLEVEL`` lines, and
library paths) and the loader cache (``ldconfig -p``).  cuDNN majors are not
interchangeable (a program linked against libcudnn.so.8 never loads .so.9), so
one :class:`CudnnInstall` per major is the unit checks reason about.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from gpudoctor.facts.model import LoaderCacheEntry

_DEFINE = re.compile(r"^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)\b", re.MULTILINE | re.ASCII)
# "libcudnn.so.8.9.7", "libcudnn_ops_infer.so.8", "libcudnn_graph.so.9", "libcudnn.so".
_LIBRARY = re.compile(r"^libcudnn(?:_[A-Za-z0-9_]+)?\.so(?:\.(?P<version>\d+(?:\.\d+)*))?$", re.ASCII)
_MAX_DIGITS = 6  # longer "versions" are garbage, and int() of huge strings is slow or refused


@dataclass(frozen=True)
class CudnnInstall:
    version: str | None = None  # "8.9.7"; None when only the major is known
    major: int | None = None  # None for files that carry no version ("libcudnn.so" alone)
    header: str | None = None  # the header that gave the version
    libraries: list[str] = field(default_factory=list)


@dataclass
class _InstallBuilder:
    """One major's install while :func:`_group` gathers it; frozen into a :class:`CudnnInstall` at the end."""

    major: int | None = None
    version: str | None = None
    header: str | None = None
    libraries: list[str] = field(default_factory=list)

    def freeze(self) -> CudnnInstall:
        return CudnnInstall(
            version=self.version, major=self.major, header=self.header, libraries=sorted(set(self.libraries))
        )


def _header_version(text: object) -> tuple[int | None, str | None]:
    if not isinstance(text, str):
        return None, None
    values: dict[str, str] = {}
    for match in _DEFINE.finditer(text):
        values.setdefault(match.group(1), match.group(2))
    major = values.get("MAJOR")
    if major is None or len(major) > _MAX_DIGITS:
        return None, None
    parts = [major]
    for key in ("MINOR", "PATCHLEVEL"):
        if key not in values or len(values[key]) > _MAX_DIGITS:
            break
        parts.append(values[key])
    return int(major), ".".join(str(int(part)) for part in parts)


def _library_version(path: str) -> tuple[int | None, str | None]:
    """(major, full version when the name has three parts) from a library file name."""
    match = _LIBRARY.match(os.path.basename(path))
    if not match or not match.group("version"):
        return None, None
    parts = match.group("version").split(".")
    if any(len(part) > _MAX_DIGITS for part in parts):
        return None, None
    full = ".".join(parts[:3]) if len(parts) >= 3 else None
    return int(parts[0]), full


def _group(headers: list[tuple[str, int, str]], libraries: list[str]) -> list[CudnnInstall]:
    by_major: dict[int | None, _InstallBuilder] = {}
    versioned_libraries: dict[int, list[str]] = {}
    unversioned: list[str] = []
    for path in libraries:
        major, full = _library_version(path)
        if major is None:
            unversioned.append(path)
            continue
        install = by_major.setdefault(major, _InstallBuilder(major=major))
        install.libraries.append(path)
        if full:
            versioned_libraries.setdefault(major, []).append(full)
    for path, major, version in headers:
        install = by_major.setdefault(major, _InstallBuilder(major=major))
        library_versions = versioned_libraries.get(major, [])
        # With two headers of one major (say /usr/include and a toolkit's include
        # dir), believe the one the library files agree with.
        if install.header is None or (version in library_versions and install.version not in library_versions):
            install.header, install.version = path, version
    for major, versions in versioned_libraries.items():
        install = by_major[major]
        if install.version is None:
            install.version = versions[0]
    if unversioned:
        # A bare "libcudnn.so" (the dev symlink) belongs to the one major there is;
        # with several, which one it points at is unknown.
        if len(by_major) == 1:
            next(iter(by_major.values())).libraries.extend(unversioned)
        else:
            by_major.setdefault(None, _InstallBuilder()).libraries.extend(unversioned)
    installs = [install.freeze() for install in by_major.values()]
    return sorted(installs, key=lambda install: (install.major is None, install.major or 0))


def parse_cudnn(data: object) -> list[CudnnInstall]:
    """The cuDNN installs of a ``scan_cudnn`` record, one per major version, lowest first.

    Headers without the version defines (``cudnn.h`` of cuDNN 8+ keeps them in
    ``cudnn_version.h``) are ignored.
    """
    if not isinstance(data, dict):
        return []
    headers: list[tuple[str, int, str]] = []
    raw_headers = data.get("headers")
    if isinstance(raw_headers, dict):
        for path in sorted(key for key in raw_headers if isinstance(key, str)):
            major, version = _header_version(raw_headers[path])
            if major is not None and version is not None:
                headers.append((path, major, version))
    raw_libraries = data.get("libraries")
    libraries = (
        [path for path in raw_libraries if isinstance(path, str) and path] if isinstance(raw_libraries, list) else []
    )
    return _group(headers, libraries)


def cudnn_from_ldconfig(entries: object) -> list[CudnnInstall]:
    """The cuDNN installs the loader cache knows of, one per major version.

    The cache lists sonames ("libcudnn.so.8"), so ``version`` is usually
    ``None`` here; the header scan says the rest.
    """
    if not isinstance(entries, (list, tuple)):
        return []
    paths = []
    for entry in entries:
        if not isinstance(entry, LoaderCacheEntry) or not isinstance(entry.soname, str):
            continue
        if _LIBRARY.match(entry.soname) and isinstance(entry.path, str) and entry.path:
            # Group by the soname, not the path: the path is the link the cache
            # resolved, and its file name is the soname anyway.
            paths.append((entry.soname, entry.path))
    installs = _group([], [soname for soname, _ in paths])
    by_soname: dict[str, list[str]] = {}
    for soname, path in paths:
        by_soname.setdefault(soname, []).append(path)
    # _group saw sonames; each install lists the paths the cache resolved them to.
    return [
        replace(
            install,
            libraries=sorted({path for soname in install.libraries for path in by_soname.get(soname, [])}),
        )
        for install in installs
    ]
