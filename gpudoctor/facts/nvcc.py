"""``nvcc --version``: which CUDA toolkit compiler is first on PATH.

A pure parser.  It reads the "Cuda compilation tools" line wherever it sits, so a
pasted prompt line or a Windows capture (CRLF, no "Build" line) parses the same;
whatever is missing stays ``None``.
"""

from __future__ import annotations

import re

from gpudoctor.facts.model import NvccInfo

# "Cuda compilation tools, release 12.8, V12.8.93".  The release and the V-number
# are matched separately: collect_env's single regex over the whole line broke on
# 11.0's output, and a line with only one of them still says something.
_RELEASE = re.compile(r"\brelease\s+(\d+\.\d+)", re.ASCII)
_VERSION = re.compile(r"\bV(\d+\.\d+(?:\.\d+)*)", re.ASCII)
# "Build cuda_12.8.r12.8/compiler.35583870_0"; absent from older and Windows builds.
_BUILD = re.compile(r"^\s*Build\s+(\S+)", re.ASCII)


def parse_nvcc_version(text: object) -> NvccInfo:
    """Parse ``nvcc --version`` output; an empty :class:`NvccInfo` when it is not there."""
    if not isinstance(text, str):
        return NvccInfo()
    release: str | None = None
    version: str | None = None
    build: str | None = None
    for line in text.splitlines():
        if release is None and "compilation tools" in line:
            release_match = _RELEASE.search(line)
            version_match = _VERSION.search(line)
            release = release_match.group(1) if release_match else None
            version = version_match.group(1) if version_match else None
            continue
        if build is None:
            build_match = _BUILD.match(line)
            if build_match:
                build = build_match.group(1)
    return NvccInfo(release=release, version=version, build=build)


_TOOLKIT_VERSION = re.compile(r"^\s*V?(?P<version>\d{1,3}\.\d{1,3}(?:\.\d{1,6})?)\b", re.ASCII)


def nvcc_from_version(text: object) -> NvccInfo | None:
    """The nvcc a report named only by its version ("13.0.88", collect_env's "CUDA runtime version"); None when
    the text is not a CUDA version."""
    if not isinstance(text, str):
        return None
    match = _TOOLKIT_VERSION.match(text)
    if match is None:
        return None
    version = match.group("version")
    return NvccInfo(release=".".join(version.split(".")[:2]), version=version)
