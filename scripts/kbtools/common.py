"""Small value helpers every table module of the refresh and the validator uses: where the data lives,
source-key lists, release keys and number checks."""

from __future__ import annotations

import pathlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing.TypeGuard is 3.10+; the annotation is never evaluated at run time
    from typing import TypeGuard

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = REPO / "gpudoctor" / "kb" / "data"


def split_keys(text: object) -> list[str]:
    """ "P_GEN; P_TI, P_REL" -> ["P_GEN", "P_TI", "P_REL"], each key once, in order."""
    if not isinstance(text, str):
        return []
    keys: list[str] = []
    for part in re.split(r"[;,\s]+", text):
        if part and part not in keys:
            keys.append(part)
    return keys


def merge(*lists: list[str]) -> list[str]:
    """The lists joined in order, each item once."""
    merged: list[str] = []
    for keys in lists:
        for key in keys:
            if key not in merged:
                merged.append(key)
    return merged


def release_key(version: str) -> tuple[int, ...]:
    """Up to three numbers of a release label, for ordering.

    Not packaging.version: the labels come straight from the reference and may be malformed ("None", "13.0.2
    (13.0.0 also seen)"); a tolerant key keeps the refresh and the validator going where a parser would raise.
    """
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def number(value: object) -> float | None:
    """A JSON number as a float; None for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def positive(value: object) -> TypeGuard[float]:
    """A JSON number above zero (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def nonempty(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())
