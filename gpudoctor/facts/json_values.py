"""Values read out of decoded JSON evidence (probe records, scans): the type asked for, or "unknown".

Evidence JSON may be old, hand-made or damaged, so every read checks the type; a wrong type is None (or an
empty dict / list), never an exception.  Decoded JSON comes in as ``object`` and leaves as a concrete type.
"""

from __future__ import annotations


def json_int(value: object) -> int | None:
    """An integer (booleans are not numbers here), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_bool(value: object) -> bool | None:
    """A JSON boolean, else None."""
    return value if isinstance(value, bool) else None


def json_dict(value: object) -> dict[str, object]:
    """A JSON object, else an empty one (JSON object keys are always text)."""
    return value if isinstance(value, dict) else {}


def json_list(value: object) -> list[object]:
    """A JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def json_text(value: object) -> str | None:
    """Non-blank text, stripped, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None
