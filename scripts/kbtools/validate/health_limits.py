"""health_limits.json: names unique, numeric limits positive, a gpudoctor-chosen value says so in its note, the
persistence brand lists disjoint."""

from __future__ import annotations

from typing import Any

from kbtools.common import nonempty, positive
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import table_rows

HEALTH_FILE = "health_limits.json"


def check_health_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = HEALTH_FILE
    sources = check_header(name, data, errors)
    limits = table_rows(name, data, "limits", errors)
    seen: set[str] = set()
    for row in limits:
        limit = row.get("name")
        where = f"{name}: limit {limit!r}"
        check_sources(where, row, sources, errors)
        if not nonempty(limit):
            errors.append(f"{where}: no name")
            continue
        if limit in seen:
            errors.append(f"{where}: duplicate name")
        seen.add(str(limit))  # a non-empty string by now
        value = row.get("value")
        if isinstance(value, bool):
            pass  # a flag rule ("pending -> reset")
        elif not positive(value):
            errors.append(f"{where}: value {value!r} is neither a flag nor a positive number")
        if not nonempty(row.get("rule")):
            errors.append(f"{where}: no rule")
        default = row.get("gpudoctor_default")
        if not isinstance(default, bool):
            errors.append(f"{where}: gpudoctor_default is not true/false")
        elif default and "gpudoctor default" not in str(row.get("note") or "").lower():
            errors.append(f"{where}: a gpudoctor default whose note does not say so")
    persistence = data.get("persistence")
    if not isinstance(persistence, dict):
        errors.append(f"{name}: 'persistence' missing")
        return {"limits": len(limits)}
    check_sources(f"{name}: persistence", persistence, sources, errors)
    lists = {}
    for key in (
        "datacenter_brands",
        "other_brands",
        "datacenter_name_prefixes",
        "datacenter_models",
        "other_name_words",
    ):
        values = persistence.get(key)
        if not isinstance(values, list) or not values or not all(nonempty(v) for v in values):
            errors.append(f"{name}: persistence {key} is not a list of names")
            values = []
        lists[key] = {" ".join(v.split()).casefold() for v in values if isinstance(v, str)}
    for a, b in (("datacenter_brands", "other_brands"), ("datacenter_models", "other_name_words")):
        both = lists[a] & lists[b]
        if both:
            errors.append(f"{name}: persistence {a} and {b} share {sorted(both)}")
    return {"limits": len(limits), "datacenter_brands": len(lists["datacenter_brands"])}
