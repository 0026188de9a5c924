"""The thresholds a GPU health check judges against, each with its source (``health_limits.json``).

DCGM's limits (retired pages 63, the double-bit soft limit 15 with at most 1 more a week, PCIe
replays 8 a minute, NVLink CRC errors 100 a second), NVIDIA's page-retirement and row-remapping
rules (64 retirements at most; 512 remaps, 8 uncorrectable per bank; pending -> reset; failure ->
RMA), which GPU brands count as data center for persistence-mode advice, and the temperature
margin below the slowdown threshold (a gpudoctor default: no source gives one).

Every lookup takes anything and answers ``None`` for "unknown", never raises.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _load, as_list

HEALTH_FILE = "health_limits.json"
_TOKEN_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class HealthLimit:
    """One threshold or rule, as the data file states it."""

    name: str
    value: int | float | bool | None
    unit: str | None
    rule: str
    applies: str | None = None
    note: str | None = None
    gpudoctor_default: bool = False  # True where gpudoctor chose the value because no source gives one
    sources: tuple[str, ...] = ()


def _data() -> dict[str, Any]:
    data = _load(HEALTH_FILE)
    return data if isinstance(data, dict) else {}


@functools.lru_cache(maxsize=None)
def _limits() -> dict[str, HealthLimit]:
    found: dict[str, HealthLimit] = {}
    for row in _data().get("limits") or []:
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            continue
        value = row.get("value")
        if not isinstance(value, (int, float, bool)) and value is not None:
            continue
        sources = as_list(row.get("sources"))

        def text(key: str, row: dict[str, Any] = row) -> str | None:
            return row.get(key) if isinstance(row.get(key), str) else None

        found.setdefault(
            row["name"],
            HealthLimit(
                name=row["name"],
                value=value,
                unit=text("unit"),
                rule=text("rule") or "",
                applies=text("applies"),
                note=text("note"),
                gpudoctor_default=row.get("gpudoctor_default") is True,
                sources=tuple(str(s) for s in sources),
            ),
        )
    return found


def all_health_limits() -> tuple[HealthLimit, ...]:
    """Every limit, in the file's order."""
    return tuple(_limits().values())


def health_limit(name: object) -> HealthLimit | None:
    """The limit called ``name`` ("retired_pages_max"), or None."""
    return _limits().get(name) if isinstance(name, str) else None


def _number(name: str) -> int | float:
    limit = _limits().get(name)
    value = limit.value if limit is not None else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        # The shipped file always has these (kb_validate checks it); a broken install is a bug, not "unknown".
        raise LookupError(f"{HEALTH_FILE}: numeric limit {name!r} missing")
    return value


def retired_pages_limit() -> int:
    """DCGM's maximum of single- plus double-bit retired pages (63): at or above it DCGM fails the GPU."""
    return int(_number("retired_pages_max"))


def retired_pages_capacity() -> int:
    """The most pages page retirement can retire on one GPU (64, NVIDIA)."""
    return int(_number("retired_pages_capacity"))


def retired_pages_dbe_soft_limit() -> int:
    """DCGM's double-bit soft limit (15): past it, more than one new DBE retirement a week fails."""
    return int(_number("retired_pages_dbe_soft_max"))


def row_remap_capacity() -> int:
    """Uncorrectable row remaps after which the row-remap failure flag is set (512, NVIDIA)."""
    return int(_number("row_remap_capacity"))


def row_remap_bank_limit() -> int:
    """Uncorrectable remapped rows a bank may hold before the next one sets the failure flag (8, NVIDIA)."""
    return int(_number("row_remap_bank_uncorrectable_max"))


def pcie_replay_rate_limit() -> int:
    """PCIe replays per minute above which DCGM warns (8)."""
    return int(_number("pcie_replay_rate_max"))


def nvlink_crc_rate_limit() -> float:
    """NVLink CRC errors per second from which they matter (100, DCGM)."""
    return float(_number("nvlink_crc_error_rate_max"))


def temperature_margin_c() -> int:
    """Warn within this many degrees C of the slowdown temperature (5: a gpudoctor default)."""
    return int(_number("temperature_margin_c"))


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def retired_pages_over_limit(sbe: object, dbe: object) -> bool | None:
    """Whether single- plus double-bit retired pages reached DCGM's limit; None when neither count is known.

    Like DCGM, an unknown count adds nothing: one known count at or above the limit is enough.
    """
    counts = [c for c in (_count(sbe), _count(dbe)) if c is not None]
    if not counts:
        return None
    if sum(counts) >= retired_pages_limit():
        return True
    return False if len(counts) == 2 else None


def near_slowdown(temperature_c: object, slowdown_c: object, margin_c: object = None) -> bool | None:
    """Whether the GPU runs within ``margin_c`` (default ``temperature_margin_c()``) of its slowdown temperature.

    None when either temperature is unknown or not a plausible reading.
    """

    def celsius(value: object) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return float(value) if -50 <= value <= 200 else None

    temp, slowdown = celsius(temperature_c), celsius(slowdown_c)
    margin = celsius(margin_c) if margin_c is not None else float(temperature_margin_c())
    if temp is None or slowdown is None or margin is None or margin < 0:
        return None
    return temp >= slowdown - margin


def _persistence() -> dict[str, Any]:
    block = _data().get("persistence")
    return block if isinstance(block, dict) else {}


def _strings(key: str) -> list[str]:
    values = _persistence().get(key)
    return [v for v in values if isinstance(v, str) and v] if isinstance(values, list) else []


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def is_datacenter_brand(brand: object, name: object = None) -> bool | None:
    """Whether a GPU counts as data center for persistence-mode advice, from its NVML/nvidia-smi brand.

    "Tesla", "NVIDIA" (what newer drivers report for A100/H100/T4...), "GRID" and vCS are data center;
    GeForce, Titan, Quadro, NVIDIA RTX, NVS and the virtual-desktop brands are not.  Where the brand is
    missing or "Unknown", the product name decides ("Tesla ..." or a data-center model such as A100,
    H100, L40S, T4); None when neither tells.
    """
    if isinstance(brand, str) and brand.strip():
        folded = _fold(brand)
        if folded in {_fold(b) for b in _strings("datacenter_brands")}:
            return True
        if folded in {_fold(b) for b in _strings("other_brands")}:
            return False
    if not isinstance(name, str) or not name.strip():
        return None
    folded_name = _fold(name)
    if any(folded_name.startswith(_fold(prefix)) for prefix in _strings("datacenter_name_prefixes")):
        return True
    tokens = _TOKEN_RE.findall(folded_name)
    if {_fold(word) for word in _strings("other_name_words")} & set(tokens):
        return False
    if {_fold(model) for model in _strings("datacenter_models")} & set(tokens):
        return True
    return None
