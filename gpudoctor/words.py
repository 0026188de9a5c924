"""Counts in words: "1 GPU", "2 GPUs" — never "1 GPU(s)" or "1 sources".  The lowest layer: any layer may use it."""

from __future__ import annotations


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun phrase in the number it takes; the plural adds "s" unless given."""
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"
