"""Xid codes by meaning: what a ``NVRM: Xid (PCI:...): 79, ...`` line says and what to do about it.

``xid_info(79)`` is the row of ``xid.json`` for one code: its meaning ("GPU has fallen off the
bus"), a category (hardware / driver / application / memory / nvlink / thermal / power / unknown),
a severity for a doctor (``problem``: take the GPU out of service; ``warning``: investigate;
``info``: usually the application's fault or a self-repair record), the action, and the commands
to run (shell lines in ``commands``, the same as argument lists in ``argvs``).  ``describe_xid(79)``
is that row in one line.

The data follow NVIDIA's Xid catalog (Ampere and newer); the catalog's own resolution buckets are
kept verbatim beside gpudoctor's reading of them.  Commands carry ``{gpu}`` for the GPU, filled in
here with its index or PCI bus id (``nvidia-smi -i`` takes either); without one it shows as
``<index>`` for a person to fill.  A code the table lacks, or junk, gives ``None`` (``describe_xid``
then names the catalog); nothing here raises.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _load, as_dict, as_list

XID_FILE = "xid.json"
SEVERITIES = ("problem", "warning", "info")
CATEGORIES = ("hardware", "driver", "application", "memory", "nvlink", "thermal", "power", "unknown")
GPU_PLACEHOLDER = "{gpu}"
UNFILLED_GPU = "<index>"
CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
# Xid numbers are small; anything longer is not one (and keeps int() away from huge strings).
_CODE_RE = re.compile(r"\s*(?:xid\s*)?(\d{1,4})\s*", re.IGNORECASE)
# A PCI bus id as Xid lines ("PCI:0000:1b:00") and nvidia-smi ("00000000:1B:00.0") print it.
_BUS_ID_RE = re.compile(r"\s*(?:pci:)?([0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2})(\.[0-7])?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class XidInfo:
    """One Xid code as the knowledge base reads it."""

    code: int
    meaning: str
    category: str  # one of CATEGORIES
    severity: str  # one of SEVERITIES
    action: str
    commands: tuple[str, ...] = ()  # shell lines to paste, the GPU filled in: "sudo nvidia-smi --gpu-reset -i 3"
    note: str | None = None
    sources: tuple[str, ...] = ()
    mnemonic: str | None = None  # the driver's name: ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS
    nvidia_immediate: str | None = None  # the catalog's resolution bucket, as NVIDIA spells it: RESTART_BM
    nvidia_investigatory: str | None = None
    applies: str | None = None  # the GPUs the catalog lists it for
    command_reasons: tuple[str, ...] = ()  # why each command, same order as ``commands``
    argvs: tuple[tuple[str, ...], ...] = ()  # the same commands as argument lists


def _data() -> dict[str, Any]:
    data = _load(XID_FILE)
    return data if isinstance(data, dict) else {}


def _as_code(code: object) -> int | None:
    """An Xid number from an int or a string such as "79" / "Xid 79"; anything else is None."""
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code if 0 <= code < 10_000 else None
    if isinstance(code, str):
        match = _CODE_RE.fullmatch(code)
        return int(match.group(1)) if match else None
    return None


def _gpu_text(gpu: object) -> str:
    """The GPU as ``nvidia-smi -i`` takes it: an index, or a PCI bus id (function 0 where the Xid line
    leaves it out); anything else leaves the placeholder for a person."""
    if isinstance(gpu, int) and not isinstance(gpu, bool) and 0 <= gpu < 10_000:
        return str(gpu)
    if isinstance(gpu, str):
        match = _BUS_ID_RE.fullmatch(gpu)
        if match:
            return match.group(1) + (match.group(2) or ".0")
    return UNFILLED_GPU


@functools.lru_cache(maxsize=None)
def _rows() -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for row in _data().get("xids") or []:
        if isinstance(row, dict) and isinstance(row.get("code"), int) and not isinstance(row.get("code"), bool):
            rows.setdefault(row["code"], row)
    return rows


def _commands(names: object, gpu: str) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    table = as_dict(_data().get("commands"))
    argvs: list[tuple[str, ...]] = []
    reasons: list[str] = []
    for name in names if isinstance(names, list) else []:
        entry = as_dict(table.get(name)) if isinstance(name, str) else {}
        argv = entry.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(arg, str) for arg in argv):
            continue
        argvs.append(tuple(arg.replace(GPU_PLACEHOLDER, gpu) for arg in argv))
        reasons.append(str(entry.get("why") or ""))
    return tuple(argvs), tuple(reasons)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def xid_info(code: object, gpu: object = None) -> XidInfo | None:
    """The knowledge base's row for Xid ``code`` (an int, or "79" / "Xid 79"), or None.

    ``gpu`` is the GPU the Xid named: its index, or its PCI bus id ("PCI:0000:1b:00" as the Xid line
    prints it); the commands are filled with it.
    """
    number = _as_code(code)
    row = _rows().get(number) if number is not None else None
    if number is None or row is None:
        return None
    argvs, reasons = _commands(row.get("commands"), _gpu_text(gpu))
    category = str(row.get("category")) if row.get("category") in CATEGORIES else "unknown"
    severity = str(row.get("severity")) if row.get("severity") in SEVERITIES else "warning"
    sources = as_list(row.get("sources"))
    return XidInfo(
        code=number,
        meaning=_text(row.get("meaning")) or f"Xid {number}",
        category=category,
        severity=severity,
        action=_text(row.get("action")) or "",
        commands=tuple(shlex.join(argv) for argv in argvs),
        note=_text(row.get("note")),
        sources=tuple(str(key) for key in sources),
        mnemonic=_text(row.get("mnemonic")),
        nvidia_immediate=_text(row.get("nvidia_immediate")),
        nvidia_investigatory=_text(row.get("nvidia_investigatory")),
        applies=_text(row.get("applies")),
        command_reasons=reasons,
        argvs=argvs,
    )


def xid_codes() -> tuple[int, ...]:
    """Every code the knowledge base describes, ascending."""
    return tuple(sorted(_rows()))


def catalog_url() -> str:
    url = _data().get("catalog_url")
    return url if isinstance(url, str) and url.startswith("https://") else CATALOG_URL


def describe_xid(code: object, gpu: object = None) -> str:
    """One line: "Xid 79: GPU has fallen off the bus — problem (hardware): Reboot ...".

    A code the table lacks: "Xid 999: not in the knowledge base (see <catalog>)".
    """
    info = xid_info(code, gpu)
    if info is None:
        number = _as_code(code)
        shown = str(number) if number is not None else repr(code)[:40]
        return f"Xid {shown}: not in the knowledge base (see {catalog_url()})"
    return f"Xid {info.code}: {info.meaning} \u2014 {info.severity} ({info.category}): {info.action}"


def recovery_action_severity(message: object) -> str | None:
    """The severity of the recovery action an Xid 154 line names ("... to 0x2 (Node Reboot Required)").

    The last action named in the message wins (it is the new one); None when it names none.
    """
    if not isinstance(message, str):
        return None
    row = _rows().get(154) or {}
    actions = row.get("recovery_actions")
    if not isinstance(actions, dict):
        return None
    found: tuple[int, str] | None = None
    lowered = message.lower()
    for action, severity in actions.items():
        if not isinstance(action, str) or severity not in SEVERITIES:
            continue
        # "(None)" is the only safe way to spot "None": the bare word appears in ordinary prose.
        needle = f"({action.lower()})"
        at = lowered.rfind(needle)
        if at >= 0 and (found is None or at > found[0]):
            found = (at, severity)
    return found[1] if found else None
