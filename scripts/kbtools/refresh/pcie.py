"""pcie.json from table 7 of the reference: one row per PCIe generation with its per-lane and x16 rates."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import merge, number, split_keys
from kbtools.sources import collect_sources, flag_secondary, header


def build_pcie(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table7_pcie"]
    used: list[str] = []
    rows = []
    for raw in table.get("rows", []):
        keys = split_keys(raw.get("source"))
        used = merge(used, keys)
        gen = re.match(r"(\d+)", str(raw.get("gen")))
        rows.append(
            {
                "gen": int(gen.group(1)) if gen else None,
                "gt_s": number(raw.get("gt_s")),
                "encoding": raw.get("encoding"),
                "gb_s_per_lane_per_dir": number(raw.get("gb_s_per_lane_per_dir")),
                "x16_gb_s_per_dir": number(raw.get("x16_gb_s_per_dir")),
                "x16_gb_s_duplex": number(raw.get("x16_gb_s_duplex")),
                "note": raw.get("note"),
                "sources": keys,
            }
        )
    rows.sort(key=lambda row: row["gen"] or 0)
    sources = collect_sources(reference, used)
    for row in rows:
        flag_secondary(row, sources)
    return {
        **header(reference, "table7_pcie", str(table.get("as_of"))),
        "units": table.get("units"),
        "measured_note": table.get("measured_note"),
        "sources": sources,
        "rows": rows,
    }
