"""Python versions as the framework tables use them: "3.12.9" -> (3, 12); ranges "3.10"-"3.14"."""

from __future__ import annotations

import re

# "3.12.9", "3.12", "3.13t" (free-threaded), "cp312", "Python 3.12.9 | packaged by Anaconda..."
_VERSION_RE = re.compile(r"(?:python\s*)?(\d)\.(\d{1,2})(?:\.\d{1,3})?(?:[abrc]+\d*)?t?(?=$|[\s|+(])", re.IGNORECASE)
_CP_RE = re.compile(r"cp(\d)(\d{1,2})t?", re.IGNORECASE)
_RANGE_RE = re.compile(r"\s*(\d\.\d{1,2})\s*-\s*(\d\.\d{1,2})\s*(.*)", re.DOTALL)


def parse_python_version(text: object) -> tuple[int, int] | None:
    """``"3.12.9"`` -> ``(3, 12)``; ``"3.13t"`` -> ``(3, 13)``; ``"cp310"`` -> ``(3, 10)``; junk -> None.

    collect_env's "3.12.9 | packaged by Anaconda, Inc. | (main, ...)" reads as 3.12 too.
    """
    if not isinstance(text, str) or len(text) > 400:
        return None
    stripped = text.strip()
    match = _CP_RE.fullmatch(stripped)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = _VERSION_RE.match(stripped)
    if match:
        return int(match.group(1)), int(match.group(2))
    return None


def format_python(version: tuple[int, int] | None) -> str | None:
    return None if version is None else f"{version[0]}.{version[1]}"


def parse_python_range(text: object) -> tuple[str | None, str | None, str | None]:
    """``"3.10-3.14 (+3.14t)"`` -> ``("3.10", "3.14", "(+3.14t)")``: minimum, maximum and the rest
    as a note (None when empty).  Anything else -> ``(None, None, text)``."""
    if not isinstance(text, str):
        return None, None, None
    match = _RANGE_RE.fullmatch(text)
    if not match:
        return None, None, text.strip() or None
    rest = match.group(3).strip()
    return match.group(1), match.group(2), rest or None


def python_in_range(version: object, low: str | None, high: str | None) -> bool | None:
    """Whether a Python version lies in [low, high] (major.minor); None when either side is unknown."""
    wanted = parse_python_version(version)
    lower = parse_python_version(low) if low else None
    upper = parse_python_version(high) if high else None
    if wanted is None or lower is None or upper is None:
        return None
    return lower <= wanted <= upper
