"""docker_cuda.json from table 5 of the reference: one row per exact CUDA release of the nvidia/cuda images, its OS
and flavor tokens, "published" where NVIDIA's tag list or the Docker Hub scrape names it, "secondary" otherwise;
the OSes without cuDNN images (``DOCKER_NO_CUDNN_OS``) and tags seen pinned in public files (``DOCKER_SEEN``) were
checked separately and carry their own source."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import merge, release_key, split_keys
from kbtools.sources import collect_sources, flag_secondary, header

DOCKER_FILE = "docker_cuda.json"
# Sources of the image table that the reference describes without the URL of the original document.
DOCKER_SOURCE_URLS: dict[str, str | None] = {
    "DOCK_TAGS": "https://gitlab.com/nvidia/container-images/cuda/-/blob/master/doc/supported-tags.md",
    "DOCK_COG": "https://github.com/replicate/cog/blob/main/pkg/config/cuda_compatibility.json",
    "DOCK_SEC": None,
    "DOCK_POLICY_ISSUES": None,
}
DOCKER_EXTRA_SOURCES: dict[str, dict[str, Any]] = {
    "DOCK_PINS": {
        "title": (
            "Secondary: nvidia/cuda tags pinned (FROM lines, build args, docs) in public GitHub files, found with a "
            "code-search index on 2026-11-22; a tag listed under a row's 'also_seen' was seen at least once, which "
            "shows it existed, not that NVIDIA still publishes it"
        ),
        "url": None,
        "secondary": True,
    },
}
DOCKER_REREAD = (
    " [Re-read 2026-11-22 in the fork's doc/supported-tags.md (a snapshot whose newest CUDA is 13.0.1): no "
    "cuDNN tag exists for amzn2023, azl3 or cm2 in any CUDA version; 12.5.1 on ubuntu24.04 has no cuDNN tag.]"
)
# OSes NVIDIA builds no cuDNN image for (re-read of DOCK_TAGS above), whatever a row's flavor text says.
DOCKER_NO_CUDNN_OS = frozenset({"amzn2023", "azl3", "cm2"})
# Tags seen pinned in public files (source DOCK_PINS) beyond what the reference lists as published.
DOCKER_SEEN: dict[str, list[str]] = {
    "13.2.1": [
        "13.2.1-runtime-ubuntu24.04",
        "13.2.1-devel-ubuntu24.04",
        "13.2.1-cudnn-runtime-ubuntu24.04",
        "13.2.1-base-ubuntu24.04",
    ],
    "13.1.2": [
        "13.1.2-base-ubuntu24.04",
        "13.1.2-runtime-ubuntu24.04",
        "13.1.2-devel-ubuntu24.04",
        "13.1.2-devel-ubuntu22.04",
    ],
    "13.1.1": ["13.1.1-runtime-ubuntu24.04", "13.1.1-devel-ubuntu24.04"],
    "13.0.3": [
        "13.0.3-base-ubuntu24.04",
        "13.0.3-runtime-ubuntu24.04",
        "13.0.3-devel-ubuntu24.04",
        "13.0.3-cudnn-runtime-ubuntu24.04",
        "13.0.3-cudnn-devel-ubuntu24.04",
        "13.0.3-cudnn-devel-ubuntu22.04",
    ],
    "12.9.2": [
        "12.9.2-base-ubuntu24.04",
        "12.9.2-runtime-ubuntu24.04",
        "12.9.2-devel-ubuntu24.04",
        "12.9.2-base-ubuntu22.04",
    ],
}
_DOCKER_VERSION_RE = re.compile(r"\d+\.\d+\.\d+")
_DOCKER_OS_RE = re.compile(r"([a-z]+)(\d+(?:\.\d+)?)((?:/\d+(?:\.\d+)?)*)")
_DOCKER_PLAIN_FLAVORS = ("base", "runtime", "devel")
# Sources that list NVIDIA's own tags (published); DOCK_COG scraped only names containing "devel-ubuntu".
_DOCKER_TAG_SOURCES = ("DOCK_TAGS",)
_DOCKER_DEVEL_SCRAPE = ("DOCK_COG",)


def _docker_os(entries: list[str]) -> tuple[list[str], set[str], dict[str, list[str]]]:
    """["ubi7/8/9", "ubuntu24.04 (no cudnn)", "ubuntu22.04 (12.0.1 also ubuntu18.04)"] ->
    (os tokens, tokens without cuDNN images, {version: extra tokens})."""
    tokens: list[str] = []
    no_cudnn: set[str] = set()
    extra: dict[str, list[str]] = {}
    for entry in entries:
        head, _, rest = str(entry).partition("(")
        match = _DOCKER_OS_RE.fullmatch(head.strip())
        if not match:
            raise ValueError(f"table5 OS entry not understood: {entry!r}")
        name, first, more = match.groups()
        names = [name + first] + [name + part for part in more.split("/") if part]
        tokens = merge(tokens, names)
        remark = rest.rstrip(")").strip()
        if remark == "no cudnn":
            no_cudnn.update(names)
        elif re.fullmatch(r"\d+\.\d+\.\d+ also [a-z]+\d+(?:\.\d+)?", remark):
            version, _, os_token = remark.partition(" also ")
            extra.setdefault(version, []).append(os_token)
        elif remark:
            raise ValueError(f"table5 OS remark not understood: {entry!r}")
    return tokens, no_cudnn, extra


def _docker_flavors(entries: list[str]) -> tuple[list[str], str | None, set[str], list[str] | None]:
    """["base", "cudnn-* (not on amzn2023/azl3)"] -> (flavor tokens, cuDNN token, OSes without cuDNN,
    the only OSes with cuDNN or None)."""
    flavors: list[str] = []
    token: str | None = None
    no_cudnn: set[str] = set()
    only: list[str] | None = None
    for entry in entries:
        head, _, rest = str(entry).partition("(")
        head, remark = head.strip(), rest.rstrip(")").strip()
        match = re.fullmatch(r"(cudnn\d?)-(\*|runtime|devel)", head)
        if head in _DOCKER_PLAIN_FLAVORS:
            flavors.append(head)
        elif match:
            token = match.group(1)
            kinds = ("runtime", "devel") if match.group(2) == "*" else (match.group(2),)
            flavors.extend(f"{token}-{kind}" for kind in kinds)
        else:
            raise ValueError(f"table5 flavor entry not understood: {entry!r}")
        if remark.startswith("not on "):
            no_cudnn.update(part for part in remark[len("not on ") :].split("/") if part)
        elif re.fullmatch(r"[a-z]+\d+(?:\.\d+)?(?:, ?[a-z]+\d+(?:\.\d+)?)*", remark):
            only = [part.strip() for part in remark.split(",")]
        elif remark:
            raise ValueError(f"table5 flavor remark not understood: {entry!r}")
    return flavors, token, no_cudnn, only


def _docker_versions(text: str) -> tuple[list[str], list[str]]:
    """ "13.0.2 (13.0.0/13.0.1/13.0.3 also seen)" -> (["13.0.2"], ["13.0.0", "13.0.1", "13.0.3"])."""
    head, _, rest = text.partition("(")
    return _DOCKER_VERSION_RE.findall(head), _DOCKER_VERSION_RE.findall(rest)


def _docker_row(version: str, raw: dict[str, Any], sources: dict[str, Any]) -> dict[str, Any]:
    keys = split_keys(raw.get("source"))
    os_tokens, no_cudnn_os, extra_os = _docker_os(list(raw.get("os") or []))
    os_tokens = merge(os_tokens, extra_os.get(version, []))
    flavors, token, no_cudnn_flavor, only = _docker_flavors(list(raw.get("flavors") or []))
    no_cudnn = no_cudnn_os | no_cudnn_flavor | (DOCKER_NO_CUDNN_OS & set(os_tokens))
    if only is not None:
        no_cudnn |= set(os_tokens) - set(only)
    plain = [f for f in flavors if f in _DOCKER_PLAIN_FLAVORS]
    by_os = {os: plain for os in os_tokens if os in no_cudnn and plain != flavors}
    published = any(key in _DOCKER_TAG_SOURCES for key in keys)
    scraped = any(key in _DOCKER_DEVEL_SCRAPE for key in keys)
    also_seen = []
    if not published and scraped:
        # The Docker Hub scrape saw only "*devel-ubuntu*" names: the other flavors stay secondary.
        seen = [f"{version}-{f}-{os}" for os in os_tokens for f in by_os.get(os, flavors) if not f.endswith("devel")]
        flavors = [f for f in flavors if f.endswith("devel")]
        by_os = {os: [f for f in fl if f.endswith("devel")] for os, fl in by_os.items()}
        also_seen = seen
        published = True
    note = raw.get("note")
    row: dict[str, Any] = {
        "cuda": version,
        "os": os_tokens,
        "flavors": flavors,
        "flavors_by_os": by_os,
        "cudnn": token if any(f.startswith("cudnn") for f in flavors) else None,
        "confidence": "published" if published else "secondary",
        "eol": version.startswith("11."),
        "sources": [key for key in keys if key in sources],
        "note": note,
        "also_seen": {"tags": also_seen, "sources": [k for k in keys if sources.get(k, {}).get("secondary")]}
        if also_seen
        else None,
    }
    return row


def build_docker_cuda(reference: dict[str, Any]) -> dict[str, Any]:
    """docker_cuda.json: one row per exact CUDA release of the nvidia/cuda images (table 5)."""
    table = reference["table5_docker_nvidia_cuda"]
    used: list[str] = []
    for raw in table.get("tags", []):
        used = merge(used, split_keys(raw.get("source")))
    used = merge(used, split_keys(table.get("source")))
    sources = collect_sources(reference, used)
    for key, url in DOCKER_SOURCE_URLS.items():
        if key in sources:
            sources[key]["url"] = url
    if "DOCK_TAGS" in sources:
        sources["DOCK_TAGS"]["title"] += DOCKER_REREAD
    sources.update({key: dict(value) for key, value in DOCKER_EXTRA_SOURCES.items()})
    rows: dict[str, dict[str, Any]] = {}
    for raw in table.get("tags", []):
        versions, seen_versions = _docker_versions(str(raw.get("cuda")))
        if not versions:
            raise ValueError(f"table5 row without an exact CUDA version: {raw.get('cuda')!r}")
        for version in versions:
            rows[version] = _docker_row(version, raw, sources)
            newer = [
                v
                for v in versions
                if v.split(".")[:2] == version.split(".")[:2] and release_key(v) > release_key(version)
            ]
            if newer:  # "13.1.2 / 13.1.1": the older update of the same minor is superseded
                rows[version]["note"] = _join_note(
                    rows[version]["note"], f"superseded by {newer[0]} (only the newest update is supported)"
                )
        for version in seen_versions:
            if version in DOCKER_SEEN and version not in rows:
                rows[version] = _seen_row(version, versions[0])
    for version, tags in DOCKER_SEEN.items():
        row = rows.get(version) or _seen_row(version, None)
        rows[version] = row
        if row["confidence"] == "published":
            seen = row["also_seen"] or {"tags": [], "sources": []}
            seen["tags"] = merge(seen["tags"], [t for t in tags if t not in _row_tags(row)])
            seen["sources"] = merge(seen["sources"], ["DOCK_PINS"])
            row["also_seen"] = seen
    ordered = sorted(rows.values(), key=lambda row: release_key(row["cuda"]), reverse=True)
    for row in ordered:
        flag_secondary(row, sources)
    return {
        **header(reference, "table5_docker_nvidia_cuda", str(table.get("as_of"))),
        "naming_scheme": table.get("naming_scheme"),
        "eol_policy": table.get("eol_policy"),
        "nvidia_require_cuda": table.get("nvidia_require_cuda"),
        "policy_sources": split_keys(table.get("source")),
        "sources": sources,
        "rows": ordered,
    }


def _join_note(note: object, more: str) -> str:
    return f"{note} {more}" if isinstance(note, str) and note else more


def _row_tags(row: dict[str, Any]) -> list[str]:
    by_os = row.get("flavors_by_os") or {}
    return [f"{row['cuda']}-{f}-{os}" for os in row["os"] for f in by_os.get(os, row["flavors"])]


def _seen_row(version: str, superseded_by: str | None) -> dict[str, Any]:
    """A release seen only pinned in public files (DOCK_PINS): its tags as seen, all secondary."""
    tags = DOCKER_SEEN[version]
    os_tokens: list[str] = []
    flavors: list[str] = []
    for tag in tags:
        rest = tag[len(version) + 1 :]
        flavor, _, os = rest.rpartition("-")
        os_tokens, flavors = merge(os_tokens, [os]), merge(flavors, [flavor])
    by_os = {}
    for os in os_tokens:
        here = [f for f in flavors if f"{version}-{f}-{os}" in tags]
        if here != flavors:
            by_os[os] = here
    note = "Seen only pinned in public files; NVIDIA's tag list was not checked for it."
    if superseded_by:
        note += f" The reference lists it beside {superseded_by} as 'also seen'."
    return {
        "cuda": version,
        "os": os_tokens,
        "flavors": flavors,
        "flavors_by_os": by_os,
        "cudnn": "cudnn" if any(f.startswith("cudnn") for f in flavors) else None,
        "confidence": "secondary",
        "eol": False,
        "sources": ["DOCK_PINS"],
        "note": note,
        "also_seen": None,
    }
