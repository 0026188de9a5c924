"""nvlink.json: generations ascending, links per GPU x per-link rate = the GPU's total."""

from __future__ import annotations

from typing import Any

from kbtools.common import nonempty, positive
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import table_rows

NVLINK_FILE = "nvlink.json"


def check_nvlink_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    """NVLink generations: links x per-link rate must give the GPU's total, generations ascend."""
    name = NVLINK_FILE
    sources = check_header(name, data, errors)
    rows = table_rows(name, data, "rows", errors)
    previous = 0
    for row in rows:
        generation = row.get("generation")
        where = f"{name}: NVLink {generation!r}"
        check_sources(where, row, sources, errors)
        links, per_link, total = row.get("links_per_gpu"), row.get("link_gbs_duplex"), row.get("gpu_gbs_duplex")
        if not isinstance(generation, int) or generation <= previous:
            errors.append(f"{where}: generations must be integers in ascending order")
            continue
        previous = generation
        if not (positive(links) and positive(per_link) and positive(total)):
            errors.append(f"{where}: links_per_gpu, link_gbs_duplex and gpu_gbs_duplex must be positive numbers")
        elif abs(links * per_link - total) > 0.01:
            errors.append(f"{where}: {links} links x {per_link} GB/s is not the GPU's {total} GB/s")
        if not nonempty(row.get("architecture")):
            errors.append(f"{where}: no architecture")
    return {"generations": len(rows)}
