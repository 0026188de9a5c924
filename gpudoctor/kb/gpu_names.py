"""GPU name → compute capability and architecture, matched on normalised name tokens."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _driver_data, _gpu_data

# --------------------------------------------------------------------------- GPU names

# Brand words nvidia-smi prints inconsistently ("Tesla T4" / "NVIDIA T4", "NVIDIA GeForce ...").
_IGNORED_TOKENS = frozenset({"nvidia", "geforce", "tesla"})
# A match followed by one of these names a different product ("RTX 3060" vs "RTX 3060 Ti").
_MODEL_SUFFIXES = frozenset({"ti", "super", "d", "x", "xp", "z", "s", "le", "boost"})
_SPLIT_RE = re.compile(r"[\s\-_/,()]+")
_GLUED_RE = re.compile(r"^(rtx|gtx|gts|gt|mx)(\d{2,4})$")  # "RTX3090" typed without a space
_ELLIPSES = ("...", "\u2026")


def normalize_gpu_name(name: object) -> tuple[str, ...]:
    """Tokens a GPU name is matched on: lower case, split at spaces and ``-_/,()``, without
    the brand words NVIDIA / GeForce / Tesla.  ``"NVIDIA A100-SXM4-80GB"`` -> ``("a100", "sxm4", "80gb")``."""
    if not isinstance(name, str):
        return ()
    tokens: list[str] = []
    for token in _SPLIT_RE.split(name.lower()):
        token = token.strip(".\u2026[]'\"")
        if not token or token in _IGNORED_TOKENS:
            continue
        glued = _GLUED_RE.match(token)
        if glued:
            tokens.extend(glued.groups())
        else:
            tokens.append(token)
    return tuple(tokens)


@dataclass(frozen=True)
class GpuCapability:
    """What the knowledge base knows about a GPU name."""

    compute_capability: str  # "8.6"
    architecture: str  # "Ampere"
    matched: str  # the data row's name, "GeForce RTX 3060"
    sources: tuple[str, ...]
    secondary_only: bool = False  # every source of the row is a secondary copy
    truncated_name: bool = False  # nvidia-smi cut the name; all rows it could be agree
    note: str | None = None

    def __iter__(self) -> Iterator[str]:  # ``cc, arch = compute_capability_for_name(...)``
        return iter((self.compute_capability, self.architecture))

    def to_dict(self) -> dict[str, Any]:
        return {
            "compute_capability": self.compute_capability,
            "architecture": self.architecture,
            "matched": self.matched,
            "sources": list(self.sources),
            "secondary_only": self.secondary_only,
            "truncated_name": self.truncated_name,
            "note": self.note,
        }


@dataclass(frozen=True)
class _NameRow:
    tokens: tuple[str, ...]
    row: dict[str, Any]


def build_name_index(gpus: list[dict[str, Any]]) -> tuple[_NameRow, ...]:
    """The GPU rows keyed by their normalised names, longest first (maintainer script uses it too)."""
    index = [_NameRow(normalize_gpu_name(row.get("match")), row) for row in gpus if isinstance(row, dict)]
    index = [entry for entry in index if entry.tokens]
    index.sort(key=lambda entry: -len(entry.tokens))
    return tuple(index)


def match_name(name: object, index: tuple[_NameRow, ...]) -> tuple[list[dict[str, Any]], bool]:
    """Rows a name could be, and whether the name was cut short (``"... "``).

    Not cut: at most one row, the longest whose tokens start the name and are not followed by
    a model suffix.  Cut: every row the visible part could belong to.
    """
    if not isinstance(name, str):
        return [], False
    text = name.strip()
    bracket = re.search(r"\[([^\]]+)\]", text)  # lspci: "GA106 [GeForce RTX 3060 Lite Hash Rate]"
    if bracket:
        text = bracket.group(1).strip()
    truncated = text.endswith(_ELLIPSES)
    tokens = normalize_gpu_name(text)
    if not tokens:
        return [], truncated

    def full_match(entry: _NameRow) -> bool:
        size = len(entry.tokens)
        if tokens[:size] != entry.tokens:
            return False
        return not (len(tokens) > size and tokens[size] in _MODEL_SUFFIXES)

    if not truncated:
        for entry in index:
            if full_match(entry):
                return [entry.row], False
        return [], False

    candidates = []
    for entry in index:
        visible = tokens
        if len(entry.tokens) >= len(visible):
            head, last = visible[:-1], visible[-1]
            if entry.tokens[: len(head)] == head and entry.tokens[len(head)].startswith(last):
                candidates.append(entry.row)
                continue
        if len(entry.tokens) < len(tokens) and full_match(entry):
            candidates.append(entry.row)
    return candidates, True


@functools.lru_cache(maxsize=None)
def _name_index() -> tuple[_NameRow, ...]:
    return build_name_index(_gpu_data().get("gpus", []))


@functools.lru_cache(maxsize=None)
def _secondary_keys() -> frozenset[str]:
    sources = _gpu_data().get("sources", {})
    return frozenset(key for key, value in sources.items() if isinstance(value, dict) and value.get("secondary"))


@functools.lru_cache(maxsize=1024)
def _lookup_name(name: str) -> GpuCapability | None:
    rows, truncated = match_name(name, _name_index())
    if not rows:
        return None
    capabilities = {(row.get("compute_capability"), row.get("architecture")) for row in rows}
    if len(capabilities) != 1:
        return None  # a cut name that could be GPUs of different capability
    row = rows[0]
    sources = tuple(sorted({key for r in rows for key in r.get("sources", ())}))
    secondary = _secondary_keys()
    note = row.get("note")
    if truncated:
        names = ", ".join(sorted(str(r.get("match")) for r in rows))
        note = f"nvidia-smi cut the name short; every GPU it could be agrees ({names})."
    return GpuCapability(
        compute_capability=str(row.get("compute_capability")),
        architecture=str(row.get("architecture")),
        matched=str(row.get("match")) if not truncated else name.strip(),
        sources=sources,
        secondary_only=bool(sources) and all(key in secondary for key in sources),
        truncated_name=truncated,
        note=note,
    )


def compute_capability_for_name(name: str) -> GpuCapability | None:
    """Compute capability and architecture for a GPU name as nvidia-smi / NVML / torch print it.

    ``"NVIDIA GeForce RTX 3060 Laptop GPU"`` -> 8.6 Ampere; ``"NVIDIA A10"`` -> 8.6 but
    ``"NVIDIA A100-SXM4-80GB"`` -> 8.0; ``"Graphics Device"`` (a board the driver does not
    know) -> ``None``.  Unpacks as ``cc, arch = ...``; ``sources`` names the data rows' sources.
    """
    if not isinstance(name, str) or len(name) > 512:
        return None
    return _lookup_name(name)


@functools.lru_cache(maxsize=None)
def _cc_to_architecture() -> dict[tuple[int, int], str]:
    mapping: dict[tuple[int, int], str] = {}
    for row in _driver_data().get("architectures", []):
        for cc in row.get("compute_capabilities", ()):
            parsed = _parse_cc(cc)
            if parsed is not None:
                mapping[parsed] = str(row.get("architecture"))
    return mapping


_CC_RE = re.compile(r"(\d{1,2})\.(\d)")
_SM_RE = re.compile(r"(?:sm|compute)_?(\d{1,2})(\d)[af]?", re.IGNORECASE)


def _parse_cc(text: object) -> tuple[int, int] | None:
    """``"8.6"`` / ``"sm_86"`` / ``"compute_120"`` -> ``(8, 6)`` / ``(12, 0)``."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    match = _CC_RE.fullmatch(stripped) or _SM_RE.fullmatch(stripped)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2))


def architecture_for_cc(cc: str) -> str | None:
    """``"8.6"`` (or ``"sm_86"``) -> ``"Ampere"``; a compute capability the table does not list -> ``None``."""
    parsed = _parse_cc(cc)
    if parsed is None:
        return None
    return _cc_to_architecture().get(parsed)
