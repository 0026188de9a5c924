"""Facts from ``env.json``: the GPU-related environment and what it does to CUDA.

CUDA reads ``CUDA_VISIBLE_DEVICES`` once, at initialisation: entries are GPU
indexes, ``GPU-``/``MIG-`` UUIDs or unique UUID prefixes; an empty value hides
every GPU; enumeration stops at the first entry that names no device, so
"0,7,1" on a 2-GPU machine exposes GPU 0 only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.facts.json_values import json_dict, json_list


@dataclass(frozen=True)
class EnvFacts:
    collected: bool = False
    variables: dict[str, str] = field(default_factory=dict)
    present: tuple[str, ...] = ()
    missing_library_dirs: tuple[str, ...] = ()  # LD_LIBRARY_PATH entries that did not exist

    def get(self, name: str) -> str | None:
        return self.variables.get(name)


@dataclass(frozen=True)
class VisibleDevices:
    """What ``CUDA_VISIBLE_DEVICES`` leaves visible on a machine with known GPUs."""

    set: bool
    raw: str | None = None
    entries: list[str] = field(default_factory=list)
    visible: list[str] = field(default_factory=list)  # the entries CUDA will honour, in order
    stopped_at: str | None = None  # the first entry naming no device; the rest are ignored
    duplicates: list[str] = field(default_factory=list)
    hides_all: bool = False
    uses_mig: bool = False


def parse_env_json(data: object) -> EnvFacts:
    """``env.json`` as facts; anything not shaped as the scan writes it counts as not collected / empty."""
    if not isinstance(data, dict):
        return EnvFacts()
    variables = json_dict(data.get("variables"))
    present = json_list(data.get("present"))
    missing = json_list(data.get("missing_library_dirs"))
    return EnvFacts(
        collected=True,
        variables={k: v for k, v in variables.items() if isinstance(k, str) and isinstance(v, str)},
        present=tuple(p for p in present if isinstance(p, str)),
        missing_library_dirs=tuple(m for m in missing if isinstance(m, str)),
    )


_UUID_ENTRY = re.compile(r"^(GPU|MIG)-[0-9a-fA-F-]+(/\d+/\d+)?$")


def _entry_matches(entry: str, gpu_count: int, uuids: list[str]) -> bool:
    if re.fullmatch(r"\d+", entry):
        return int(entry) < gpu_count
    if _UUID_ENTRY.match(entry):
        # CUDA accepts any unique prefix of a UUID.
        matches = [u for u in uuids if u.lower().startswith(entry.lower())]
        return len(matches) == 1
    return False


def resolve_visible_devices(raw: str | None, gpu_count: int, uuids: list[str]) -> VisibleDevices:
    """Apply CUDA's rules for ``CUDA_VISIBLE_DEVICES`` to the GPUs (and MIG UUIDs) we know of."""
    if raw is None:
        return VisibleDevices(set=False)
    entries = [e.strip() for e in raw.split(",")] if raw.strip() else []
    visible: list[str] = []
    duplicates: list[str] = []
    stopped_at: str | None = None
    seen = set()
    for entry in entries:
        if not _entry_matches(entry, gpu_count, uuids):
            stopped_at = entry
            break
        if entry in seen:
            # A repeated device makes CUDA fail initialisation altogether.
            duplicates.append(entry)
        seen.add(entry)
        visible.append(entry)
    return VisibleDevices(
        set=True,
        raw=raw,
        entries=entries,
        visible=visible,
        stopped_at=stopped_at,
        duplicates=duplicates,
        hides_all=not visible,
        uses_mig=any(e.upper().startswith("MIG-") for e in entries),
    )
