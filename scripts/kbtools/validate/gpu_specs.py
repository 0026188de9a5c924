"""gpu_specs.json: every figure positive or null, TF32 figures with their own sources, compute capability and
architecture agreeing with the driver table, PCIe generations the PCIe table has, and each name unique once
normalised and found by the lookup's own rule as its own row."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor.kb.gpu_specs import spec_name_tokens
from kbtools.common import positive
from kbtools.sources import check_header, check_key_list, check_sources
from kbtools.validate.common import CC_RE, table_rows
from kbtools.validate.pcie import PCIE_FILE

SPECS_FILE = "gpu_specs.json"
SPEC_FIGURES = (
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "fp16_tensor_dense_tflops",
    "bf16_tensor_dense_tflops",
    "tf32_tensor_dense_tflops",
    "nvlink_gbs_bidirectional",
)


def match_in(gpus: list[dict[str, Any]], spelled: str) -> int | None:
    """The lookup's rule (longest name first, a memory-size tail allowed) over the rows being validated."""
    tokens = spec_name_tokens(spelled)
    entries = sorted(
        ((spec_name_tokens(n), i) for i, r in enumerate(gpus) for n in r.get("names") or [] if isinstance(n, str)),
        key=lambda entry: -len(entry[0]),
    )
    for row_tokens, position in entries:
        size = len(row_tokens)
        if row_tokens and tokens[:size] == row_tokens and all(re.fullmatch(r"\d{1,3}gb", t) for t in tokens[size:]):
            return position
    return None


def check_specs_file(
    data: dict[str, Any], cc_map: dict[str, str], pcie_gens: set[int], errors: list[str]
) -> dict[str, int]:
    name = SPECS_FILE
    sources = check_header(name, data, errors)
    gpus = table_rows(name, data, "gpus", errors)
    seen: dict[tuple[str, ...], str] = {}
    for row in gpus:
        gpu = row.get("gpu")
        where = f"{name}: {gpu!r}"
        check_sources(where, row, sources, errors)
        if not isinstance(gpu, str) or not gpu:
            errors.append(f"{where}: no gpu name")
        for column in SPEC_FIGURES:
            value = row.get(column)
            if value is not None and not positive(value):
                errors.append(f"{where}: {column} {value!r} is not a positive number")
        memory = row.get("memory_gb")
        if not isinstance(memory, list) or not memory or not all(positive(v) for v in memory):
            errors.append(f"{where}: memory_gb is not a list of positive numbers")
        devices = row.get("devices_per_board")
        if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
            errors.append(f"{where}: devices_per_board is not a positive integer")
        tf32 = row.get("tf32_tensor_dense_tflops")
        check_key_list(where, row, "tf32_sources", sources, errors, required=tf32 is not None)
        if tf32 is not None and not (isinstance(row.get("tf32_note"), str) and row["tf32_note"]):
            errors.append(f"{where}: a TF32 figure without a note saying how it was read")
        fp16, bf16 = row.get("fp16_tensor_dense_tflops"), row.get("bf16_tensor_dense_tflops")
        if positive(fp16) and positive(tf32) and tf32 > fp16:
            errors.append(f"{where}: TF32 {tf32} above FP16 {fp16}")
        if (
            positive(bf16)
            and positive(row.get("fp32_tflops"))
            and bf16 < row["fp32_tflops"]
            and str(row.get("architecture", "")).startswith(("Ampere", "Ada", "Hopper", "Blackwell"))
        ):
            errors.append(f"{where}: BF16 tensor rate {bf16} below FP32 {row['fp32_tflops']}")
        cc = row.get("compute_capability")
        if cc is not None:
            if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
                errors.append(f"{where}: compute_capability {cc!r} is not 'X.Y'")
            elif cc_map and cc_map.get(cc) != row.get("architecture"):
                errors.append(f"{where}: architecture {row.get('architecture')!r} but {cc} is {cc_map.get(cc)!r}")
        gen, width = row.get("pcie_gen"), row.get("pcie_width")
        if (gen is None) != (width is None):
            errors.append(f"{where}: pcie_gen and pcie_width must be both known or both null")
        if gen is not None and pcie_gens and gen not in pcie_gens:
            errors.append(f"{where}: PCIe Gen {gen!r} is not in {PCIE_FILE}")
        if width is not None and width not in (1, 2, 4, 8, 16, 32):
            errors.append(f"{where}: PCIe width {width!r} is not a link width")
        names = row.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            errors.append(f"{where}: names is not a list of names")
            continue
        for spelled in names:
            tokens = spec_name_tokens(spelled)
            if not tokens:
                errors.append(f"{where}: name {spelled!r} has no tokens")
                continue
            if tokens in seen:
                errors.append(f"{where}: name {spelled!r} is also a name of {seen[tokens]!r}")
            seen[tokens] = str(gpu)
    for position, row in enumerate(gpus):
        for spelled in row.get("names") or []:
            if not isinstance(spelled, str):
                continue
            found = match_in(gpus, spelled)
            if found != position:
                other = gpus[found].get("gpu") if found is not None else None
                errors.append(f"{name}: name {spelled!r} of {row.get('gpu')!r} finds {other!r}")
    return {"gpus": len(gpus), "names": sum(len(r.get("names") or []) for r in gpus)}
