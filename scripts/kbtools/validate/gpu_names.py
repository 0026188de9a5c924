"""gpu_compute_capability.json: GPU names unique once normalised, each resolving to its own row, and each row's
architecture the one the driver table gives its compute capability."""

from __future__ import annotations

from typing import Any

from gpudoctor import kb
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import CC_RE, table_rows

GPU_FILE = "gpu_compute_capability.json"


def check_gpu_file(data: dict[str, Any], cc_map: dict[str, str], errors: list[str]) -> dict[str, int]:
    name = GPU_FILE
    sources = check_header(name, data, errors)
    gpus = table_rows(name, data, "gpus", errors)
    seen: dict[tuple[str, ...], str] = {}
    for row in gpus:
        match = row.get("match")
        where = f"{name}: gpu {match!r}"
        check_sources(where, row, sources, errors)
        tokens = kb.normalize_gpu_name(match)
        if not tokens:
            errors.append(f"{where}: empty match name")
            continue
        if tokens in seen:
            errors.append(f"{where}: duplicate match name (same as {seen[tokens]!r} once normalised)")
        seen[tokens] = str(match)
        cc = row.get("compute_capability")
        if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
            errors.append(f"{where}: compute_capability {cc!r} is not 'X.Y'")
            continue
        expected = cc_map.get(cc)
        if expected is None:
            errors.append(f"{where}: compute capability {cc} is in no architecture row")
        elif row.get("architecture") != expected:
            errors.append(f"{where}: architecture {row.get('architecture')!r} but {cc} is {expected!r}")
    index = kb.build_name_index(gpus)
    for row in gpus:
        match = row.get("match")
        if not kb.normalize_gpu_name(match):
            continue
        found, _truncated = kb.match_name(match, index)
        if not found or found[0] is not row:
            other = found[0].get("match") if found else None
            errors.append(f"{name}: gpu {match!r} does not resolve to its own row (got {other!r})")
    return {"gpus": len(gpus)}
