"""Reading a knowledge-base catalogue that is split over several JSON files in one data folder.

The causes, error signatures and fix texts are each a folder of files, one per topic (``core.json``,
``tensorflow.json``, ...), so that a topic is edited and reviewed on its own.  The files are read in name
order, so the order of entries (which matters for signatures: specific ones first) is stable.
"""

from __future__ import annotations

import json
from typing import Any

from gpudoctor.kb.errors import KnowledgeError


def catalogue_entries(folder: str, key: str) -> list[tuple[str, dict[str, Any]]]:
    """Every entry under ``key`` of every ``data/<folder>/*.json``, with the file it came from."""
    from importlib import resources

    directory = resources.files("gpudoctor.kb").joinpath("data").joinpath(folder)
    entries: list[tuple[str, dict[str, Any]]] = []
    names = sorted(item.name for item in directory.iterdir() if item.name.endswith(".json"))
    for name in names:
        try:
            document: object = json.loads(directory.joinpath(name).read_text(encoding="utf-8"))
        except ValueError as exc:
            raise KnowledgeError(f"knowledge base file {folder}/{name} is not valid JSON: {exc}") from None
        items = document.get(key) if isinstance(document, dict) else None
        if not isinstance(items, list):
            raise KnowledgeError(f"knowledge base file {folder}/{name} has no '{key}' list")
        entries.extend((name, item) for item in items if isinstance(item, dict))
    return entries


def text_field(entry: dict[str, Any], name: str, where: str) -> str:
    """A required, non-empty string field of a catalogue entry."""
    value = entry.get(name)
    if not isinstance(value, str) or not value.strip():
        raise KnowledgeError(f"{where}: '{name}' must be a non-empty string")
    return value


def text_list(entry: dict[str, Any], name: str) -> tuple[str, ...]:
    """An optional list of strings (anything else in it is dropped)."""
    value = entry.get(name)
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
