"""The knowledge base room: what NVIDIA's tables say, as data with a source on every row.

The data lives in ``gpudoctor/kb/data/*.json`` (shipped inside the package) and is read
lazily, once, the first time a lookup needs it: importing this module reads no file and
imports nothing beyond the standard library, so ``gpudoctor --version`` stays fast.

Every lookup is a pure function of its arguments and the data; junk in gives ``None``
(or a verdict whose status is ``"unknown"``), never an exception.  The data files are
checked by ``scripts/kb_validate.py`` (every row sourced, versions parse, newer CUDA never
needs an older driver, no duplicate GPU names).

Driver versions compare as integer tuples ("570.124.06" > "570.26"); CUDA versions are
"major.minor" strings ("12.2"), with an optional patch ("12.2.2") where a lookup accepts one.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DriverCudaVerdict",
    "GpuCapability",
    "architecture_for_cc",
    "compute_capability_for_name",
    "driver_runs_cuda",
    "kb_info",
    "max_cuda_for_driver",
    "min_driver_for_cuda",
    "mvc_floor",
    "normalize_gpu_name",
    "parse_cuda_version",
    "parse_driver_version",
]

DATA_FILES = ("driver_cuda.json", "gpu_compute_capability.json")


# --------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=None)
def _load(filename: str) -> dict[str, Any]:
    """One data file, parsed once (importlib.resources, so it works from a wheel or zip)."""
    from importlib import resources

    text = resources.files(__name__).joinpath("data").joinpath(filename).read_text(encoding="utf-8")
    return json.loads(text)


def _driver_data() -> dict[str, Any]:
    return _load("driver_cuda.json")


def _gpu_data() -> dict[str, Any]:
    return _load("gpu_compute_capability.json")


def kb_info() -> dict[str, Any]:
    """How current each data file is and how many rows it holds (for ``gpudoctor kb``)."""
    driver = _driver_data()
    gpus = _gpu_data()
    return {
        "driver_cuda": {
            "as_of": driver.get("as_of"),
            "coverage": driver.get("coverage"),
            "rows": {
                "toolkit_driver": len(driver.get("toolkit_driver", [])),
                "minor_version_compat": len(driver.get("minor_version_compat", [])),
                "architectures": len(driver.get("architectures", [])),
            },
            "sources": len(driver.get("sources", {})),
        },
        "gpu_compute_capability": {
            "as_of": gpus.get("as_of"),
            "coverage": gpus.get("coverage"),
            "rows": {"gpus": len(gpus.get("gpus", []))},
            "sources": len(gpus.get("sources", {})),
        },
    }


# --------------------------------------------------------------------------- parsing

_DRIVER_RE = re.compile(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?")
_CUDA_RE = re.compile(r"(?:cuda\s*)?v?(\d{1,2})\.(\d{1,2})(?:\.(\d{1,4}))?", re.IGNORECASE)
_CU_TAG_RE = re.compile(r"cu(\d{1,2})(\d)", re.IGNORECASE)  # PyTorch wheel tags: cu121, cu92


def parse_driver_version(text: object) -> tuple[int, int, int] | None:
    """``"535.54.03"`` -> ``(535, 54, 3)``; ``"570.26"`` -> ``(570, 26, 0)``; junk -> ``None``.

    The whole (stripped) string must be a version: a driver version is never guessed out of
    a longer sentence.
    """
    if not isinstance(text, str):
        return None
    match = _DRIVER_RE.fullmatch(text.strip())
    if not match:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def parse_cuda_version(text: object) -> tuple[int, int, int | None] | None:
    """``"12.2"`` -> ``(12, 2, None)``; ``"12.2.2"`` -> ``(12, 2, 2)``; ``"cu128"`` -> ``(12, 8, None)``."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    match = _CUDA_RE.fullmatch(stripped)
    if match:
        major, minor, patch = match.groups()
        return int(major), int(minor), (int(patch) if patch is not None else None)
    match = _CU_TAG_RE.fullmatch(stripped)
    if match:
        return int(match.group(1)), int(match.group(2)), None
    return None


def _platform_column(platform: object) -> str | None:
    """``"linux"`` -> ``"linux_min"``; Windows and WSL (which runs the Windows driver) -> ``"windows_min"``."""
    if not isinstance(platform, str):
        return None
    name = platform.strip().lower()
    if name.startswith("linux"):
        return "linux_min"
    if name.startswith("win") or name.startswith("wsl"):
        return "windows_min"
    return None


# --------------------------------------------------------------------------- driver vs CUDA


@dataclass(frozen=True)
class _ToolkitRow:
    cuda: tuple[int, int]
    cuda_full: tuple[int, int, int]
    stage: str  # "ga", "update", "rc"
    minimum: tuple[int, int, int] | None
    minimum_text: str | None
    sources: tuple[str, ...]


@functools.lru_cache(maxsize=None)
def _toolkit_rows(column: str) -> tuple[_ToolkitRow, ...]:
    rows = []
    for raw in _driver_data().get("toolkit_driver", []):
        cuda = parse_cuda_version(raw.get("cuda"))
        full = parse_cuda_version(raw.get("cuda_full"))
        if cuda is None or full is None or full[2] is None:
            continue
        text = raw.get(column)
        rows.append(
            _ToolkitRow(
                cuda=(cuda[0], cuda[1]),
                cuda_full=(full[0], full[1], full[2]),
                stage=str(raw.get("stage", "")),
                minimum=parse_driver_version(text),
                minimum_text=text if parse_driver_version(text) else None,
                sources=tuple(raw.get("sources", ())),
            )
        )
    rows.sort(key=lambda row: row.cuda_full)
    return tuple(rows)


def _ga_row(rows: tuple[_ToolkitRow, ...], cuda: tuple[int, int]) -> _ToolkitRow | None:
    same_minor = [row for row in rows if row.cuda == cuda]
    for row in same_minor:
        if row.stage == "ga":
            return row
    return same_minor[0] if same_minor else None


def _row_for(cuda_text: object, column: str) -> _ToolkitRow | None:
    """The Table 3 row a CUDA version names: the GA row for "12.2", the exact row for "12.2.2".

    A patch number the table does not list falls back to the GA row of that minor: component
    versions such as nvcc's "12.2.91" (CUDA 12.2 GA) are not update numbers, and reading them
    as one would ask for a newer driver than the toolkit needs.
    """
    cuda = parse_cuda_version(cuda_text)
    if cuda is None:
        return None
    rows = _toolkit_rows(column)
    major, minor, patch = cuda
    if patch is not None:
        for row in rows:
            if row.cuda_full == (major, minor, patch):
                return row
    return _ga_row(rows, (major, minor))


def max_cuda_for_driver(driver_version: str, platform: str = "linux") -> str | None:
    """The newest CUDA "major.minor" whose GA release this driver fully supports.

    ``"535.54.03"`` -> ``"12.2"``; ``"470.256.02"`` -> ``"11.4"``; a driver older than every row
    (CUDA 10.0 needs 410.48) -> ``None``.  nvidia-smi's "CUDA Version" says this for real; use
    this only when the evidence lacks it.  On Windows the 13.x rows have no driver minimum
    (Table 3: N/A), so the answer there stops at 12.x.
    """
    column = _platform_column(platform)
    driver = parse_driver_version(driver_version)
    if column is None or driver is None:
        return None
    best: tuple[int, int] | None = None
    for row in _toolkit_rows(column):
        if row.stage != "ga" or row.minimum is None:
            continue
        if row.minimum <= driver and (best is None or row.cuda > best):
            best = row.cuda
    return None if best is None else f"{best[0]}.{best[1]}"


def min_driver_for_cuda(cuda: str, platform: str = "linux") -> str | None:
    """The oldest driver with full support for a CUDA release (Table 3), as printed there.

    ``"12.2"`` -> ``"535.54.03"`` (the GA row); ``"12.2.2"`` -> ``"535.104.05"`` (that update);
    a patch the table does not list (nvcc's "12.2.91") -> the GA row.
    ``None`` when the version is unknown or the table has no minimum (13.4; Windows for 13.x).
    """
    column = _platform_column(platform)
    if column is None:
        return None
    row = _row_for(cuda, column)
    return None if row is None else row.minimum_text


@functools.lru_cache(maxsize=None)
def _mvc_rows() -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for raw in _driver_data().get("minor_version_compat", []):
        major = raw.get("cuda_major")
        if isinstance(major, int) and not isinstance(major, bool):
            rows[major] = raw
    return rows


def mvc_floor(cuda_major: int, platform: str = "linux") -> str | None:
    """The oldest driver that runs *any* CUDA ``cuda_major``.x release under minor-version
    compatibility: 11 -> 450.80.02, 12 -> 525.60.13, 13 -> 580.65.06 (Linux).  ``None`` for
    majors without minor-version compatibility (10.x and older) or where it is not confirmed."""
    column = _platform_column(platform)
    if column is None or isinstance(cuda_major, bool):
        return None
    if isinstance(cuda_major, float) and not cuda_major.is_integer():
        return None
    try:
        major = int(cuda_major)
    except (TypeError, ValueError, OverflowError):
        return None
    row = _mvc_rows().get(major)
    if row is None:
        return None
    text = row.get(column)
    return text if parse_driver_version(text) else None


@dataclass(frozen=True)
class DriverCudaVerdict:
    """Can this driver run this CUDA release, and if not, what does it need?

    ``status``: ``"native"`` (full support), ``"minor_version_compat"`` (runs, with the limits
    in ``message``), ``"too_old"`` (needs a newer driver: ``needs_driver`` for full support,
    ``mvc_floor`` for the least that runs it) or ``"unknown"`` (no data).
    """

    status: str
    driver: str | None
    cuda: str | None
    platform: str
    needs_driver: str | None = None
    mvc_floor: str | None = None
    driver_max_cuda: str | None = None
    message: str = ""
    sources: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "driver": self.driver,
            "cuda": self.cuda,
            "platform": self.platform,
            "needs_driver": self.needs_driver,
            "mvc_floor": self.mvc_floor,
            "driver_max_cuda": self.driver_max_cuda,
            "message": self.message,
            "sources": list(self.sources),
        }


_MVC_LIMITS = (
    "Limits: features that need the newer driver are unavailable, and PTX built by the newer "
    "toolkit cannot be JIT-compiled by this driver, so a program that ships only PTX for your "
    "GPU (no ready-made SASS) fails to load its kernels."
)


def driver_runs_cuda(driver_version: str, cuda: str, platform: str = "linux") -> DriverCudaVerdict:
    """Whether ``driver_version`` runs CUDA ``cuda`` ("12.4", "12.4.1", "cu124") on ``platform``.

    535.54.03 runs 12.2 natively; 525.85.12 runs 12.4 under minor-version compatibility;
    470.x is too old for any 12.x (full support for 12.2 needs 535.54.03, the 12.x floor is
    525.60.13); 575.x is too old for 13.0 (the 13.x floor is 580.65.06).
    """
    platform_name = platform if isinstance(platform, str) else repr(platform)
    driver = parse_driver_version(driver_version)
    wanted = parse_cuda_version(cuda)
    column = _platform_column(platform)
    driver_text = str(driver_version).strip() if driver is not None else None
    cuda_text = None if wanted is None else str(cuda).strip()

    def unknown(message: str) -> DriverCudaVerdict:
        return DriverCudaVerdict("unknown", driver_text, cuda_text, platform_name, message=message)

    if column is None:
        return unknown(f"No driver table for platform {platform_name!r} (known: linux, windows, wsl).")
    if driver is None:
        return unknown(f"{driver_version!r} is not a driver version like 535.54.03.")
    if wanted is None:
        return unknown(f"{cuda!r} is not a CUDA version like 12.2 or 12.2.2.")

    major = wanted[0]
    row = _row_for(cuda, column)
    full_min = row.minimum if row is not None else None
    full_text = row.minimum_text if row is not None else None
    floor_text = mvc_floor(major, platform)
    floor = parse_driver_version(floor_text)
    max_cuda = max_cuda_for_driver(str(driver_version), platform)
    sources: tuple[str, ...] = tuple(row.sources) if row is not None else ()
    if floor is not None:
        sources += tuple(s for s in _mvc_rows()[major].get("sources", ()) if s not in sources)
    where = "Windows" if column == "windows_min" else "Linux"
    common = dict(
        driver=driver_text,
        cuda=cuda_text,
        platform=platform_name,
        needs_driver=full_text,
        mvc_floor=floor_text,
        driver_max_cuda=max_cuda,
        sources=sources,
    )

    if full_min is not None and driver >= full_min:
        return DriverCudaVerdict(
            "native",
            message=(
                f"Driver {driver_text} fully supports CUDA {cuda_text} "
                f"(it needs at least {full_text} on {where})."
            ),
            **common,
        )
    if floor is not None and driver >= floor:
        if full_min is None:
            lead = (
                f"The driver CUDA {cuda_text} asks for on {where} is not in the table, but "
                f"driver {driver_text} runs CUDA {major}.x applications through minor-version "
                f"compatibility (any {major}.x runtime works on a driver >= {floor_text})."
            )
        else:
            lead = (
                f"Driver {driver_text} is older than the {full_text} that CUDA {cuda_text} asks "
                f"for, but CUDA {major}.x applications still run on it through minor-version "
                f"compatibility (any {major}.x runtime works on a driver >= {floor_text})."
            )
        upgrade = f" Upgrade the driver to {full_text} or newer for full support." if full_text else ""
        return DriverCudaVerdict("minor_version_compat", message=f"{lead} {_MVC_LIMITS}{upgrade}", **common)
    if full_min is None and floor is None:
        return DriverCudaVerdict(
            "unknown",
            message=f"No {where} driver minimum is known for CUDA {cuda_text}.",
            **common,
        )
    if full_text and floor_text and full_min == floor:
        needs = f"it needs {full_text} or newer, the oldest driver for any CUDA {major}.x"
    elif full_text and floor_text:
        needs = (
            f"full support needs {full_text} or newer, and even minor-version compatibility "
            f"for CUDA {major}.x needs {floor_text} or newer"
        )
    elif full_text:
        needs = f"it needs {full_text} or newer (no minor-version compatibility is listed for CUDA {major}.x)"
    else:
        needs = f"minor-version compatibility for CUDA {major}.x needs {floor_text} or newer"
    message = f"Driver {driver_text} is too old for CUDA {cuda_text}: {needs}."
    if max_cuda:
        message += (
            f" This driver supports CUDA up to {max_cuda}: install a newer driver, or use a "
            f"build of your framework made for CUDA {max_cuda} or older."
        )
    else:
        message += " Install a newer driver."
    return DriverCudaVerdict("too_old", message=message, **common)


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

    def __iter__(self):  # ``cc, arch = compute_capability_for_name(...)``
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
