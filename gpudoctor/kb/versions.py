"""The one home of version parsing and comparison in the knowledge base and the generators, built on
``packaging.version``: NVIDIA driver versions ("535.104.05"), L4T ("35.3.1"), CUDA ("12.8", "cu128"), framework
releases ("2.13.0+cpu").  A version that does not parse is ``None`` (or sorts first), never an exception."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

_MAX_LENGTH = 100  # longer text is never a version; packaging's regex need not read it


def parse_version(text: object) -> Version | None:
    """``"535.104.05"`` -> ``Version("535.104.5")``; ``"2.13.0+cpu"`` keeps its local part; junk -> ``None``."""
    if not isinstance(text, str) or len(text) > _MAX_LENGTH:
        return None
    try:
        return Version(text.strip())
    except InvalidVersion:
        return None


def release_tuple(text: object, width: int | None = None) -> tuple[int, ...]:
    """The numeric release: ``"535.104.05"`` -> ``(535, 104, 5)``; ``()`` for junk.  With ``width`` it is cut or
    padded with zeros to that many parts (``"570.26"``, 3 -> ``(570, 26, 0)``)."""
    version = parse_version(text)
    if version is None:
        return ()
    release = version.release
    if width is None:
        return release
    return (release + (0,) * width)[:width]


def version_key(text: object) -> tuple[int, ...]:
    """A sort key: releases compare numerically ("12.10" after "12.9"), junk sorts first."""
    return release_tuple(text)


def cuda_key(text: object) -> tuple[int, int, int]:
    """A CUDA release as a sort key with the patch as zero: ``"12.8"`` -> ``(12, 8, 0)``; junk -> ``(0, 0, 0)``."""
    parsed = parse_cuda_version(text)
    if parsed is None:
        return (0, 0, 0)
    return parsed[0], parsed[1], parsed[2] or 0


def major_minor(text: object) -> str | None:
    """The release cut to two parts: ``"2.13.0"`` -> ``"2.13"``; ``"2"`` stays ``"2"``; junk -> ``None``."""
    release = release_tuple(text)
    return ".".join(str(part) for part in release[:2]) if release else None


def major(text: object) -> int | None:
    """``"580.65.06"`` -> ``580``; junk -> ``None``."""
    release = release_tuple(text)
    return release[0] if release else None


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
    release = release_tuple(match.group(0), 3)
    return (release[0], release[1], release[2]) if release else None


def parse_cuda_version(text: object) -> tuple[int, int, int | None] | None:
    """``"12.2"`` -> ``(12, 2, None)``; ``"12.2.2"`` -> ``(12, 2, 2)``; ``"cu128"`` -> ``(12, 8, None)``."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    match = _CUDA_RE.fullmatch(stripped)
    if match:
        patch = match.group(3)
        release = release_tuple(".".join(part for part in match.groups() if part is not None), 3)
        if not release:  # digits packaging does not read (other scripts' digits) are junk here too
            return None
        return release[0], release[1], (release[2] if patch is not None else None)
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
