"""What regenerating a data file would change, as the human lines ``kb_refresh`` prints: rows added and removed,
fields changed per row (and per PyTorch variant), and top-level keys changed."""

from __future__ import annotations

from typing import Any

# The row table of each generated file and the field that names a row.
ROW_TABLES: dict[str, tuple[str, str]] = {
    "pytorch.json": ("releases", "torch"),
    "tensorflow.json": ("releases", "version"),
    "cudnn.json": ("majors", "major"),
    "gpu_specs.json": ("gpus", "gpu"),
    "pcie.json": ("rows", "gen"),
    "docker_cuda.json": ("rows", "cuda"),
}


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
    table, key = ROW_TABLES.get(filename, ("rows", "id"))
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
        old_value, new_value = old.get(field), new.get(field)
        if isinstance(old_value, dict) and isinstance(new_value, dict):
            keys = sorted(k for k in set(old_value) | set(new_value) if old_value.get(k) != new_value.get(k))
            lines.append(f"  {field} changed: {', '.join(map(str, keys))}")
        else:
            lines.append(f"  {field} changed")
    return [f"{filename}: {len(lines)} change(s)"] + lines if lines else []
