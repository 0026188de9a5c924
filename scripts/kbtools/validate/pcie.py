"""pcie.json: one row per generation, ascending and each faster than the last, x16 = 16 lanes and duplex = twice
one direction."""

from __future__ import annotations

from typing import Any

from kbtools.common import positive
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import table_rows

PCIE_FILE = "pcie.json"


def check_pcie_file(data: dict[str, Any], errors: list[str]) -> tuple[dict[str, int], set[int]]:
    name = PCIE_FILE
    sources = check_header(name, data, errors)
    rows = table_rows(name, data, "rows", errors)
    gens: list[int] = []
    for row in rows:
        gen = row.get("gen")
        where = f"{name}: Gen {gen!r}"
        check_sources(where, row, sources, errors)
        if not isinstance(gen, int) or isinstance(gen, bool) or gen < 1:
            errors.append(f"{where}: gen is not a positive integer")
            continue
        if gen in gens:
            errors.append(f"{where}: duplicate generation")
        if gens and gen < gens[-1]:
            errors.append(f"{where}: generations are not in ascending order")
        gens.append(gen)
        lane, x16, duplex = row.get("gb_s_per_lane_per_dir"), row.get("x16_gb_s_per_dir"), row.get("x16_gb_s_duplex")
        if not (positive(row.get("gt_s")) and positive(lane) and positive(x16) and positive(duplex)):
            errors.append(f"{where}: a rate is missing or not positive")
        else:
            if abs(lane * 16 - x16) > 0.01 * x16:
                errors.append(f"{where}: x16 rate {x16} is not 16 lanes of {lane}")
            if abs(duplex - 2 * x16) > 0.01 * duplex:
                errors.append(f"{where}: duplex {duplex} is not twice {x16}")
    previous = None
    for gen in gens:
        rate = next(r.get("x16_gb_s_per_dir") for r in rows if r.get("gen") == gen)
        if previous is not None and positive(rate) and positive(previous) and rate <= previous:
            errors.append(f"{name}: Gen {gen} is not faster than the generation before it")
        previous = rate
    return {"generations": len(rows)}, set(gens)
