"""The plain-text pieces every ``gpudoctor kb`` table is made of: aligned columns, source keys, the sources block
and a topic's title line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    """Columns padded to their widest cell; ``None`` shows as "-"."""
    cells = [[("-" if value is None else str(value)) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))

    def line(values: Sequence[str]) -> str:
        return "  ".join(value.ljust(widths[i]) for i, value in enumerate(values)).rstrip()

    return [line(list(headers)), line(["-" * w for w in widths])] + [line(row) for row in cells]


def keys(row: dict[str, Any], key: str = "sources") -> str:
    keys = row.get(key)
    return ",".join(str(k) for k in keys) if isinstance(keys, list) and keys else "-"


def sources_block(data: dict[str, Any], only: Sequence[dict[str, Any]] | None = None) -> list[str]:
    """The file's sources, or only those the given rows cite."""
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        return []
    wanted = None
    if only is not None:
        wanted = {key for row in only for key in (row.get("sources") or []) if isinstance(key, str)}
    lines = ["", "Sources:"]
    for key, source in sources.items():
        if not isinstance(source, dict) or (wanted is not None and key not in wanted):
            continue
        url = f" <{source['url']}>" if source.get("url") else ""
        flag = " (secondary)" if source.get("secondary") else ""
        lines.append(f"  [{key}]{flag} {source.get('title')}{url}")
    return lines


def header(title: str, data: dict[str, Any]) -> list[str]:
    lines = [title, f"as of {data.get('as_of') or '?'}"]
    if data.get("coverage"):
        lines.append(f"coverage: {data['coverage']}")
    return lines + [""]
