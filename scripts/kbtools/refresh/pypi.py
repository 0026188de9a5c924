"""What PyPI's JSON API says about releases newer than the shared reference, and the ``--online`` PyPI check.

The reference was compiled before torch 2.15 shipped, so it lists 2.15 as "not confirmed".  PyPI's JSON API
(``https://pypi.org/pypi/<name>/json``) confirms releases after it: the files of each version with their upload
times, ``requires_python`` and the newest version's ``requires_dist``.  The table below is what that API
answered on :data:`CHECKED`; ``kb_refresh --online`` reads the API again and reports anything newer.

What PyPI cannot tell: which download.pytorch.org variants (cu126, cu130, ...) a release has and their arch
lists.  A release confirmed here therefore carries only its PyPI default build, the one whose CUDA the Linux
wheel pins; the rest stays not verified (null), as the data's notes define.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

CHECKED = "2026-11-25"
PYPI_JSON = "https://pypi.org/pypi/{name}/json"
SOURCE_KEY = "P_PYPI"  # described in kbtools.sources.EXTRA_SOURCES

# torch releases PyPI confirms that the reference does not (yet) list with variants.
# 2.15.0: files uploaded 2026-10-28 for cp311-cp315 and cp314t/cp315t (Linux x86_64 and aarch64, Windows,
# macOS); requires_python ">=3.11"; the Linux wheel requires cuda-toolkit[...]==13.2.2, nvidia-cudnn-cu13==9.26.0.51,
# nvidia-nccl-cu13==2.30.7: its PyPI default build is the CUDA 13.2 one (index tag cu132).
TORCH_ON_PYPI: dict[str, dict[str, Any]] = {
    "2.15": {
        "version": "2.15.0",
        "uploaded": "2026-10-28",
        "python": "3.11-3.15 (PyPI wheels cp311-cp315, 3.14t/3.15t free-threaded too; requires_python >=3.11)",
        "default_pypi_linux_x86_64": "cu132",
        "variant": {"variant": "cu132", "cuda": "13.2", "cuda_full": "13.2.2", "cudnn": "9.26.0.51"},
    },
}

# Newest versions PyPI listed on CHECKED, for the files whose tables end earlier than the index.
NEWEST_ON_PYPI = {
    "tensorflow": ("2.21.0", "2026-03-06", "2.22.0rc0 (2026-09-22) is a pre-release"),
    "nvidia-cudnn-cu13": ("9.28.1.4", "2026-11-06", None),
    "nvidia-cudnn-cu12": ("9.28.0.42", "2026-11-04", None),
}


def newest_words(*names: str) -> str:
    """ "PyPI (P_PYPI, read 2026-11-25): newest tensorflow 2.21.0 (2026-03-06; ...)." for the coverage lines."""
    parts = []
    for name in names:
        version, uploaded, note = NEWEST_ON_PYPI[name]
        parts.append(f"{name} {version} ({uploaded}" + (f"; {note}" if note else "") + ")")
    return f"PyPI ({SOURCE_KEY}, read {CHECKED}): newest " + ", ".join(parts) + "."


_NOT_CONFIRMED = r"torch {release}\b[^.]*?not confirmed\.\s*"


def confirmed_row(release: str, unconfirmed_note: object) -> dict[str, Any] | None:
    """The release row (one variant: the PyPI default build) for a release PyPI confirms; None otherwise."""
    found = TORCH_ON_PYPI.get(release)
    if found is None:
        return None
    variant = found["variant"]
    tag = variant["variant"]
    note = (
        f"{found['version']} on PyPI since {found['uploaded']} ({SOURCE_KEY}, read {CHECKED}). Only its PyPI default "
        f"build ({tag}, what the Linux wheel's pins say) is confirmed; which other download.pytorch.org variants "
        "it has, and the arch lists, are not verified yet."
    )
    del unconfirmed_note  # the reference's pre-release words ("not confirmed") no longer hold
    return {
        "torch": release,
        "python": found["python"],
        "default_pypi_linux_x86_64": found["default_pypi_linux_x86_64"],
        "note": note,
        "sources": [SOURCE_KEY],
        "variant": {
            **variant,
            "note": (
                f"The PyPI wheel's build: CUDA {variant['cuda_full']} and cuDNN {variant['cudnn']} from its "
                f"requires_dist ({SOURCE_KEY}); arch lists not verified for this release."
            ),
        },
    }


def drop_unconfirmed_words(text: str, releases: list[str]) -> str:
    """A coverage text without the "torch X.Y (...) not confirmed." sentence of a release PyPI confirms."""
    for release in releases:
        text = re.sub(_NOT_CONFIRMED.format(release=re.escape(release)), "", text)
    return text.strip()


def newest_on_pypi(name: str, timeout: float = 20.0) -> tuple[str, str | None]:
    """(newest non-pre-release version, its first upload date) as PyPI's JSON API says now; raises OSError."""
    with urllib.request.urlopen(PYPI_JSON.format(name=name), timeout=timeout) as response:
        data = json.loads(response.read(64 * 1024 * 1024).decode("utf-8", "replace"))
    version = str(data["info"]["version"])
    files = data.get("releases", {}).get(version) or []
    uploaded = min((str(f.get("upload_time_iso_8601", ""))[:10] for f in files), default=None)
    return version, uploaded or None


def pypi_report(torch_releases: list[str], timeout: float = 20.0) -> list[str]:
    """One line per package: PyPI's newest version now against what the tables here record."""
    known = {"torch": (TORCH_ON_PYPI[max(TORCH_ON_PYPI)]["version"] if TORCH_ON_PYPI else None)}
    known.update({name: value[0] for name, value in NEWEST_ON_PYPI.items()})
    lines = []
    for name in ("torch", *NEWEST_ON_PYPI):
        try:
            version, uploaded = newest_on_pypi(name, timeout)
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            return [f"offline: could not read {PYPI_JSON.format(name=name)} ({exc}); no PyPI check done"]
        when = f" (uploaded {uploaded})" if uploaded else ""
        if name == "torch":
            release = ".".join(version.split(".")[:2])
            state = "in the data" if release in torch_releases else "NOT in the data"
            lines.append(f"PyPI torch {version}{when}: release {release} {state}")
        else:
            same = "as recorded" if version == known.get(name) else f"recorded {known.get(name)}: update the table"
            lines.append(f"PyPI {name} {version}{when}: {same}")
    return lines
