"""Every generated data file starts with the same header and keeps a ``sources`` map that each row's source keys
point into.  This module is the one place that writes them (from the reference's source descriptions) and the one
place that checks them (in any data file, generated or hand-edited)."""

from __future__ import annotations

import re
from typing import Any

# --------------------------------------------------------------------------- writing: what the reference lacks

# Sources added here, for data verified outside the reference.
EXTRA_SOURCES: dict[str, dict[str, Any]] = {
    "P_PYPI": {
        "title": (
            "PyPI JSON API (https://pypi.org/pypi/torch/json, /tensorflow/json, /nvidia-cudnn-cu13/json), read "
            "2026-11-25: each version's files and upload times, requires_python, and the newest torch wheel's "
            "requires_dist pins (the CUDA toolkit, cuDNN and NCCL its Linux wheels install)"
        ),
        "url": "https://pypi.org/pypi/torch/json",
        "secondary": False,
    },
    "P_WINWHL": {
        "title": (
            "Secondary: download.pytorch.org win_amd64 wheel URLs (torch-X.Y.Z+cuXYZ-cpNN-cpNN-win_amd64.whl) named "
            "in public GitHub files (install scripts, lock files, pip logs), found with a code-search index on "
            "2026-11-22; a release x variant is marked as having a Windows wheel only where such a URL was seen"
        ),
        "url": None,
        "secondary": True,
    },
}

# Original documents of reference sources whose description names a repository path but no URL
# (None: the description's only URL is not one a browser can open).
SOURCE_URLS: dict[str, str | None] = {
    "P_GEN": None,
    "P_TI": "https://github.com/pytorch/test-infra/blob/main/tools/scripts/generate_binary_build_matrix.py",
    "P_REL": "https://github.com/pytorch/pytorch/blob/main/RELEASE.md",
    "P_BCUDA": "https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh",
    "P_ISSUES": "https://github.com/pytorch/pytorch/pull/147607",
    "TF_SRC": "https://www.tensorflow.org/install/source",
    "TF_PIP": "https://www.tensorflow.org/install/pip",
    "MLENG": "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md",
}

# What re-reading a reference source showed, appended to its title.
SOURCE_REREAD: dict[str, str] = {
    "P_WIN": (
        " [Re-read 2026-11-22 in a GitHub copy of .ci/pytorch/windows/build_env_setup.py: the same five rows, "
        "'kept in sync with the CUDA_ARCH_LIST values in .ci/pytorch/windows/internal/cuda_config.bat'.]"
    ),
}

_URL_RE = re.compile(r"https://[^\s;,)]+")


def source_entry(key: str, text: str) -> dict[str, Any]:
    """One reference source description as a file's source: title, URL of the original, secondary or not."""
    lowered = text.lower()
    secondary = lowered.startswith(("secondary", "third-party")) or "a github copy" in lowered
    if key in SOURCE_URLS:
        url = SOURCE_URLS[key]
    else:
        match = _URL_RE.search(text)
        url = match.group(0).rstrip(".") if match else None
    return {"title": text + SOURCE_REREAD.get(key, ""), "url": url, "secondary": secondary}


def collect_sources(reference: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """The ``sources`` map of a generated file: each key's description, in the order the rows used them."""
    meta = reference.get("_meta", {}).get("sources", {})
    out: dict[str, Any] = {}
    for key in keys:
        if key in EXTRA_SOURCES:
            out[key] = dict(EXTRA_SOURCES[key])
        elif isinstance(meta.get(key), str):
            out[key] = source_entry(key, meta[key])
    return out


def flag_secondary(row: dict[str, Any], sources: dict[str, Any], key: str = "sources") -> None:
    """A row whose sources are all secondary copies says so in its note (``check_sources`` insists)."""
    keys = row.get(key) or []
    if keys and all(sources.get(k, {}).get("secondary") for k in keys):
        note = row.get("note") or ""
        if "secondary" not in note.lower():
            row["note"] = (note + " " if note else "") + "Every source of this row is a secondary copy."


def header(reference: dict[str, Any], table_name: str, coverage: str) -> dict[str, Any]:
    """The keys every generated file starts with: how current, what it covers, where it came from."""
    generated = reference.get("_meta", {}).get("generated")
    return {
        "as_of": generated,
        "coverage": coverage,
        "compiled_from": (
            f"shared/reference/compat.json {table_name} (generated {generated}) by "
            "scripts/kb_refresh.py; every row keeps the reference's source keys"
        ),
    }


# --------------------------------------------------------------------------- checking


def check_header(name: str, data: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    """The file's ``as_of`` and ``sources`` are there and well-formed; returns the sources (empty when unusable)."""
    if not isinstance(data.get("as_of"), str) or not data.get("as_of"):
        errors.append(f"{name}: 'as_of' missing")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        errors.append(f"{name}: 'sources' missing or empty")
        return {}
    for key, source in sources.items():
        if not isinstance(source, dict) or not isinstance(source.get("title"), str) or not source["title"]:
            errors.append(f"{name}: source {key!r} has no title")
            continue
        url = source.get("url")
        if url is not None and not (isinstance(url, str) and url.startswith("https://")):
            errors.append(f"{name}: source {key!r} url is not an https URL: {url!r}")
        if not isinstance(source.get("secondary", False), bool):
            errors.append(f"{name}: source {key!r} 'secondary' is not true/false")
    return sources


def check_sources(where: str, row: dict[str, Any], sources: dict[str, Any], errors: list[str]) -> None:
    """The row has sources, each one known; all-secondary sources are admitted in the note."""
    keys = row.get("sources")
    if not isinstance(keys, list) or not keys:
        errors.append(f"{where}: no sources")
        return
    unknown = [key for key in keys if key not in sources]
    if unknown:
        errors.append(f"{where}: unknown source key(s) {unknown}")
        return
    if all(isinstance(sources[key], dict) and sources[key].get("secondary") for key in keys):
        note = row.get("note")
        if not (isinstance(note, str) and "secondary" in note.lower()):
            errors.append(f"{where}: every source is secondary but the note does not say so")


def check_key_list(
    where: str, row: dict[str, Any], key: str, sources: dict[str, Any], errors: list[str], required: bool
) -> None:
    """A secondary list of source keys (``arch_sources``, ``windows_sources``, ...) names known sources."""
    keys = row.get(key)
    if keys in (None, []):
        if required:
            errors.append(f"{where}: {key} missing")
        return
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        errors.append(f"{where}: {key} is not a list of source keys")
        return
    unknown = [k for k in keys if k not in sources]
    if unknown:
        errors.append(f"{where}: unknown source key(s) {unknown} in {key}")
