#!/usr/bin/env python3
"""Regenerate the framework data files of the knowledge base from the shared reference
(maintainer script, not a test run).

    python scripts/kb_refresh.py                        # compare; writes nothing
    python scripts/kb_refresh.py --write                # write the files that changed
    python scripts/kb_refresh.py --reference PATH       # another compat.json
    python scripts/kb_refresh.py --online               # also ask download.pytorch.org what is newer

It rebuilds ``gpudoctor/kb/data/pytorch.json``, ``tensorflow.json`` and ``cudnn.json`` from
tables 2, 3 and 4 of the reference JSON (default ``../shared/reference/compat.json`` beside
the checkout), and ``gpu_specs.json`` and ``pcie.json`` from its tables 6 and 7, keeping every
row's source keys and copying the referenced source descriptions into each file's ``sources``.
The GPU-spec rows also get the names nvidia-smi prints for them (``SPEC_NAMES``) and, where a
datasheet was checked separately, their dense TF32 rate (``TF32_DENSE``), each with its source.
``docker_cuda.json`` (the nvidia/cuda image tags) comes from table 5: one row per exact CUDA release,
its OS tokens and flavor tokens, "published" where NVIDIA's tag list or the Docker Hub scrape names it,
"secondary" otherwise; the OSes without cuDNN images (``DOCKER_NO_CUDNN_OS``) and tags seen pinned in
public files (``DOCKER_SEEN``) were checked separately and carry their own source.
What the reference does not hold but was
verified separately (which PyTorch variants have a Windows wheel, the Windows and aarch64
arch lists, source URLs) is applied from the tables in this script, each with its own
source key.  ``python_gpu_packages.json`` (JAX, CuPy) is not in the reference and is edited
by hand; this script leaves it alone.

It prints a summary of what would change (releases, variants and fields added, removed or
changed) and writes only with ``--write``, naming each file it writes.  ``--online`` fetches
``https://download.pytorch.org/whl/<variant>/torch/`` for the newest release's variants and
reports torch versions newer than the data; without it (or without a network) it says so in
one line.  Conflicting or missing reference values stay ``null`` with a note: nothing here
guesses.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import urllib.error
import urllib.request
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from gpudoctor.kb.python_versions import parse_python_range  # noqa: E402
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version  # noqa: E402

DEFAULT_REFERENCE = REPO.parent / "shared" / "reference" / "compat.json"
DEFAULT_DATA_DIR = REPO / "gpudoctor" / "kb" / "data"
GENERATED = ("pytorch.json", "tensorflow.json", "cudnn.json", "gpu_specs.json", "pcie.json", "docker_cuda.json")
INDEX_ROOT = "https://download.pytorch.org/whl"

# --------------------------------------------------------------------------- what the reference lacks

# Sources added here, for data verified outside the reference.
EXTRA_SOURCES: dict[str, dict[str, Any]] = {
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

# --------------------------------------------------------------------------- helpers

_URL_RE = re.compile(r"https://[^\s;,)]+")
_CUDNN_RE = re.compile(r"\d+\.\d+\.\d+\.\d+")


def _split_keys(text: object) -> list[str]:
    if not isinstance(text, str):
        return []
    keys: list[str] = []
    for part in re.split(r"[;,\s]+", text):
        if part and part not in keys:
            keys.append(part)
    return keys


def _merge(*lists: list[str]) -> list[str]:
    merged: list[str] = []
    for keys in lists:
        for key in keys:
            if key not in merged:
                merged.append(key)
    return merged


def _source_entry(key: str, text: str) -> dict[str, Any]:
    lowered = text.lower()
    secondary = lowered.startswith(("secondary", "third-party")) or "a github copy" in lowered
    if key in SOURCE_URLS:
        url = SOURCE_URLS[key]
    else:
        match = _URL_RE.search(text)
        url = match.group(0).rstrip(".") if match else None
    return {"title": text + SOURCE_REREAD.get(key, ""), "url": url, "secondary": secondary}


def _sources(reference: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    meta = reference.get("_meta", {}).get("sources", {})
    out: dict[str, Any] = {}
    for key in keys:
        if key in EXTRA_SOURCES:
            out[key] = dict(EXTRA_SOURCES[key])
        elif isinstance(meta.get(key), str):
            out[key] = _source_entry(key, meta[key])
    return out


def _flag_secondary(row: dict[str, Any], sources: dict[str, Any], key: str = "sources") -> None:
    """A row whose sources are all secondary copies says so in its note (kb_validate checks this)."""
    keys = row.get(key) or []
    if keys and all(sources.get(k, {}).get("secondary") for k in keys):
        note = row.get("note") or ""
        if "secondary" not in note.lower():
            row["note"] = (note + " " if note else "") + "Every source of this row is a secondary copy."


def _arch_list(text: object) -> list[str] | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return [part.strip() for part in text.split(";") if part.strip()]


def _release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


# --------------------------------------------------------------------------- PyTorch


def _aarch64_list(table: dict[str, Any], variant: str, release: str) -> list[str] | None:
    text = table.get(variant)
    if not isinstance(text, str):
        return None
    # "8.0;9.0;10.0;12.0(+PTX in 2.10/2.11)": the +PTX applies to the releases named in brackets only.
    match = re.fullmatch(r"(.*?)\(\+PTX in ([\d./]+)\)", text.strip())
    if match:
        base = _arch_list(match.group(1)) or []
        if release in match.group(2).split("/") and base:
            base[-1] = base[-1] + "+PTX"
        return base
    return _arch_list(text)


def build_pytorch(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table2_pytorch"]
    windows_table = table.get("windows_arch_lists_recent", {})
    aarch64_table = table.get("aarch64_sbsa_arch_lists_2_10_plus", {})
    windows_arch_sources = _split_keys(windows_table.get("source"))
    aarch64_sources = _split_keys(aarch64_table.get("source"))
    used: list[str] = []
    releases: list[dict[str, Any]] = []
    unconfirmed: list[dict[str, Any]] = []

    for raw in table.get("releases", []):
        torch = str(raw.get("torch"))
        release_sources = _split_keys(raw.get("source"))
        used = _merge(used, release_sources)
        if not raw.get("variants") or raw.get("python") is None:
            unconfirmed.append({"torch": torch, "note": raw.get("note"), "sources": release_sources})
            continue
        python_min, python_max, python_note = parse_python_range(raw.get("python"))
        variants = []
        for v in raw.get("variants", []):
            tag = str(v.get("variant"))
            notes: list[str] = [v["note"]] if v.get("note") else []
            tag_cuda = parse_cuda_version(tag)
            parsed = parse_cuda_version(v.get("cuda")) if isinstance(v.get("cuda"), str) else None
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
            arch_sources = _split_keys(v.get("arch_source"))
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
                    windows_sources = _merge(windows_sources, ["P_WINWHL"])
            windows_arch = None
            windows_arch_keys: list[str] = []
            if windows and torch in WINDOWS_ARCH_RELEASES and isinstance(windows_table.get(tag), str):
                windows_arch = _arch_list(windows_table[tag])
                windows_arch_keys = windows_arch_sources
            aarch64_arch = None
            aarch64_keys: list[str] = []
            if _release_key(torch) >= AARCH64_FIRST_RELEASE:
                aarch64_arch = _aarch64_list(aarch64_table, tag, torch)
                aarch64_keys = aarch64_sources if aarch64_arch else []
            variant = {
                "variant": tag,
                "cuda": cuda,
                "cuda_full": cuda_full,
                "cudnn": cudnn,
                "arch_list_linux_x86_64": _arch_list(v.get("arch_list_linux_x86_64")),
                "arch_sources": arch_sources,
                "arch_list_linux_aarch64": aarch64_arch,
                "aarch64_arch_sources": aarch64_keys,
                "arch_list_windows": windows_arch,
                "windows_arch_sources": windows_arch_keys,
                "windows": windows,
                "windows_note": windows_note,
                "windows_sources": windows_sources,
                "note": " ".join(notes) or None,
                "sources": _merge(release_sources, arch_sources),
            }
            used = _merge(used, arch_sources, windows_sources, windows_arch_keys, aarch64_keys)
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

    releases.sort(key=lambda row: _release_key(row["torch"]), reverse=True)
    pattern = dict(table.get("index_url_pattern", {}))
    pattern_sources = _split_keys(pattern.pop("source", None))
    used = _merge(used, pattern_sources)
    sources = _sources(reference, used)
    for row in releases:
        _flag_secondary(row, sources)
        for variant in row["variants"]:
            _flag_secondary(variant, sources)
    for row in unconfirmed:
        _flag_secondary(row, sources)
    return {
        **_header(
            reference,
            "table2_pytorch",
            (
                f"{table.get('as_of')} Windows wheels: which release x variant has one is from the reference where "
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
        ],
        "index_url_pattern": dict(pattern, sources=pattern_sources),
        "cubin_compat_rules": table.get("cubin_compat_rules"),
        "driver_per_variant": table.get("driver_per_variant"),
        "sources": sources,
        "releases": releases,
        "unconfirmed_releases": unconfirmed,
    }


# --------------------------------------------------------------------------- TensorFlow


def _strip_ge(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    value = text.strip().lstrip(">=").strip()
    return value if parse_driver_version(value) else None


def build_tensorflow(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table3_tensorflow"]
    used: list[str] = ["T3_131", "MVC"]  # the driver columns are derived from table 1
    releases = []
    for raw in table.get("releases", []):
        keys = _split_keys(raw.get("source"))
        used = _merge(used, keys)
        python_min, python_max, python_note = parse_python_range(raw.get("python"))
        releases.append(
            {
                "version": raw.get("tensorflow"),
                "python": raw.get("python"),
                "python_min": python_min,
                "python_max": python_max,
                "python_note": python_note,
                "cuda": raw.get("tested_cuda"),
                "cudnn": raw.get("tested_cudnn"),
                "and_cuda": bool(raw.get("and_cuda_extra")),
                "windows_native_gpu": bool(raw.get("windows_native_gpu")),
                "linux_driver_min": _strip_ge(raw.get("linux_driver_toolkit_level")),
                "linux_driver_mvc_floor": _strip_ge(raw.get("linux_driver_mvc_floor")),
                "driver_sources": ["T3_131", "MVC"],
                "note": None,
                "sources": keys,
            }
        )
    releases.sort(key=lambda row: _release_key(str(row["version"])), reverse=True)
    and_cuda_sources = _split_keys(table.get("and_cuda_source"))
    used = _merge(used, and_cuda_sources, _split_keys(table.get("source")))
    sources = _sources(reference, used)
    for row in releases:
        _flag_secondary(row, sources)
    return {
        **_header(reference, "table3_tensorflow", str(table.get("as_of"))),
        "notes": [
            "cuda / cudnn: the tested build configuration. linux_driver_min: the CUDA release notes' driver for "
            "that CUDA (full support); linux_driver_mvc_floor: the least driver that runs that CUDA major through "
            "minor-version compatibility. Both are derived from the driver table, not stated per release by Google.",
            str(table.get("windows")),
            str(table.get("driver_doc")),
            str(table.get("gpu_arch_doc")),
        ],
        "and_cuda_mechanism": table.get("and_cuda_mechanism"),
        "and_cuda_sources": and_cuda_sources,
        "sources": sources,
        "releases": releases,
    }


# --------------------------------------------------------------------------- cuDNN


def build_cudnn(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table4_cudnn"]
    used: list[str] = []
    majors = []
    for raw in table.get("majors", []):
        label = str(raw.get("cudnn"))
        match = re.match(r"(\d+)", label)
        major = int(match.group(1)) if match else None
        keys = _split_keys(raw.get("source"))
        used = _merge(used, keys)
        libraries, library_notes = [], []
        for lib in raw.get("libs", []):
            name, _, rest = str(lib).partition(" ")
            libraries.append(name)
            if rest:
                library_notes.append(f"{name} {rest.strip()}")
        pip_text = str(raw.get("pip", ""))
        min_cc_text = str(raw.get("min_cc", ""))
        min_cc_match = re.fullmatch(r"(\d+\.\d)(?: \(.*\))?", min_cc_text.strip())
        row: dict[str, Any] = {
            "major": major,
            "label": label,
            "cuda": raw.get("cuda"),
            "min_compute_capability": min_cc_match.group(1) if min_cc_match else None,
            "min_compute_capability_note": min_cc_text or None,
            "min_compute_capability_from": [],
            "linux_driver": raw.get("linux_driver"),
            "windows_driver": raw.get("windows_driver"),
            "libraries": libraries,
            "library_notes": library_notes,
            "pip_packages": re.findall(r"nvidia-cudnn-cu\d+", pip_text),
            "apt_packages": re.findall(r"libcudnn\d+-cuda-\d+", pip_text),
            "docker_tag_token": raw.get("docker_tag_token"),
            "images_cudnn_version": raw.get("images_cudnn_version"),
            "note": None,
            "sources": keys,
        }
        # "5.0 through 9.10.2; 7.5 (Turing) from 9.11.0 ...": the minimum depends on the minor release.
        steps = re.findall(r"(\d+\.\d) \(\w+\) from (\d+\.\d+\.\d+)", min_cc_text)
        first = re.match(r"(\d+\.\d) through (\d+\.\d+\.\d+)", min_cc_text)
        if first and steps and major is not None:
            row["min_compute_capability_from"] = [[f"{major}.0.0", first.group(1)]] + [
                [version, cc] for cc, version in steps
            ]
        majors.append(row)
    majors.sort(key=lambda row: row["major"] or 0, reverse=True)
    sources = _sources(reference, used)
    for row in majors:
        _flag_secondary(row, sources)
    return {
        **_header(reference, "table4_cudnn", str(table.get("as_of"))),
        "compat_rules": table.get("compat_rules"),
        "pytorch_pins": table.get("pytorch_pins"),
        "sources": sources,
        "majors": majors,
    }


# --------------------------------------------------------------------------- GPU specs and PCIe

# The names nvidia-smi, NVML and the frameworks print for each reference row (matched on normalised
# tokens, a trailing memory size like "-32GB" allowed; see gpudoctor/kb/gpu_specs.py).  A row without
# names here cannot be found by name.  Spellings are the ones seen in real captures
# (../shared/fixtures: "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H200",
# "NVIDIA L4", "NVIDIA L40S", "NVIDIA GeForce RTX 4090"/"5090") or NVIDIA's product names.
SPEC_NAMES: dict[str, list[str]] = {
    "Tesla K80 (board = 2x GK210)": ["Tesla K80"],
    "V100 SXM2": ["Tesla V100-SXM2"],
    "V100 PCIe": ["Tesla V100-PCIE"],
    "T4": ["Tesla T4"],
    "A10": ["NVIDIA A10"],
    "A100 40GB PCIe": ["NVIDIA A100-PCIE-40GB"],
    "A100 80GB PCIe": ["NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB"],
    "A100 40GB SXM4": ["NVIDIA A100-SXM4-40GB"],
    "A100 80GB SXM4": ["NVIDIA A100-SXM4-80GB"],
    "L4": ["NVIDIA L4"],
    "L40S": ["NVIDIA L40S"],
    "H100 SXM5": ["NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5"],
    "H100 PCIe": ["NVIDIA H100 PCIe"],
    "H200 SXM": ["NVIDIA H200"],
    "B200 (HGX/DGX)": ["NVIDIA B200"],
    "GB200 (per Blackwell GPU)": ["NVIDIA GB200"],
    "GeForce RTX 2080 Ti": ["NVIDIA GeForce RTX 2080 Ti"],
    "GeForce RTX 3090": ["NVIDIA GeForce RTX 3090"],
    "GeForce RTX 4090": ["NVIDIA GeForce RTX 4090"],
    "GeForce RTX 5090": ["NVIDIA GeForce RTX 5090"],
    "AMD Instinct MI250": ["AMD Instinct MI250"],
    "AMD Instinct MI250X": ["AMD Instinct MI250X"],
    "AMD Instinct MI300X": ["AMD Instinct MI300X"],
}

# Boards that show up as several devices (each die is its own CUDA/ROCm device); the spec figures of
# these rows are for the whole board and the lookup divides them.  K80: the reference's "board = 2x GK210";
# MI250/MI250X: "Two dies per package" (the reference's MI250 note; the MI250X is the same two-die package).
DEVICES_PER_BOARD: dict[str, int] = {
    "Tesla K80 (board = 2x GK210)": 2,
    "AMD Instinct MI250": 2,
    "AMD Instinct MI250X": 2,
}

# Dense TF32 tensor rates checked against NVIDIA's datasheet tables (as reproduced by the pages named in
# the sources below, read 2026-11-22).  NVIDIA's datasheets print the with-sparsity figure and say
# "specifications 1/2 lower without sparsity"; where only that figure was seen, the value is its half and
# the note says so.  Rows not listed have tf32 null: not checked, or no TF32 at all (before Ampere).
TF32_DENSE: dict[str, tuple[float, list[str], str]] = {
    "A100 40GB PCIe": (156.0, ["DS_A100"], "A100 datasheet: TF32 156 dense / 312 sparse."),
    "A100 80GB PCIe": (156.0, ["DS_A100"], "A100 datasheet: TF32 156 dense / 312 sparse."),
    "A100 40GB SXM4": (156.0, ["DS_A100"], "A100 datasheet: TF32 156 dense / 312 sparse."),
    "A100 80GB SXM4": (156.0, ["DS_A100"], "A100 datasheet: TF32 156 dense / 312 sparse."),
    "H100 SXM5": (
        494.7,
        ["DS_H100", "DS_H100_PEAKS"],
        "989.4 with sparsity (NVIDIA); 494.7 dense matrix peak as tabulated in DS_H100_PEAKS.",
    ),
    "H100 PCIe": (378.0, ["DS_H100"], "Half of NVIDIA's 756 with-sparsity figure."),
    "H200 SXM": (
        494.7,
        ["DS_H100_PEAKS"],
        "H200 has the H100 SXM's compute (reference note 'same compute as H100 SXM'); its TF32 rate.",
    ),
    "L4": (60.0, ["DS_L4"], "Half of NVIDIA's 120 with-sparsity figure."),
    "L40S": (183.0, ["DS_L40S"], "L40S datasheet: TF32 183 dense / 366 sparse."),
}

SPEC_SOURCES: dict[str, dict[str, Any]] = {
    "DS_A100": {
        "title": (
            "Secondary: NVIDIA A100 datasheet figures (FP32 19.5, TF32 156/312*, FP16 and BF16 312/624*) as "
            "tabulated by glennklockwood.com/garden/processors/A100, which cites "
            "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf; the same TF32 156/312* on the Paderborn "
            "PC2 A100 system page"
        ),
        "url": "https://glennklockwood.com/garden/processors/A100",
        "secondary": True,
    },
    "DS_H100": {
        "title": (
            "Secondary: NVIDIA H100 SXM / PCIe specification table as reproduced by HPCTECH (NVIDIA partner): "
            "FP32 67 / 51, TF32 989* / 756*, BF16 and FP16 1,979* / 1,513*, memory 3,350 / 2,000 GB/s, "
            "'* Shown with sparsity. Specifications 1/2 lower without sparsity'"
        ),
        "url": "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html",
        "secondary": True,
    },
    "DS_H100_PEAKS": {
        "title": (
            "Secondary: glennklockwood.com/garden/processors/h100, theoretical peaks of H100 SXM5: FP32 66.9, "
            "TF32 494.7 (dense matrix), FP16/BF16 989.4 dense; 'H200 GPUs are the same as H100 GPUs ... just "
            "with 144 GB of HBM3e'"
        ),
        "url": "https://glennklockwood.com/garden/processors/h100",
        "secondary": True,
    },
    "DS_L40S": {
        "title": (
            "Secondary: NVIDIA L40/L40S datasheet table as reproduced by a reseller (mullet.se product 355414): "
            "L40S FP32 91.6, TF32 183 | 366*, BF16/FP16 362.05 | 733*, 864 GB/s, PCIe Gen4 x16"
        ),
        "url": "https://www.mullet.se/product.html?product_id=355414",
        "secondary": True,
    },
    "DS_L4": {
        "title": (
            "Secondary: NVIDIA L4 datasheet figures as listed by a reseller comparison "
            "(store.sourcecode.com): 'TF32 Tensor Core 120 TFLOPS | Sparsity', 300 GB/s, PCIe 4.0 x16"
        ),
        "url": "https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820",
        "secondary": True,
    },
}

# The reference spells Ada as "Ada"; the driver table (and so the rest of the knowledge base) "Ada Lovelace".
_ARCH_NAMES = {"Ada": "Ada Lovelace"}
_PCIE_RE = re.compile(r"Gen\s*(\d)\s*x\s*(\d{1,2})", re.IGNORECASE)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _memory_options(value: object) -> list[float]:
    """24 -> [24.0]; "16 / 32" -> [16.0, 32.0]."""
    if _number(value) is not None:
        return [float(value)]  # type: ignore[arg-type]
    if isinstance(value, str):
        return [float(part) for part in re.findall(r"\d+(?:\.\d+)?", value)]
    return []


def _slug(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", text.upper()).strip("_")[:40]


def _spec_row_sources(gpu: str, text: object, page_sources: dict[str, dict[str, Any]]) -> list[str]:
    """ "CC;pages: AnandTech ...; GPUSPECS" -> ["CC", "PAGES_<GPU>", "GPUSPECS"]: spec pages become one source."""
    keys: list[str] = []
    for part in str(text or "").split(";"):
        part = part.strip()
        if not part:
            continue
        if part.lower().startswith("pages:"):
            key = f"PAGES_{_slug(gpu)}"
            page_sources[key] = {
                "title": f"Secondary: spec pages the reference cites for {gpu}: {part[len('pages:') :].strip()}",
                "url": None,
                "secondary": True,
            }
            part = key
        if part not in keys:
            keys.append(part)
    return keys


def build_gpu_specs(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table6_gpu_specs"]
    used: list[str] = []
    page_sources: dict[str, dict[str, Any]] = {}
    gpus = []
    for raw in table.get("gpus", []):
        gpu = str(raw.get("gpu"))
        keys = _spec_row_sources(gpu, raw.get("source"), page_sources)
        used = _merge(used, keys)
        architecture = str(raw.get("architecture"))
        architecture = _ARCH_NAMES.get(architecture, architecture)
        pcie = _PCIE_RE.search(str(raw.get("pcie") or ""))
        tensor = _number(raw.get("fp16_bf16_tensor_dense_tflops"))
        # The reference's column is "FP16/BF16 (Volta/Turing FP16 only)": BF16 arrived with Ampere.
        no_bf16 = architecture in ("Kepler", "Maxwell", "Pascal", "Volta", "Turing")
        tf32 = TF32_DENSE.get(gpu)
        if tf32:
            used = _merge(used, tf32[1])
        row = {
            "gpu": gpu,
            "names": list(SPEC_NAMES.get(gpu, [])),
            "architecture": architecture,
            "compute_capability": raw.get("compute_capability"),
            "devices_per_board": DEVICES_PER_BOARD.get(gpu, 1),
            "memory_gb": _memory_options(raw.get("memory_gb")),
            "memory_type": raw.get("memory_type"),
            "memory_bandwidth_gbs": _number(raw.get("memory_bandwidth_gbs")),
            "fp32_tflops": _number(raw.get("fp32_tflops")),
            "fp16_tensor_dense_tflops": tensor,
            "bf16_tensor_dense_tflops": None if no_bf16 else tensor,
            "tf32_tensor_dense_tflops": tf32[0] if tf32 else None,
            "tf32_sources": list(tf32[1]) if tf32 else [],
            "tf32_note": tf32[2] if tf32 else None,
            "pcie_gen": int(pcie.group(1)) if pcie else None,
            "pcie_width": int(pcie.group(2)) if pcie else None,
            "nvlink_gbs_bidirectional": _number(raw.get("nvlink_gbs_bidirectional")),
            "note": raw.get("note"),
            "unverified_commonly_cited": raw.get("unverified_commonly_cited"),
            "sources": keys,
        }
        gpus.append(row)
    # "MLENG (network/README.md)": the key, without the words after it.
    meta = reference.get("_meta", {}).get("sources", {})
    nvlink_keys = [key for key in _split_keys(table.get("nvlink_source")) if key in meta]
    used = _merge(used, nvlink_keys)
    sources = _sources(reference, [key for key in used if key not in page_sources and key not in SPEC_SOURCES])
    sources.update({key: dict(SPEC_SOURCES[key]) for key in used if key in SPEC_SOURCES})
    sources.update(page_sources)
    for row in gpus:
        _flag_secondary(row, sources)
    return {
        **_header(reference, "table6_gpu_specs", str(table.get("as_of"))),
        "definitions": table.get("definitions"),
        "matching": (
            "A GPU name matches a row when its tokens (lower case, split at spaces and -_/,(), without NVIDIA / "
            "GeForce / Tesla) equal one of the row's names, optionally followed by a memory size ('-32GB'). "
            "Anything else ('H100 NVL', 'RTX 4090 D', 'A10G', 'V100S') is a different product and matches nothing."
        ),
        "units": (
            "TFLOP/s dense (no sparsity); GB/s with GB = 10^9 bytes; memory_gb as the product is sold; "
            "figures are per board: devices_per_board > 1 means the board shows up as that many devices."
        ),
        "nvlink_generations": [
            {
                "gen": row.get("gen"),
                "gpus": row.get("gpu"),
                "duplex_gbs": _number(row.get("duplex_gbs")),
                "sources": nvlink_keys,
            }
            for row in table.get("nvlink_generations", [])
            if isinstance(row, dict)
        ],
        "sources": sources,
        "gpus": gpus,
    }


def build_pcie(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table7_pcie"]
    used: list[str] = []
    rows = []
    for raw in table.get("rows", []):
        keys = _split_keys(raw.get("source"))
        used = _merge(used, keys)
        gen = re.match(r"(\d+)", str(raw.get("gen")))
        rows.append(
            {
                "gen": int(gen.group(1)) if gen else None,
                "gt_s": _number(raw.get("gt_s")),
                "encoding": raw.get("encoding"),
                "gb_s_per_lane_per_dir": _number(raw.get("gb_s_per_lane_per_dir")),
                "x16_gb_s_per_dir": _number(raw.get("x16_gb_s_per_dir")),
                "x16_gb_s_duplex": _number(raw.get("x16_gb_s_duplex")),
                "note": raw.get("note"),
                "sources": keys,
            }
        )
    rows.sort(key=lambda row: row["gen"] or 0)
    sources = _sources(reference, used)
    for row in rows:
        _flag_secondary(row, sources)
    return {
        **_header(reference, "table7_pcie", str(table.get("as_of"))),
        "units": table.get("units"),
        "measured_note": table.get("measured_note"),
        "sources": sources,
        "rows": rows,
    }


# --------------------------------------------------------------------------- nvidia/cuda image tags

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
        tokens = _merge(tokens, names)
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
    keys = _split_keys(raw.get("source"))
    os_tokens, no_cudnn_os, extra_os = _docker_os(list(raw.get("os") or []))
    os_tokens = _merge(os_tokens, extra_os.get(version, []))
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
        used = _merge(used, _split_keys(raw.get("source")))
    used = _merge(used, _split_keys(table.get("source")))
    sources = _sources(reference, used)
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
                if v.split(".")[:2] == version.split(".")[:2] and _release_key(v) > _release_key(version)
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
            seen["tags"] = _merge(seen["tags"], [t for t in tags if t not in _row_tags(row)])
            seen["sources"] = _merge(seen["sources"], ["DOCK_PINS"])
            row["also_seen"] = seen
    ordered = sorted(rows.values(), key=lambda row: _release_key(row["cuda"]), reverse=True)
    for row in ordered:
        _flag_secondary(row, sources)
    return {
        **_header(reference, "table5_docker_nvidia_cuda", str(table.get("as_of"))),
        "naming_scheme": table.get("naming_scheme"),
        "eol_policy": table.get("eol_policy"),
        "nvidia_require_cuda": table.get("nvidia_require_cuda"),
        "policy_sources": _split_keys(table.get("source")),
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
        os_tokens, flavors = _merge(os_tokens, [os]), _merge(flavors, [flavor])
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


def _header(reference: dict[str, Any], table_name: str, coverage: str) -> dict[str, Any]:
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


def build_all(reference: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The generated files, by file name."""
    return {
        "pytorch.json": build_pytorch(reference),
        "tensorflow.json": build_tensorflow(reference),
        "cudnn.json": build_cudnn(reference),
        "gpu_specs.json": build_gpu_specs(reference),
        "pcie.json": build_pcie(reference),
        DOCKER_FILE: build_docker_cuda(reference),
    }


# --------------------------------------------------------------------------- diff


def _keyed(rows: object, key: str) -> dict[str, dict[str, Any]]:
    if not isinstance(rows, list):
        return {}
    return {str(row.get(key)): row for row in rows if isinstance(row, dict)}


def _field_changes(where: str, old: dict[str, Any], new: dict[str, Any], skip: tuple[str, ...]) -> list[str]:
    lines = []
    for field in sorted(set(old) | set(new)):
        if field in skip:
            continue
        if old.get(field) != new.get(field):
            lines.append(f"  {where}: {field} {old.get(field)!r} -> {new.get(field)!r}")
    return lines


def diff_summary(filename: str, old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Human lines saying what regenerating ``filename`` would change (empty: nothing)."""
    if old is None:
        return [f"{filename}: new file"]
    lines: list[str] = []
    table, key = {
        "pytorch.json": ("releases", "torch"),
        "tensorflow.json": ("releases", "version"),
        "cudnn.json": ("majors", "major"),
        "gpu_specs.json": ("gpus", "gpu"),
        "pcie.json": ("rows", "gen"),
        "docker_cuda.json": ("rows", "cuda"),
    }.get(filename, ("rows", "id"))
    old_rows, new_rows = _keyed(old.get(table), key), _keyed(new.get(table), key)
    for name in sorted(set(new_rows) - set(old_rows)):
        lines.append(f"  + {key} {name}")
    for name in sorted(set(old_rows) - set(new_rows)):
        lines.append(f"  - {key} {name}")
    for name in sorted(set(old_rows) & set(new_rows)):
        before, after = old_rows[name], new_rows[name]
        lines.extend(_field_changes(f"{key} {name}", before, after, skip=("variants",)))
        if "variants" in before or "variants" in after:
            old_v, new_v = _keyed(before.get("variants"), "variant"), _keyed(after.get("variants"), "variant")
            for tag in sorted(set(new_v) - set(old_v)):
                lines.append(f"  + {key} {name} {tag}")
            for tag in sorted(set(old_v) - set(new_v)):
                lines.append(f"  - {key} {name} {tag}")
            for tag in sorted(set(old_v) & set(new_v)):
                lines.extend(_field_changes(f"{key} {name} {tag}", old_v[tag], new_v[tag], skip=()))
    for field in sorted(set(old) | set(new)):
        if field == table or old.get(field) == new.get(field):
            continue
        before, after = old.get(field), new.get(field)
        if isinstance(before, dict) and isinstance(after, dict):
            keys = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            lines.append(f"  {field} changed: {', '.join(map(str, keys))}")
        else:
            lines.append(f"  {field} changed")
    return [f"{filename}: {len(lines)} change(s)"] + lines if lines else []


# --------------------------------------------------------------------------- online check

_WHEEL_RE = re.compile(r"torch-(\d+)\.(\d+)\.(\d+)(?:%2B|\+)(cu\d+|cpu)[-.]", re.IGNORECASE)


def versions_in_listing(html: str) -> set[tuple[int, int, int, str]]:
    """(major, minor, patch, variant) of every torch wheel named in an index page."""
    return {(int(a), int(b), int(c), tag.lower()) for a, b, c, tag in _WHEEL_RE.findall(html or "")}


def newer_than_data(html: str, variant: str, data: dict[str, Any]) -> list[str]:
    """Torch releases on the ``variant`` index page that the data does not list for that variant."""
    known: set[tuple[int, int]] = set()
    for row in data.get("releases", []):
        if any(v.get("variant") == variant for v in row.get("variants", [])):
            key = _release_key(str(row.get("torch")))
            known.add((key[0], key[1]))
    newest = max(known) if known else (0, 0)
    lines = []
    for major, minor in sorted({(a, b) for a, b, _c, tag in versions_in_listing(html) if tag == variant}):
        if (major, minor) not in known and (major, minor) > newest:
            lines.append(
                f"torch {major}.{minor} has a {variant} wheel on download.pytorch.org; the data stops at "
                f"{newest[0]}.{newest[1]} for {variant}"
            )
    return lines


def online_report(data: dict[str, Any], extra_variants: list[str], timeout: float = 20.0) -> list[str]:
    releases = data.get("releases") or []
    variants = [v.get("variant") for v in (releases[0].get("variants", []) if releases else [])]
    variants = _merge([str(v) for v in variants if v], extra_variants)
    lines: list[str] = []
    for variant in variants:
        url = f"{INDEX_ROOT}/{variant}/torch/"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                html = response.read(64 * 1024 * 1024).decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:  # the server answered: this index is missing, go on
            lines.append(f"{variant}: {url} answered HTTP {exc.code}")
            continue
        except (urllib.error.URLError, OSError, ValueError) as exc:  # no network: say so once
            return [f"offline: could not read {url} ({exc}); no online check done"]
        found = newer_than_data(html, variant, data)
        lines.extend(found or [f"{variant}: nothing newer than the data"])
    return lines


# --------------------------------------------------------------------------- main


def _read_json(path: pathlib.Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the framework data files of the gpudoctor knowledge base.")
    parser.add_argument("--reference", type=pathlib.Path, default=DEFAULT_REFERENCE, help="the reference compat.json")
    parser.add_argument("--data-dir", type=pathlib.Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--write", action="store_true", help="write the files that changed (default: only compare)")
    parser.add_argument("--online", action="store_true", help="compare with the download.pytorch.org index pages")
    parser.add_argument("--variant", action="append", default=[], help="another index to check online (cu134)")
    args = parser.parse_args(argv)

    reference = _read_json(args.reference)
    if reference is None:
        print(f"cannot read the reference {args.reference}")
        return 2
    try:
        generated = build_all(reference)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"the reference {args.reference} does not have the expected tables: {exc}")
        return 2
    changed = []
    for filename, data in generated.items():
        lines = diff_summary(filename, _read_json(args.data_dir / filename), data)
        if lines:
            changed.append(filename)
            print("\n".join(lines))
        else:
            print(f"{filename}: up to date")
    if args.write:
        for filename in changed:
            (args.data_dir / filename).write_text(render(generated[filename]), encoding="utf-8")
            print(f"wrote {args.data_dir / filename}")
    elif changed:
        print("dry run: nothing written (use --write)")
    if args.online:
        for line in online_report(generated["pytorch.json"], args.variant):
            print(line)
    else:
        print("online check skipped (use --online to compare with download.pytorch.org)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
