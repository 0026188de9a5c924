"""Reading the data files and writing them back in their two layouts: the generated files as plain
two-space JSON, the hand-edited ones with short lists of scalars kept on one line."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any


def read_json(path: pathlib.Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_checked(path: pathlib.Path, errors: list[str]) -> dict[str, Any] | None:
    """Like ``read_json``, but says in ``errors`` why a file could not be used."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        errors.append(f"{path.name}: missing")
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        errors.append(f"{path.name}: not readable JSON: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{path.name}: top level is not an object")
        return None
    return data


def render(data: dict[str, Any]) -> str:
    """A generated file's text: two-space indent, every list expanded."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_SCALAR = r'(?:"(?:[^"\\]|\\.)*"|-?\d[\d.]*)'
_SCALAR_LIST_RE = re.compile(rf"\[\s*({_SCALAR}(?:,\s*{_SCALAR})*)\s*\]")


def dump(data: dict[str, Any]) -> str:
    """JSON as the file is written by hand: two-space indent, short lists of scalars on one line."""

    def inline(match: re.Match[str]) -> str:
        one = "[" + re.sub(r",\s*", ", ", match.group(1)) + "]"
        return one if len(one) <= 100 else match.group(0)

    return _SCALAR_LIST_RE.sub(inline, render(data))
