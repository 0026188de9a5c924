"""Fix texts for causes that need no machine-specific commands: ``data/fixes/*.json``.

A cause's fix key (``gpudoctor.kb.causes``) is resolved by the checks' fix registry: a key with a builder there
(the driver install route for this distro, the PyTorch wheel for this driver and GPU) is built from the facts;
every other key is one entry here: a summary, the commands to type, whether they need root, a link.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.catalogue_files import catalogue_entries, text_field, text_list
from gpudoctor.kb.errors import KnowledgeError


@dataclass(frozen=True)
class FixText:
    id: str
    summary: str
    commands: tuple[str, ...]
    needs_root: bool
    url: str | None


@functools.lru_cache(maxsize=1)
def all_fix_texts() -> dict[str, FixText]:
    """Every fix text by id."""
    fixes: dict[str, FixText] = {}
    for filename, entry in catalogue_entries("fixes", "fixes"):
        where = f"fixes/{filename}"
        fix_id = text_field(entry, "id", where)
        if fix_id in fixes:
            raise KnowledgeError(f"{where}: fix '{fix_id}' is defined twice")
        url = entry.get("url")
        fixes[fix_id] = FixText(
            id=fix_id,
            summary=text_field(entry, "summary", f"{where} {fix_id}"),
            commands=text_list(entry, "commands"),
            needs_root=entry.get("needs_root") is True,
            url=url if isinstance(url, str) and url else None,
        )
    return fixes
