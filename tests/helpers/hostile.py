"""Helpers for the adversarial tests: synthetic programs on PATH, and the processes a run left behind."""

from __future__ import annotations

import pathlib
import stat

import psutil


def write_fake_tool(path: pathlib.Path, body: str) -> None:
    """A SYNTHETIC executable shell script at ``path`` (a stand-in for nvidia-smi, a Python, ...)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def processes_carrying(variable: str, marker: str) -> list[psutil.Process]:
    """Every process whose environment has ``variable=marker``: what a run started and left alive."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(variable) == marker:
                found.append(process)
        except psutil.Error:
            continue
    return found
