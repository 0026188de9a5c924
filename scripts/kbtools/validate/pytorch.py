"""pytorch.json: releases unique and newest first, each variant's CUDA consistent with its cuXYZ tag, cuDNN pins,
arch lists that parse and carry their sources, Windows columns, the PyPI default one of the release's variants."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor import kb
from kbtools.common import release_key
from kbtools.sources import check_header, check_key_list, check_sources
from kbtools.validate.common import python_range, table_rows

TORCH_FILE = "pytorch.json"
RELEASE_RE = re.compile(r"\d{1,2}\.\d{1,3}")
TAG_RE = re.compile(r"cu(\d{2,3})")
ARCH_ENTRY_RE = re.compile(r"\d{1,2}\.\d(\+PTX)?")
CUDNN_PIN_RE = re.compile(r"\d+\.\d+\.\d+\.\d+")


def arch_entries(where: str, values: object, errors: list[str]) -> None:
    if values is None:
        return
    if not isinstance(values, list) or not values:
        errors.append(f"{where}: not a non-empty list")
        return
    for entry in values:
        if not isinstance(entry, str) or not ARCH_ENTRY_RE.fullmatch(entry):
            errors.append(f"{where}: entry {entry!r} is not 'X.Y' or 'X.Y+PTX'")
    if kb.parse_arch_list(values) is None:
        errors.append(f"{where}: does not parse")


def check_torch_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = TORCH_FILE
    sources = check_header(name, data, errors)
    releases = table_rows(name, data, "releases", errors)
    seen: set[str] = set()
    previous: tuple[int, ...] | None = None
    variant_count = 0
    for row in releases:
        torch = row.get("torch")
        where = f"{name}: torch {torch!r}"
        check_sources(where, row, sources, errors)
        if not isinstance(torch, str) or not RELEASE_RE.fullmatch(torch):
            errors.append(f"{where}: release is not 'X.Y'")
            continue
        if torch in seen:
            errors.append(f"{where}: duplicate release")
        seen.add(torch)
        key = release_key(torch)
        if previous is not None and key >= previous:
            errors.append(f"{where}: releases are not ordered newest first")
        previous = key
        python_range(where, row, errors)
        variants = row.get("variants")
        if not isinstance(variants, list) or not variants:
            errors.append(f"{where}: no variants")
            continue
        tags: set[str] = set()
        for variant in variants:
            if not isinstance(variant, dict):
                errors.append(f"{where}: a variant is not an object")
                continue
            variant_count += 1
            tag = variant.get("variant")
            vwhere = f"{where} {tag!r}"
            check_sources(vwhere, variant, sources, errors)
            match = TAG_RE.fullmatch(tag) if isinstance(tag, str) else None
            if match is None:
                errors.append(f"{vwhere}: variant is not a cuXYZ tag")
                continue
            if tag in tags:
                errors.append(f"{vwhere}: duplicate variant")
            tags.add(str(tag))  # a cuXYZ string by now
            tag_cuda = kb.parse_cuda_version(tag)
            cuda = kb.parse_cuda_version(variant.get("cuda"))
            if cuda is None or cuda[2] is not None:
                errors.append(f"{vwhere}: cuda {variant.get('cuda')!r} is not 'major.minor'")
            elif tag_cuda is not None and cuda[:2] != tag_cuda[:2]:
                errors.append(f"{vwhere}: cuda {variant.get('cuda')} does not match the tag {tag}")
            full = variant.get("cuda_full")
            if full is not None:
                parsed = kb.parse_cuda_version(full)
                if parsed is None or (cuda is not None and parsed[:2] != cuda[:2]):
                    errors.append(f"{vwhere}: cuda_full {full!r} is not a version of CUDA {variant.get('cuda')}")
            cudnn = variant.get("cudnn")
            if cudnn is not None and (not isinstance(cudnn, str) or not CUDNN_PIN_RE.fullmatch(cudnn)):
                errors.append(f"{vwhere}: cudnn {cudnn!r} is not a W.X.Y.Z pin")
            for column, keys in (
                ("arch_list_linux_x86_64", "arch_sources"),
                ("arch_list_linux_aarch64", "aarch64_arch_sources"),
                ("arch_list_windows", "windows_arch_sources"),
            ):
                arch_entries(f"{vwhere} {column}", variant.get(column), errors)
                check_key_list(vwhere, variant, keys, sources, errors, required=variant.get(column) is not None)
            if variant.get("arch_list_linux_x86_64") is None and not variant.get("note"):
                errors.append(f"{vwhere}: arch list is null without a note saying why")
            windows = variant.get("windows")
            if windows is not None and not isinstance(windows, bool):
                errors.append(f"{vwhere}: windows is not true/false/null")
            check_key_list(vwhere, variant, "windows_sources", sources, errors, required=windows is not None)
            if variant.get("arch_list_windows") is not None and windows is not True:
                errors.append(f"{vwhere}: a Windows arch list but no Windows wheel")
        default = row.get("default_pypi_linux_x86_64")
        if default is not None and default not in tags:
            errors.append(f"{where}: PyPI default {default!r} is not one of its variants")
    for row in data.get("unconfirmed_releases", []) or []:
        if isinstance(row, dict):
            check_sources(f"{name}: unconfirmed torch {row.get('torch')!r}", row, sources, errors)
            if row.get("torch") in seen:
                errors.append(f"{name}: torch {row.get('torch')!r} is both confirmed and unconfirmed")
    return {"releases": len(releases), "variants": variant_count}
