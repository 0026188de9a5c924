"""CUDA toolkit directories and their versions (the ``cuda-toolkits.json`` evidence of ``scan_cuda_toolkits``).

Toolkits say their version in different places depending on how they were
installed and how old they are; this module reads each place and records which
one answered.  It takes the already-decoded JSON and accepts any value.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from gpudoctor.facts.json_values import json_dict

# "CUDA Version 10.2.89" (version.txt, CUDA <= 11.0).
_VERSION_TXT = re.compile(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)*)", re.ASCII)
# "nvidia_cuda_nvcc-13.0.88.dist-info": the components' own versions; the toolkit
# is their major.minor (13.0.88 and 13.0.96 both belong to toolkit 13.0).
_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>\d+\.\d+(?:\.\d+)*)[^-]*\.dist-info$", re.ASCII)
_CUDART = re.compile(r"^libcudart\.so\.(?P<version>\d+(?:\.\d+)*)$", re.ASCII)
_MAJOR_MINOR = re.compile(r"^(\d+\.\d+)", re.ASCII)
# The dist-info packages, in order of trust: the compiler's is what "the toolkit"
# means to most users; the runtime's is the next best.
_DIST_INFO_ORDER = ("nvidia_cuda_nvcc", "nvidia_cuda_runtime")


@dataclass(frozen=True)
class CudaToolkit:
    path: str  # as found: "/usr/local/cuda", a CUDA_HOME value
    realpath: str | None = None  # "/usr/local/cuda-13.0"
    version: str | None = None  # "13.0.2" (version.json/txt) or "12.8" (dist-info), "13" (cudart only)
    # "version.json", "version.txt", "dist-info", "libcudart"; "nvcc" is left for a
    # caller that fills the version from this toolkit's own nvcc --version.
    version_source: str | None = None
    has_nvcc: bool = False

    @property
    def major(self) -> int | None:
        head = (self.version or "").split(".", 1)[0]
        return int(head) if head.isascii() and head.isdigit() and len(head) < 6 else None


def _from_version_json(text: object) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    version = json_dict(data.get("cuda")).get("version")
    if isinstance(version, str) and _MAJOR_MINOR.match(version):
        return version.strip()
    # Some trimmed installs drop the "cuda" entry; the runtime's major.minor is
    # still the toolkit's (cuda_cudart 12.2.140 ships with 12.2).
    runtime = json_dict(data.get("cuda_cudart")).get("version")
    if isinstance(runtime, str):
        match = _MAJOR_MINOR.match(runtime)
        if match:
            return match.group(1)
    return None


def _from_version_txt(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    match = _VERSION_TXT.search(text)
    return match.group(1) if match else None


def _from_dist_info(names: object) -> str | None:
    if not isinstance(names, list):
        return None
    versions: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str):
            continue
        match = _DIST_INFO.match(name)
        if match:
            versions.setdefault(match.group("name").lower(), match.group("version"))
    for wanted in _DIST_INFO_ORDER:
        if wanted in versions:
            major_minor = _MAJOR_MINOR.match(versions[wanted])
            if major_minor:
                return major_minor.group(1)
    return None


def _from_cudart(names: object) -> str | None:
    """The toolkit version that libcudart file names imply, as precisely as they allow.

    Up to CUDA 10 the soname carried major.minor ("libcudart.so.10.2"); from 11
    on every minor release shares "libcudart.so.11.0" / "libcudart.so.12", so a
    two-part 11+ name only tells the major.  A three-part file name
    ("libcudart.so.11.8.89") tells major.minor.
    """
    if not isinstance(names, list):
        return None
    best: list[str] = []
    for name in names:
        if not isinstance(name, str):
            continue
        match = _CUDART.match(os.path.basename(name))
        if match:
            parts = match.group("version").split(".")
            if len(parts) > len(best):
                best = parts
    if not best or len(best[0]) > 5:
        return None
    if len(best) >= 3:
        return ".".join(best[:2])
    if len(best) == 2 and int(best[0]) <= 10:
        return ".".join(best)
    return best[0]


def _toolkit(raw: object) -> CudaToolkit | None:
    record = json_dict(raw)
    path, realpath = record.get("path"), record.get("realpath")
    if not isinstance(path, str) or not path:
        return None
    version: str | None = None
    version_source: str | None = None
    for source, reader, key in (
        ("version.json", _from_version_json, "version.json"),
        ("version.txt", _from_version_txt, "version.txt"),
        ("dist-info", _from_dist_info, "dist_info"),
        ("libcudart", _from_cudart, "cudart"),
    ):
        found = reader(record.get(key))
        if found:
            version, version_source = found, source
            break
    return CudaToolkit(
        path=path,
        realpath=realpath if isinstance(realpath, str) and realpath else None,
        version=version,
        version_source=version_source,
        has_nvcc=record.get("nvcc") is True,
    )


def _inside(path: str, parent: str) -> bool:
    return path != parent and path.startswith(parent.rstrip("/") + "/")


def parse_cuda_toolkits(data: object) -> list[CudaToolkit]:
    """The toolkits of a ``scan_cuda_toolkits`` record (``{"toolkits": [...]}``, or the bare list).

    A directory that lies inside another toolkit found in the same scan (the
    scanner's ``/usr/local/cuda/*-*`` pattern matches ``/usr/local/cuda/dist-info``)
    is part of that toolkit, not a toolkit of its own, and is dropped.
    """
    records = data.get("toolkits") if isinstance(data, dict) else data
    if not isinstance(records, list):
        return []
    toolkits = [toolkit for toolkit in map(_toolkit, records) if toolkit is not None]
    roots = [toolkit.realpath or toolkit.path for toolkit in toolkits]
    return [
        toolkit for toolkit in toolkits if not any(_inside(toolkit.realpath or toolkit.path, root) for root in roots)
    ]


def parse_toolkit_links(data: object) -> dict[str, str]:
    """The symlinks among the toolkit paths (``/usr/local/cuda`` -> ``/usr/local/cuda-13.0``)."""
    links = data.get("links") if isinstance(data, dict) else None
    if not isinstance(links, dict):
        return {}
    return {
        link: target
        for link, target in links.items()
        if isinstance(link, str) and isinstance(target, str) and link and target
    }
