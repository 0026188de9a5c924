"""Which Python interpreter the framework probes run in: the one the user means, decided without running it.

Users install torch into a venv or a conda environment and run gpudoctor from somewhere else (pipx,
another venv), so the interpreter to examine is, in order: ``--python`` (a path, an environment's prefix
or a name on PATH); the activated virtual environment (``VIRTUAL_ENV``); the activated conda environment
(``CONDA_PREFIX``, the base environment included: someone who activated base means base); and last
gpudoctor's own interpreter.  Pure and cheap: looks at paths only, runs nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.errors import UsageError

# Where an environment prefix keeps its interpreter: venv/conda on POSIX, conda on Windows, venv on Windows.
INTERPRETER_PLACES = ("bin/python3", "bin/python", "python.exe", "Scripts/python.exe")

HOW_OPTION = "--python"
HOW_VIRTUAL_ENV = "VIRTUAL_ENV"
HOW_CONDA = "CONDA_PREFIX"
HOW_OWN = "gpudoctor's own interpreter"


@dataclass(frozen=True)
class TargetPython:
    executable: str
    how: str  # HOW_OPTION, HOW_VIRTUAL_ENV, HOW_CONDA or HOW_OWN
    # Why an environment variable that names an environment was passed over (a deleted venv), or None.
    note: str | None = None


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def interpreter_in_prefix(prefix: str) -> str | None:
    """The Python of an environment prefix (a venv or conda env directory), or None."""
    for place in INTERPRETER_PLACES:
        candidate = os.path.join(prefix, *place.split("/"))
        if _is_executable_file(candidate):
            # Not resolved through symlinks: a venv's bin/python links to the base interpreter, and only
            # the link's own path makes Python pick up the venv (pyvenv.cfg beside it).
            return os.path.abspath(candidate)
    return None


def _from_request(requested: str, environ: Mapping[str, str]) -> str:
    shown = f"{HOW_OPTION} {requested}"
    path = os.path.expanduser(requested)
    looks_like_path = os.sep in path or (os.altsep is not None and os.altsep in path) or os.path.exists(path)
    if not looks_like_path:
        found = shutil.which(path, path=environ.get("PATH", os.defpath))
        if found is None:
            raise UsageError(f"{shown}: no such interpreter on PATH (give its path, or an environment's directory)")
        return os.path.abspath(found)
    if os.path.isdir(path):
        found = interpreter_in_prefix(path)
        if found is None:
            raise UsageError(f"{shown}: no Python interpreter there (looked for {', '.join(INTERPRETER_PLACES)})")
        return found
    if not os.path.exists(path):
        raise UsageError(f"{shown}: no such file or directory")
    if not _is_executable_file(path):
        raise UsageError(f"{shown}: not an executable file")
    return os.path.abspath(path)


def resolve_target_python(
    requested: str | None, environ: Mapping[str, str], current: str = sys.executable
) -> TargetPython:
    """The interpreter to probe frameworks in, and how it was chosen.

    Raises :class:`UsageError` (one line) when ``requested`` names no usable interpreter.
    """
    if requested:
        return TargetPython(_from_request(requested, environ), HOW_OPTION)
    notes: list[str] = []
    for variable, how in (("VIRTUAL_ENV", HOW_VIRTUAL_ENV), ("CONDA_PREFIX", HOW_CONDA)):
        prefix = environ.get(variable)
        if not prefix:
            continue
        found = interpreter_in_prefix(prefix)
        if found is not None:
            return TargetPython(found, how, "; ".join(notes) or None)
        notes.append(f"{variable}={prefix} has no Python interpreter; passed over")
    return TargetPython(current, HOW_OWN, "; ".join(notes) or None)
