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
    info = NvccInfo()
    if not isinstance(text, str):
        return info
    for line in text.splitlines():
        if info.release is None and "compilation tools" in line:
            release = _RELEASE.search(line)
            version = _VERSION.search(line)
            info.release = release.group(1) if release else None
            info.version = version.group(1) if version else None
            continue
        if info.build is None:
            build = _BUILD.match(line)
            if build:
                info.build = build.group(1)
    return info
