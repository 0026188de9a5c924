"""Read a TPU VM's runtime state into a JSON-able record: the libtpu lock file and TPU settings."""

from __future__ import annotations


def scan_tpu_runtime(root: str = "/") -> dict[str, object]:
    """/tmp/libtpu_lockfile (exists, owner, age) and the TPU environment variables."""
    return {}
