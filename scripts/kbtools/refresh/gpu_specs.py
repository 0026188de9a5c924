"""gpu_specs.json from table 6 of the reference: spec-sheet figures per GPU, plus what was checked separately:
the names nvidia-smi prints for each row (``SPEC_NAMES``), boards that show up as several devices and the dense
TF32 rates read from datasheets (``TF32_DENSE``), each with its own source."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import merge, number, split_keys
from kbtools.sources import collect_sources, flag_secondary, header

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


def _memory_options(value: object) -> list[float]:
    """24 -> [24.0]; "16 / 32" -> [16.0, 32.0]."""
    single = number(value)
    if single is not None:
        return [single]
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
        used = merge(used, keys)
        architecture = str(raw.get("architecture"))
        architecture = _ARCH_NAMES.get(architecture, architecture)
        pcie = _PCIE_RE.search(str(raw.get("pcie") or ""))
        tensor = number(raw.get("fp16_bf16_tensor_dense_tflops"))
        # The reference's column is "FP16/BF16 (Volta/Turing FP16 only)": BF16 arrived with Ampere.
        no_bf16 = architecture in ("Kepler", "Maxwell", "Pascal", "Volta", "Turing")
        tf32 = TF32_DENSE.get(gpu)
        if tf32:
            used = merge(used, tf32[1])
        row = {
            "gpu": gpu,
            "names": list(SPEC_NAMES.get(gpu, [])),
            "architecture": architecture,
            "compute_capability": raw.get("compute_capability"),
            "devices_per_board": DEVICES_PER_BOARD.get(gpu, 1),
            "memory_gb": _memory_options(raw.get("memory_gb")),
            "memory_type": raw.get("memory_type"),
            "memory_bandwidth_gbs": number(raw.get("memory_bandwidth_gbs")),
            "fp32_tflops": number(raw.get("fp32_tflops")),
            "fp16_tensor_dense_tflops": tensor,
            "bf16_tensor_dense_tflops": None if no_bf16 else tensor,
            "tf32_tensor_dense_tflops": tf32[0] if tf32 else None,
            "tf32_sources": list(tf32[1]) if tf32 else [],
            "tf32_note": tf32[2] if tf32 else None,
            "pcie_gen": int(pcie.group(1)) if pcie else None,
            "pcie_width": int(pcie.group(2)) if pcie else None,
            "nvlink_gbs_bidirectional": number(raw.get("nvlink_gbs_bidirectional")),
            "note": raw.get("note"),
            "unverified_commonly_cited": raw.get("unverified_commonly_cited"),
            "sources": keys,
        }
        gpus.append(row)
    # "MLENG (network/README.md)": the key, without the words after it.
    meta = reference.get("_meta", {}).get("sources", {})
    nvlink_keys = [key for key in split_keys(table.get("nvlink_source")) if key in meta]
    used = merge(used, nvlink_keys)
    sources = collect_sources(reference, [key for key in used if key not in page_sources and key not in SPEC_SOURCES])
    sources.update({key: dict(SPEC_SOURCES[key]) for key in used if key in SPEC_SOURCES})
    sources.update(page_sources)
    for row in gpus:
        flag_secondary(row, sources)
    return {
        **header(reference, "table6_gpu_specs", str(table.get("as_of"))),
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
                "duplex_gbs": number(row.get("duplex_gbs")),
                "sources": nvlink_keys,
            }
            for row in table.get("nvlink_generations", [])
            if isinstance(row, dict)
        ],
        "sources": sources,
        "gpus": gpus,
    }
