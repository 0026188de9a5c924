"""Read what macOS says about itself into a JSON-able record: its version, the chip, Rosetta."""

from __future__ import annotations


def scan_macos(root: str = "/") -> dict[str, object]:
    """macOS version, machine, chip, and whether this process runs translated (sysctl.proc_translated)."""
    return {}
