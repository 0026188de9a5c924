"""pytorch.json from table 2 of the reference: releases x CUDA variants, their cuDNN pins, arch lists per platform
and Windows wheels; what the reference lacks (which variants have a Windows wheel, the Windows and aarch64 arch
lists) is applied from the tables here, each with its own source key."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor.kb.python_versions import parse_python_range
from gpudoctor.kb.versions import parse_cuda_version
from kbtools.common import merge, release_key, split_keys
from kbtools.refresh.pypi import confirmed_row, drop_unconfirmed_words
from kbtools.sources import collect_sources, flag_secondary, header

# (torch release, variant) pairs with a Windows wheel seen on download.pytorch.org (source P_WINWHL).
# Seen versions, for the next maintainer: 1.13.0+cu117; 2.0.0/2.0.1+cu117, +cu118; 2.1.0/2.1.1/2.1.2+cu118;
# 2.2.0/2.2.2+cu121; 2.3.1+cu118; 2.3.0+cu121; 2.4.1+cu121; 2.4.0/2.4.1+cu124; 2.5.1+cu121; 2.5.0/2.5.1+cu124;
# 2.6.0+cu118, +cu124, +cu126; 2.7.1+cu118, +cu126, +cu128; 2.8.0+cu126, +cu128; 2.9.1+cu126; 2.9.0+cu128;
# 2.10.0+cu126, +cu128, +cu130; 2.11.0+cu126, +cu128, +cu130; 2.12.0/2.12.1+cu126; 2.12.0/2.12.1+cu130;
# 2.13.0+cu126, +cu130, +cu132; 2.14.0/2.14.1+cu126; 2.14.0+cu130, +cu132.
WINDOWS_WHEELS_SEEN: frozenset[tuple[str, str]] = frozenset(
    {
        ("1.13", "cu117"),
        ("2.0", "cu117"),
        ("2.0", "cu118"),
        ("2.1", "cu118"),
        ("2.2", "cu121"),
        ("2.3", "cu118"),
        ("2.3", "cu121"),
        ("2.4", "cu121"),
        ("2.4", "cu124"),
        ("2.5", "cu121"),
        ("2.5", "cu124"),
        ("2.6", "cu118"),
        ("2.6", "cu124"),
        ("2.6", "cu126"),
        ("2.7", "cu118"),
        ("2.7", "cu126"),
        ("2.7", "cu128"),
        ("2.8", "cu126"),
        ("2.8", "cu128"),
        ("2.9", "cu126"),
        ("2.9", "cu128"),
        ("2.10", "cu126"),
        ("2.10", "cu128"),
        ("2.10", "cu130"),
        ("2.11", "cu126"),
        ("2.11", "cu128"),
        ("2.11", "cu130"),
        ("2.12", "cu126"),
        ("2.12", "cu130"),
        ("2.13", "cu126"),
        ("2.13", "cu130"),
        ("2.13", "cu132"),
        ("2.14", "cu126"),
        ("2.14", "cu130"),
        ("2.14", "cu132"),
    }
)

# The Windows TORCH_CUDA_ARCH_LIST table (reference: windows_arch_lists_recent, source P_WIN) is the one in
# .ci/pytorch/windows/build_env_setup.py, a file of the 2.13/2.14 era; older Windows lists are not verified.
WINDOWS_ARCH_RELEASES = ("2.13", "2.14")
# The Linux aarch64 (SBSA) lists of the reference are stated for 2.10 and later.
AARCH64_FIRST_RELEASE = (2, 10)

_CUDNN_RE = re.compile(r"\d+\.\d+\.\d+\.\d+")


def arch_list(text: object) -> list[str] | None:
    """ "7.5;8.0;9.0+PTX" -> ["7.5", "8.0", "9.0+PTX"]; None when the reference has no list."""
    if not isinstance(text, str) or not text.strip():
        return None
    return [part.strip() for part in text.split(";") if part.strip()]


def _aarch64_list(table: dict[str, Any], variant: str, release: str) -> list[str] | None:
    text = table.get(variant)
    if not isinstance(text, str):
        return None
    # "8.0;9.0;10.0;12.0(+PTX in 2.10/2.11)": the +PTX applies to the releases named in brackets only.
    match = re.fullmatch(r"(.*?)\(\+PTX in ([\d./]+)\)", text.strip())
    if match:
        base = arch_list(match.group(1)) or []
        if release in match.group(2).split("/") and base:
            base[-1] = base[-1] + "+PTX"
        return base
    return arch_list(text)


def _pypi_release(confirmed: dict[str, Any], reference_sources: list[str]) -> dict[str, Any]:
    """A release row for a release PyPI confirms: its one known variant, nothing else claimed."""
    python_min, python_max, python_note = parse_python_range(confirmed["python"])
    known = confirmed["variant"]
    variant = {
        "variant": known["variant"],
        "cuda": known["cuda"],
        "cuda_full": known["cuda_full"],
        "cudnn": known["cudnn"],
        "arch_list_linux_x86_64": None,
        "arch_sources": [],
        "arch_list_linux_aarch64": None,
        "aarch64_arch_sources": [],
        "arch_list_windows": None,
        "windows_arch_sources": [],
        "windows": None,
        "windows_note": None,
        "windows_sources": [],
        "note": known["note"],
        "sources": list(confirmed["sources"]),
    }
    return {
        "torch": confirmed["torch"],
        "python": confirmed["python"],
        "python_min": python_min,
        "python_max": python_max,
        "python_note": python_note,
        "default_pypi_linux_x86_64": confirmed["default_pypi_linux_x86_64"],
        # gpudoctor.kb: known when installed, not offered as an install target until its index is read.
        "index_verified": False,
        "note": confirmed["note"],
        "sources": merge(list(confirmed["sources"]), reference_sources),
        "variants": [variant],
    }


def build_pytorch(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table2_pytorch"]
    windows_table = table.get("windows_arch_lists_recent", {})
    aarch64_table = table.get("aarch64_sbsa_arch_lists_2_10_plus", {})
    windows_arch_sources = split_keys(windows_table.get("source"))
    aarch64_sources = split_keys(aarch64_table.get("source"))
    used: list[str] = []
    releases: list[dict[str, Any]] = []
    unconfirmed: list[dict[str, Any]] = []

    for raw in table.get("releases", []):
        torch = str(raw.get("torch"))
        release_sources = split_keys(raw.get("source"))
        used = merge(used, release_sources)
        if not raw.get("variants") or raw.get("python") is None:
            confirmed = confirmed_row(torch, raw.get("note"))
            if confirmed is None:
                unconfirmed.append({"torch": torch, "note": raw.get("note"), "sources": release_sources})
                continue
            releases.append(_pypi_release(confirmed, release_sources))
            used = merge(used, confirmed["sources"])
            continue
        python_min, python_max, python_note = parse_python_range(raw.get("python"))
        variants = []
        for v in raw.get("variants", []):
            tag = str(v.get("variant"))
            notes: list[str] = [v["note"]] if v.get("note") else []
            tag_cuda = parse_cuda_version(tag)
            parsed = parse_cuda_version(v.get("cuda")) if isinstance(v.get("cuda"), str) else None
            cuda: str | None
            if parsed is not None:
                cuda = f"{parsed[0]}.{parsed[1]}"
                cuda_full = v["cuda"] if parsed[2] is not None else None
            else:
                cuda = f"{tag_cuda[0]}.{tag_cuda[1]}" if tag_cuda else None
                cuda_full = None
                notes.append(f"CUDA patch level conflicting in the reference: {v.get('cuda')!r}.")
            cudnn = v.get("cudnn")
            if isinstance(cudnn, str) and not _CUDNN_RE.fullmatch(cudnn):
                notes.append(f"cuDNN pin conflicting in the reference: {cudnn!r}.")
                cudnn = None
            arch_sources = split_keys(v.get("arch_source"))
            windows_text = v.get("windows")
            windows: bool | None = None
            windows_note = None
            windows_sources: list[str] = []
            if isinstance(windows_text, str) and windows_text.strip():
                windows = not windows_text.strip().lower().startswith("no ")
                windows_note = windows_text.strip()
                windows_sources = list(release_sources)
            if (torch, tag) in WINDOWS_WHEELS_SEEN:
                if windows is False:
                    raise ValueError(f"torch {torch} {tag}: the reference says no Windows wheel, P_WINWHL saw one")
                if windows is None:
                    windows = True
                    windows_sources = ["P_WINWHL"]
                    windows_note = "Seen as a download.pytorch.org win_amd64 wheel URL (secondary)."
                else:
                    windows_sources = merge(windows_sources, ["P_WINWHL"])
            windows_arch = None
            windows_arch_keys: list[str] = []
            if windows and torch in WINDOWS_ARCH_RELEASES and isinstance(windows_table.get(tag), str):
                windows_arch = arch_list(windows_table[tag])
                windows_arch_keys = windows_arch_sources
            aarch64_arch = None
            aarch64_keys: list[str] = []
            if release_key(torch) >= AARCH64_FIRST_RELEASE:
                aarch64_arch = _aarch64_list(aarch64_table, tag, torch)
                aarch64_keys = aarch64_sources if aarch64_arch else []
            variant = {
                "variant": tag,
                "cuda": cuda,
                "cuda_full": cuda_full,
                "cudnn": cudnn,
                "arch_list_linux_x86_64": arch_list(v.get("arch_list_linux_x86_64")),
                "arch_sources": arch_sources,
                "arch_list_linux_aarch64": aarch64_arch,
                "aarch64_arch_sources": aarch64_keys,
                "arch_list_windows": windows_arch,
                "windows_arch_sources": windows_arch_keys,
                "windows": windows,
                "windows_note": windows_note,
                "windows_sources": windows_sources,
                "note": " ".join(notes) or None,
                "sources": merge(release_sources, arch_sources),
            }
            used = merge(used, arch_sources, windows_sources, windows_arch_keys, aarch64_keys)
            variants.append(variant)
        row = {
            "torch": torch,
            "python": raw.get("python"),
            "python_min": python_min,
            "python_max": python_max,
            "python_note": python_note,
            "default_pypi_linux_x86_64": raw.get("default_pypi_linux_x86_64"),
            "note": raw.get("note"),
            "sources": release_sources,
            "variants": variants,
        }
        releases.append(row)

    releases.sort(key=lambda row: release_key(row["torch"]), reverse=True)
    pypi_confirmed = [row["torch"] for row in releases if "P_PYPI" in row["sources"]]
    pattern = dict(table.get("index_url_pattern", {}))
    pattern_sources = split_keys(pattern.pop("source", None))
    used = merge(used, pattern_sources)
    sources = collect_sources(reference, used)
    for row in releases:
        flag_secondary(row, sources)
        for variant in row["variants"]:
            flag_secondary(variant, sources)
    for row in unconfirmed:
        flag_secondary(row, sources)
    return {
        **header(
            reference,
            "table2_pytorch",
            (
                f"{drop_unconfirmed_words(str(table.get('as_of')), pypi_confirmed)}"
                + "".join(f" torch {r}: released, its PyPI default build from PyPI (P_PYPI)." for r in pypi_confirmed)
                + " Windows wheels: which release x variant has one is from the reference where "
                "it says, else from wheel URLs seen (P_WINWHL); Windows arch lists only for "
                f"{', '.join(WINDOWS_ARCH_RELEASES)} (P_WIN); Linux aarch64 arch lists from 2.10 on."
            ),
        ),
        "notes": [
            "Arch lists are TORCH_CUDA_ARCH_LIST entries: 'X.Y' = SASS (cubin) for sm_XY, '+PTX' = PTX embedded "
            "too (JIT for newer GPUs). null = not verified for that release, platform and variant.",
            "cuda is the variant's CUDA major.minor; cuda_full the exact toolkit the reference names (null where "
            "it does not, or where its sources disagree).",
            "windows: true = a Windows (win_amd64) wheel exists on download.pytorch.org/whl/<variant>, false = "
            "none, null = not verified.",
            "index_verified: false = a release confirmed from PyPI only (P_PYPI): its download.pytorch.org "
            "variants were not read, so gpudoctor knows it when installed but does not choose it to install.",
        ],
        "index_url_pattern": dict(pattern, sources=pattern_sources),
        "cubin_compat_rules": table.get("cubin_compat_rules"),
        "driver_per_variant": table.get("driver_per_variant"),
        "sources": sources,
        "releases": releases,
        "unconfirmed_releases": unconfirmed,
    }
