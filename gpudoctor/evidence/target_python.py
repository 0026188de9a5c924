"""Which Python interpreter the framework probes run in: the one the user means, decided without running it.

Users install torch into a venv or a conda environment and run gpudoctor from somewhere else (pipx,
another venv), so the interpreter to examine is, in order: ``--python`` (a path, an environment's prefix
or a name on PATH); the activated virtual environment (``VIRTUAL_ENV``); the activated conda environment
(``CONDA_PREFIX``, the base environment included: someone who activated base means base); and last
gpudoctor's own interpreter.  Cheap and safe: looks at paths and file contents only, runs nothing (a
program named by mistake, ``--python /usr/bin/true``, must be refused before anything runs it, and a
wrapper script may hang or have side effects).
"""

from __future__ import annotations

import os
import re
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

# What every CPython or PyPy executable holds, statically linked or not: the entry point it calls
# (Py_BytesMain since 3.8, Py_Main before), the shared libpython/libpypy it loads, or on Windows the
# pythonXY.dll it imports.  A program without any of them (true, ls, a compiled tool) is not a Python.
_PYTHON_MARKERS = re.compile(rb"Py_BytesMain|Py_Main|libpython\d|libpypy|python3\d+\.dll", re.IGNORECASE)
# How much of a binary is searched: the markers sit in its dynamic symbol or import tables, near the start;
# a huge file is not read to its end.
_SCAN_BYTES = 64 * 1024 * 1024
_CHUNK_BYTES = 1024 * 1024


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
    found = _requested_program(requested, shown, environ)
    if not looks_like_python(found):
        raise UsageError(
            f"{shown}: not a Python interpreter (no Python runtime in that program; "
            "give a python executable or an environment's directory)"
        )
    return found


def _requested_program(requested: str, shown: str, environ: Mapping[str, str]) -> str:
    """The executable ``--python`` names (a path, an environment's prefix or a name on PATH), made absolute."""
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


def looks_like_python(path: str) -> bool:
    """Whether the executable file ``path`` can be a Python interpreter, judged from its contents without
    running it: a script (``#!``: pyenv shims and wrappers are scripts; the probes say what they run) or a
    binary holding a Python runtime marker.  False for any other program, and for a file that cannot be read."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_CHUNK_BYTES)
            if head.startswith(b"#!"):
                return True
            tail = b""
            chunk, read = head, len(head)
            while chunk:
                if _PYTHON_MARKERS.search(tail + chunk):
                    return True
                if read >= _SCAN_BYTES:
                    return False
                tail = chunk[-32:]  # a marker split across two chunks is still found
                chunk = handle.read(_CHUNK_BYTES)
                read += len(chunk)
    except OSError:
        return False
    return False


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
