"""Parsing driver and CUDA version strings into comparable tuples; junk gives None."""

from __future__ import annotations

import re

# --------------------------------------------------------------------------- parsing

_DRIVER_RE = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?")
_CUDA_RE = re.compile(r"(?:cuda\s*)?v?(\d{1,2})\.(\d{1,2})(?:\.(\d{1,4}))?", re.IGNORECASE)
_CU_TAG_RE = re.compile(r"cu(\d{1,2})(\d)", re.IGNORECASE)  # PyTorch wheel tags: cu121, cu92


def parse_driver_version(text: object) -> tuple[int, int, int] | None:
    """``"535.54.03"`` -> ``(535, 54, 3)``; ``"570.26"`` -> ``(570, 26, 0)``; junk -> ``None``.

    The whole (stripped) string must be a version: a driver version is never guessed out of
    a longer sentence.
    """
    if not isinstance(text, str):
        return None
    match = _DRIVER_RE.fullmatch(text.strip())
    if not match:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def parse_cuda_version(text: object) -> tuple[int, int, int | None] | None:
    """``"12.2"`` -> ``(12, 2, None)``; ``"12.2.2"`` -> ``(12, 2, 2)``; ``"cu128"`` -> ``(12, 8, None)``."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    match = _CUDA_RE.fullmatch(stripped)
    if match:
        major, minor, patch = match.groups()
        return int(major), int(minor), (int(patch) if patch is not None else None)
    match = _CU_TAG_RE.fullmatch(stripped)
    if match:
        return int(match.group(1)), int(match.group(2)), None
    return None


def _platform_column(platform: object) -> str | None:
    """``"linux"`` -> ``"linux_min"``; Windows and WSL (which runs the Windows driver) -> ``"windows_min"``."""
    if not isinstance(platform, str):
        return None
    name = platform.strip().lower()
    if name.startswith("linux"):
        return "linux_min"
    if name.startswith(("win", "wsl")):
        return "windows_min"
    return None
