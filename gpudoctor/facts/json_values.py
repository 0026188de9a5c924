"""Values read out of decoded JSON evidence (probe records, scans): the type asked for, or "unknown".

Evidence JSON may be old, hand-made or damaged, so every read checks the type; a wrong type is None (or an
empty dict), never an exception.
"""

from __future__ import annotations

from typing import Any


def json_int(value: Any) -> int | None:
    """An integer (booleans are not numbers here), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_dict(value: Any) -> dict[str, Any]:
    """A JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def json_text(value: Any) -> str | None:
    """Non-blank text, stripped, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None
