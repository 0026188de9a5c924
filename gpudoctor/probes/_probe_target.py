"""The target Python as a probe sees it: the interpreter, its installed distributions, the CUDA libraries it mapped.

Runs inside the target Python (standard library only, Python 3.8).  Distributions are read from their
metadata directories on ``sys.path``: fast, and no ``importlib.metadata`` needed.  Nothing here raises
for a strange environment: what cannot be read is left out.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from collections.abc import Iterable

# CUDA / NVIDIA shared objects worth reporting when mapped into the process (matched on the file name).
_CUDA_LIBRARY = re.compile(
    r"^lib(?:cuda|cudart|cudnn\w*|cublas\w*|nvJitLink|nvrtc\w*|nccl|cusparse\w*|cufft\w*|curand|cusolver\w*"
    r"|cupti|nvToolsExt|nvtx\w*|cudadevrt|nvfatbin|nvjpeg|cufile\w*|nvperf\w*|nvidia-[\w-]+)"
    r"(?:[-.][\w.-]*)?\.so(?:\.[\w.]*)?$"
)


def python_info() -> dict[str, Any]:
    import platform

    info: dict[str, Any] = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "implementation": None,
        "platform": sys.platform,
        "machine": None,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "virtualenv": sys.prefix != getattr(sys, "base_prefix", sys.prefix) or hasattr(sys, "real_prefix"),
        "conda_prefix": None,
    }
    try:
        info["implementation"] = platform.python_implementation()
    except Exception:  # noqa: BLE001 - a probe reports, it does not die
        pass
    try:
        info["machine"] = platform.machine() or None
    except Exception:  # noqa: BLE001
        pass
    # The conda environment this interpreter belongs to, judged by its own prefix (the activated
    # CONDA_PREFIX may name another environment than the Python being probed).
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        info["conda_prefix"] = sys.prefix
    return info


def module_installed(name: str) -> bool:
    """Whether ``import name`` would find something, without importing it (nothing heavy is loaded)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        # ValueError: a module in sys.modules without __spec__; still "there".
        return name in sys.modules


# --- distributions, read from their metadata directories -------------------------------------------------


def normalize_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _metadata_field(text: str | None, field: str) -> str | None:
    for line in (text or "").splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == field.lower():
            return value.strip()
    return None


def _metadata_dirs() -> list[tuple[str, str | None, str]]:
    """(normalised name, version from the dir name, metadata dir) for each dist on sys.path, first one wins."""
    seen: set[str] = set()
    found: list[tuple[str, str | None, str]] = []
    for entry in sys.path:
        directory = entry or os.curdir
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in sorted(names):
            if name.endswith(".dist-info"):
                stem = name[: -len(".dist-info")]
            elif name.endswith(".egg-info"):
                stem = name[: -len(".egg-info")]
            else:
                continue
            dist, _, rest = stem.partition("-")
            version = rest.split("-", 1)[0] or None
            key = normalize_name(dist)
            if key in seen:
                continue
            seen.add(key)
            found.append((key, version, os.path.join(directory, name)))
    return found


_DIST_CACHE: list[list[tuple[str, str | None, str]]] = []


def installed_distributions() -> list[tuple[str, str | None, str]]:
    if not _DIST_CACHE:
        try:
            _DIST_CACHE.append(_metadata_dirs())
        except Exception:  # noqa: BLE001
            _DIST_CACHE.append([])
    return _DIST_CACHE[0]


def _dist_name_version(path: str, fallback_name: str, fallback_version: str | None) -> tuple[str, str | None]:
    meta_file = "METADATA" if path.endswith(".dist-info") else "PKG-INFO"
    text = read_text(os.path.join(path, meta_file)) if os.path.isdir(path) else read_text(path)
    name = _metadata_field(text, "Name") or fallback_name
    version = _metadata_field(text, "Version") or fallback_version
    return name, version


def distributions_matching(predicate: Callable[[str], bool]) -> dict[str, str | None]:
    """{dist name: version} for the installed distributions whose normalised name satisfies ``predicate``."""
    result: dict[str, str | None] = {}
    for key, version, path in installed_distributions():
        try:
            if predicate(key):
                name, found = _dist_name_version(path, key, version)
                result[normalize_name(name)] = found
        except Exception:  # noqa: BLE001
            continue
    return result


def nvidia_packages() -> dict[str, str | None]:
    """The pip ``nvidia-*`` wheels (CUDA runtime, cuDNN, cuBLAS, NCCL...) in the target environment."""
    return distributions_matching(lambda key: key.startswith("nvidia-"))


def _conda_record(names: Iterable[str]) -> dict[str, Any] | None:
    """The conda-meta record of the first of ``names`` installed by conda in this prefix, or None."""
    meta = os.path.join(sys.prefix, "conda-meta")
    try:
        files = os.listdir(meta)
    except OSError:
        return None
    for name in names:
        # <name>-<version>-<build>.json; version and build hold no "-", so "pytorch" never matches
        # "pytorch-cuda-12.1-...".
        pattern = re.compile(re.escape(name) + r"-[^-]+-[^-]+\.json$")
        for file_name in sorted(files):
            if not pattern.match(file_name):
                continue
            try:
                with open(os.path.join(meta, file_name), encoding="utf-8") as handle:
                    record = json.load(handle)
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and record.get("name", name) == name:
                return record
    return None


def _url_without_credentials(url: str) -> str:
    """``url`` with its ``user:password@`` replaced by "REDACTED@" (the marker gpudoctor.evidence.redact uses)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0] or [len(rest)])
    authority = rest[:end]
    if "@" not in authority:
        return url
    return scheme + sep + "REDACTED@" + authority.rpartition("@")[2] + rest[end:]


def _without_credentials(value: Any) -> Any:
    """A direct_url.json record (PEP 610) without the credentials pip keeps in it when an install URL had
    them (``pip install git+https://user:token@host/...``): the probe's record is written to snapshots
    that are meant to be shared, and is never the place for a token."""
    if isinstance(value, str):
        return _url_without_credentials(value)
    if isinstance(value, dict):
        return {key: _without_credentials(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_credentials(item) for item in value]
    return value


def distribution_info(
    candidates: Iterable[str], conda_names: Iterable[str] = (), family: Callable[[str], bool] | None = None
) -> dict[str, Any] | None:
    """Name, version and origin of the distribution that provides a framework.

    ``candidates``: distribution names in order of preference ("tensorflow", "tensorflow-cpu", ...);
    ``family``: a predicate on normalised names for other dists of the same framework, listed under
    ``also_installed`` (two TensorFlow wheels in one environment overwrite each other's files).
    """
    candidates = tuple(candidates)
    dists = {key: (version, path) for key, version, path in installed_distributions()}
    chosen = None
    for candidate in candidates:
        key = normalize_name(candidate)
        if key in dists:
            chosen = key
            break
    conda = None
    try:
        conda = _conda_record(tuple(conda_names) or candidates)
    except Exception:  # noqa: BLE001
        conda = None
    if chosen is None and conda is None:
        return None
    info: dict[str, Any] = {
        "name": None,
        "version": None,
        "installer": None,
        "direct_url": None,
        "conda_channel": None,
        "conda_build": None,
        "also_installed": {},
    }
    if chosen is not None:
        version, path = dists[chosen]
        name, info["version"] = _dist_name_version(path, chosen, version)
        info["name"] = normalize_name(name)  # PEP 503: "tensorflow-cpu", whatever its METADATA spells
        installer = read_text(os.path.join(path, "INSTALLER"))
        info["installer"] = (installer.strip() or None) if installer is not None else None
        direct_url = read_text(os.path.join(path, "direct_url.json"))
        if direct_url:
            try:
                info["direct_url"] = _without_credentials(json.loads(direct_url))
            except ValueError:
                info["direct_url"] = _without_credentials(direct_url.strip())
    if conda is not None:
        info["conda_channel"] = conda.get("channel") or conda.get("schannel")
        info["conda_build"] = conda.get("build")
        if info["name"] is None:
            info["name"], info["version"] = conda.get("name"), conda.get("version")
            info["installer"] = "conda"
    if family is not None:
        in_family = family
        info["also_installed"] = distributions_matching(lambda key: in_family(key) and key != chosen)
    return info


# --- what the process mapped -----------------------------------------------------------------------------


def loaded_libraries() -> list[str]:
    """CUDA-related shared objects mapped into this process, in first-mapped order (Linux only)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    seen: list[str] = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if not path.startswith("/") or path in seen:
            continue
        if _CUDA_LIBRARY.match(os.path.basename(path)):
            seen.append(path)
    return seen
