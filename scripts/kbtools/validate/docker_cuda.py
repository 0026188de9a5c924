"""docker_cuda.json (the nvidia/cuda image tags): one row per exact release, newest first, flavor and OS tokens
well-formed, cuDNN flavors spelled with the row's cuDNN token, confidence published or secondary."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import release_key
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import table_rows

DOCKER_FILE = "docker_cuda.json"
DOCKER_FLAVOR_RE = re.compile(r"(?:(cudnn\d?)-)?(base|runtime|devel)")
DOCKER_OS_RE = re.compile(r"[a-z]+\d+(?:\.\d+)?")
DOCKER_TAG_RE = re.compile(r"(\d+\.\d+\.\d+)-(?:(cudnn\d?)-)?(base|runtime|devel)-([a-z]+\d+(?:\.\d+)?)")


def check_docker_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    """nvidia/cuda tags: one row per exact x.y.z release, newest first; OS and flavor tokens well-formed; the
    cuDNN flavors use the row's cuDNN token; per-OS flavor lists are subsets; confidence published/secondary;
    every 'also_seen' tag parses and is sourced."""
    name = DOCKER_FILE
    sources = check_header(name, data, errors)
    rows = table_rows(name, data, "rows", errors)
    seen: set[str] = set()
    previous: tuple[int, ...] | None = None
    published = 0
    for row in rows:
        cuda = row.get("cuda")
        where = f"{name} {cuda}"
        check_sources(where, row, sources, errors)
        if not (isinstance(cuda, str) and re.fullmatch(r"\d+\.\d+\.\d+", cuda)):
            errors.append(f"{where}: 'cuda' is not an exact x.y.z release")
            continue
        if cuda in seen:
            errors.append(f"{where}: duplicate release")
        seen.add(cuda)
        key = release_key(cuda)
        if previous is not None and key >= previous:
            errors.append(f"{where}: rows are not newest first")
        previous = key
        if row.get("confidence") not in ("published", "secondary"):
            errors.append(f"{where}: confidence must be 'published' or 'secondary'")
        published += row.get("confidence") == "published"
        os_list, flavors = row.get("os"), row.get("flavors")
        if not (
            isinstance(os_list, list)
            and os_list
            and all(isinstance(o, str) and DOCKER_OS_RE.fullmatch(o) for o in os_list)
        ):
            errors.append(f"{where}: 'os' must be a non-empty list of tokens like ubuntu24.04")
            os_list = []
        if not (isinstance(flavors, list) and flavors and all(isinstance(f, str) for f in flavors)):
            errors.append(f"{where}: 'flavors' must be a non-empty list")
            flavors = []
        token = row.get("cudnn")
        by_os: dict[str, Any] = row["flavors_by_os"] if isinstance(row.get("flavors_by_os"), dict) else {}
        all_flavors = list(flavors) + [f for fl in by_os.values() if isinstance(fl, list) for f in fl]
        for flavor in all_flavors:
            match = DOCKER_FLAVOR_RE.fullmatch(str(flavor))
            if not match or (match.group(1) and match.group(2) == "base"):
                errors.append(f"{where}: flavor {flavor!r} is not base/runtime/devel or cudnnN-runtime/devel")
            elif match.group(1) and match.group(1) != token:
                errors.append(f"{where}: flavor {flavor!r} does not use the row's cuDNN token {token!r}")
        if token is not None and not any(str(f).startswith(str(token)) for f in all_flavors):
            errors.append(f"{where}: cuDNN token {token!r} but no cuDNN flavor")
        for os, fl in by_os.items():
            if os not in os_list or not isinstance(fl, list) or not set(fl) <= set(flavors):
                errors.append(f"{where}: flavors_by_os[{os!r}] must name a listed OS and a subset of 'flavors'")
        also = row.get("also_seen")
        if also is not None:
            if not isinstance(also, dict):
                errors.append(f"{where}: 'also_seen' must be an object or null")
                continue
            # Tags seen beside a published row are secondary by definition: check the keys, not the note.
            check_sources(f"{where} also_seen", {**also, "note": "secondary"}, sources, errors)
            for tag in also.get("tags") or []:
                match = DOCKER_TAG_RE.fullmatch(str(tag))
                if not match or match.group(1) != cuda:
                    errors.append(f"{where}: also_seen tag {tag!r} does not parse as a {cuda} tag")
    for key in data.get("policy_sources") or []:
        if key not in sources:
            errors.append(f"{name}: policy source {key!r} unknown")
    return {"cuda_releases": len(rows), "published": published}
