"""Does a build's list of GPU architectures cover a GPU's compute capability?

A CUDA binary carries machine code (SASS, in a "cubin") for some architectures and
optionally PTX (a portable intermediate form the driver JIT-compiles).  The rules, from the
CUDA Programming Guide (section 5.1 "Compute Capabilities") and NVIDIA's Blackwell
compatibility guide, as collected in the shared reference (compat.md 2c):

* a plain cubin ``sm_XY`` runs on GPUs of the same major and a minor >= Y
  (sm_86 runs on 8.9, sm_100 on 10.3, sm_120 on 12.1) and never across a major
  (sm_90 does not run on 12.0);
* plain PTX ``compute_XY`` is JIT-compiled for any GPU of compute capability >= X.Y;
* an architecture-specific target (suffix ``a``: ``sm_90a``, ``compute_100a``) runs only on
  exactly that compute capability;
* a family-specific target (suffix ``f``, CUDA 12.9+: ``sm_100f``, ``compute_120f``) runs on
  the members of that family, which the guide's table lists as the same major with a minor
  >= Y (compute_100f: 10.0 and 10.3; compute_120f: 12.0 and 12.1; compute_103f: 10.3 only).
  The brief that asked for this module guessed "exactly that cc" for ``f`` too; the guide's
  table says otherwise, so ``f`` follows the family rule here.

Accepted spellings, so one function reads every source of such a list:
``torch.cuda.get_arch_list()`` ("sm_86", "sm_90a", "compute_90"), the knowledge base's
TORCH_CUDA_ARCH_LIST notation ("8.6", "12.0+PTX", "8.6+PTX"), TensorFlow's build_info
("sm_60", "compute_80"), and bare numbers ("86", "120").  A single string is split at
";", "," and whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_STATUSES = ("sass", "ptx", "none", "unknown")

_KB_RE = re.compile(r"(\d{1,2})\.(\d)(\+ptx)?", re.IGNORECASE)
_SM_RE = re.compile(r"(sm|compute)_?(\d{1,2})(\d)([af]?)", re.IGNORECASE)
_BARE_RE = re.compile(r"(\d{1,2})(\d)")
_CC_RE = re.compile(r"(\d{1,2})\.(\d{1,2})")
_SPLIT_RE = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class ArchCoverage:
    """How an architecture list covers one compute capability.

    ``status``: ``"sass"`` (a cubin of the same major with minor <= the GPU's runs as is),
    ``"ptx"`` (only PTX at or below the GPU's capability: the driver must JIT-compile it,
    which needs a driver at least as new as the toolkit that produced the PTX),
    ``"none"`` (nothing in the list runs on this GPU) or ``"unknown"`` (no usable list or
    no usable compute capability).  ``via``: the entry that covers it, as written.
    """

    status: str
    via: str | None = None

    @property
    def covered(self) -> bool | None:
        """True for sass/ptx, False for none, None for unknown."""
        if self.status == "unknown":
            return None
        return self.status in ("sass", "ptx")


@dataclass(frozen=True)
class _Target:
    kind: str  # "sass" or "ptx"
    major: int
    minor: int
    suffix: str  # "", "a" or "f"
    text: str  # the entry as written


def parse_compute_capability(text: object) -> tuple[int, int] | None:
    """``"8.6"`` -> ``(8, 6)``; ``"sm_86"`` / ``"compute_120"`` -> ``(8, 6)`` / ``(12, 0)``; junk -> None."""
    if not isinstance(text, str) or len(text) > 32:
        return None
    stripped = text.strip()
    match = _CC_RE.fullmatch(stripped)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = _SM_RE.fullmatch(stripped)
    if match and not match.group(4):
        return int(match.group(2)), int(match.group(3))
    return None


def _entry_targets(entry: str) -> list[_Target]:
    text = entry.strip()
    if not text or len(text) > 32:
        return []
    match = _KB_RE.fullmatch(text)
    if match:
        major, minor = int(match.group(1)), int(match.group(2))
        targets = [_Target("sass", major, minor, "", text)]
        if match.group(3):
            targets.append(_Target("ptx", major, minor, "", text))
        return targets
    match = _SM_RE.fullmatch(text)
    if match:
        kind = "sass" if match.group(1).lower() == "sm" else "ptx"
        return [_Target(kind, int(match.group(2)), int(match.group(3)), match.group(4).lower(), text)]
    match = _BARE_RE.fullmatch(text)
    if match:
        return [_Target("sass", int(match.group(1)), int(match.group(2)), "", text)]
    return []


def parse_arch_list(arch_list: object) -> tuple[tuple[str, str, int, int, str], ...] | None:
    """The entries of an architecture list as ``(entry, kind, major, minor, suffix)`` tuples,
    ``kind`` being "sass" or "ptx"; ``None`` when nothing in it parses (for validation and display)."""
    targets = _targets(arch_list)
    if not targets:
        return None
    return tuple((t.text, t.kind, t.major, t.minor, t.suffix) for t in targets)


def _entries(arch_list: object) -> list[str]:
    if arch_list is None:
        return []
    if isinstance(arch_list, str):
        return [part for part in _SPLIT_RE.split(arch_list) if part]
    try:
        items = list(arch_list)  # type: ignore[call-overload]
    except TypeError:
        return []
    return [item for item in items[:256] if isinstance(item, str)]


def _targets(arch_list: object) -> list[_Target]:
    targets: list[_Target] = []
    for entry in _entries(arch_list):
        targets.extend(_entry_targets(entry))
    return targets


def _runs_on(target: _Target, cc: tuple[int, int]) -> bool:
    major, minor = cc
    if target.suffix == "a":
        # Architecture-specific code uses instructions only that exact device has.
        return (target.major, target.minor) == cc
    if target.kind == "sass" or target.suffix == "f":
        # Cubins (and family-specific PTX) never cross a major.
        return target.major == major and target.minor <= minor
    return (target.major, target.minor) <= cc  # plain PTX: any newer GPU, by JIT


def arch_list_covers(arch_list: Iterable[str] | None, compute_capability: str | None) -> ArchCoverage:
    """Whether ``arch_list`` has code that runs on a GPU of ``compute_capability``.

    ``["sm_50", ..., "sm_90"]`` and ``"12.0"`` -> none (the RTX 5090 D on torch 2.6.0+cu126);
    ``"7.5;8.0;8.6;9.0;10.0;12.0+PTX"`` and ``"8.9"`` -> sass via "8.6";
    ``["compute_90"]`` and ``"12.0"`` -> ptx via "compute_90"; ``["sm_90a"]`` and ``"9.0"`` -> sass,
    but ``"10.0"`` -> none.  An empty or unreadable list, or a bad capability -> unknown.
    SASS is preferred over PTX when both cover it; among SASS the closest minor is named.
    """
    cc = parse_compute_capability(compute_capability)
    targets = _targets(arch_list)
    if cc is None or not targets:
        return ArchCoverage("unknown", None)
    sass = [t for t in targets if t.kind == "sass" and _runs_on(t, cc)]
    if sass:
        best = max(sass, key=lambda t: (t.minor, t.suffix != ""))
        return ArchCoverage("sass", best.text)
    ptx = [t for t in targets if t.kind == "ptx" and _runs_on(t, cc)]
    if ptx:
        best = max(ptx, key=lambda t: (t.major, t.minor))
        return ArchCoverage("ptx", best.text)
    return ArchCoverage("none", None)


def lowest_and_highest(arch_list: object) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The lowest and highest compute capability named in a list (to say "GPU too old / too new")."""
    targets = _targets(arch_list)
    if not targets:
        return None
    ccs = [(t.major, t.minor) for t in targets]
    return min(ccs), max(ccs)
