"""The ``--online`` check of ``kb_refresh``: read download.pytorch.org's index pages for the newest release's
variants and report torch releases newer than the data."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from typing import Any

from kbtools.common import merge, release_key

INDEX_ROOT = "https://download.pytorch.org/whl"

_WHEEL_RE = re.compile(r"torch-(\d+)\.(\d+)\.(\d+)(?:%2B|\+)(cu\d+|cpu)[-.]", re.IGNORECASE)


def versions_in_listing(html: str) -> set[tuple[int, int, int, str]]:
    """(major, minor, patch, variant) of every torch wheel named in an index page."""
    return {(int(a), int(b), int(c), tag.lower()) for a, b, c, tag in _WHEEL_RE.findall(html or "")}


def newer_than_data(html: str, variant: str, data: dict[str, Any]) -> list[str]:
    """Torch releases on the ``variant`` index page that the data does not list for that variant."""
    known: set[tuple[int, int]] = set()
    for row in data.get("releases", []):
        if any(v.get("variant") == variant for v in row.get("variants", [])):
            key = release_key(str(row.get("torch")))
            known.add((key[0], key[1]))
    newest = max(known) if known else (0, 0)
    lines = []
    for major, minor in sorted({(a, b) for a, b, _c, tag in versions_in_listing(html) if tag == variant}):
        if (major, minor) not in known and (major, minor) > newest:
            lines.append(
                f"torch {major}.{minor} has a {variant} wheel on download.pytorch.org; the data stops at "
                f"{newest[0]}.{newest[1]} for {variant}"
            )
    return lines


def online_report(
    data: dict[str, Any], extra_variants: list[str], timeout: float = 20.0, index_root: str | None = None
) -> list[str]:
    """One line per variant index read: what is newer than the data there, or why it could not be read."""
    root = INDEX_ROOT if index_root is None else index_root
    releases = data.get("releases") or []
    variants = [v.get("variant") for v in (releases[0].get("variants", []) if releases else [])]
    variants = merge([str(v) for v in variants if v], extra_variants)
    lines: list[str] = []
    for variant in variants:
        url = f"{root}/{variant}/torch/"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                html = response.read(64 * 1024 * 1024).decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:  # the server answered: this index is missing, go on
            lines.append(f"{variant}: {url} answered HTTP {exc.code}")
            continue
        except (urllib.error.URLError, OSError, ValueError) as exc:  # no network: say so once
            return [f"offline: could not read {url} ({exc}); no online check done"]
        found = newer_than_data(html, variant, data)
        lines.extend(found or [f"{variant}: nothing newer than the data"])
    return lines
