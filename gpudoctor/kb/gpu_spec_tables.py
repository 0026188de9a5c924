"""The GPU spec table the lookups read: ``gpu_specs.json`` plus the hand-sourced rows it does not carry.

``gpu_specs.json`` is compiled from the shared reference by ``scripts/kb_refresh.py``, which rewrites the whole
file; rows sourced separately (``gpu_specs_amd.json``: AMD Instinct and Radeon parts, each with its sources)
live in their own file so a refresh keeps them, and are merged here once: their rows are appended (a row the
compiled table already has wins), their ``extra_names`` add the spellings tools print to a compiled row
(rocm-smi's "AMD Instinct MI300X OAM"), and their sources join the compiled table's.
"""

from __future__ import annotations

import functools
from typing import Any

from gpudoctor.kb.loading import _load, _spec_data, as_dict, as_list

EXTRA_SPEC_FILES = ("gpu_specs_amd.json",)


@functools.lru_cache(maxsize=1)
def spec_data() -> dict[str, Any]:
    """The compiled spec table with every extra file's rows, names and sources merged in."""
    base = _spec_data()
    gpus = [dict(row) for row in as_list(base.get("gpus")) if isinstance(row, dict)]
    sources = dict(as_dict(base.get("sources")))
    for filename in EXTRA_SPEC_FILES:
        extra = _load(filename)
        aliases = as_dict(extra.get("extra_names"))
        for row in gpus:
            names = aliases.get(str(row.get("gpu")))
            if isinstance(names, list):
                row["names"] = [*as_list(row.get("names")), *(n for n in names if isinstance(n, str))]
        known = {row.get("gpu") for row in gpus}
        gpus.extend(
            dict(row) for row in as_list(extra.get("gpus")) if isinstance(row, dict) and row.get("gpu") not in known
        )
        for key, value in as_dict(extra.get("sources")).items():
            sources.setdefault(key, value)
    return {**base, "gpus": gpus, "sources": sources}
