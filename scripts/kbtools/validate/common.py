"""Helpers the table validators share: the row list of a table, a Python range, the driver table's columns that
other tables must agree with."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor import kb

CC_RE = re.compile(r"\d{1,2}\.\d")


def table_rows(name: str, data: dict[str, Any], key: str, errors: list[str]) -> list[dict[str, Any]]:
    """The objects of ``data[key]``; says so when the table is missing, empty or holds non-objects."""
    rows = data.get(key)
    if not isinstance(rows, list) or not rows:
        errors.append(f"{name}: '{key}' missing or empty")
        return []
    good = [row for row in rows if isinstance(row, dict)]
    if len(good) != len(rows):
        errors.append(f"{name}: '{key}' has entries that are not objects")
    return good


def python_range(where: str, row: dict[str, Any], errors: list[str]) -> None:
    """``python_min`` / ``python_max`` are 'X.Y' (or null) and in order."""
    low, high = row.get("python_min"), row.get("python_max")
    parsed = [kb.parse_python_version(v) if v is not None else None for v in (low, high)]
    for value, result in zip((low, high), parsed):
        well_formed = isinstance(value, str) and result is not None and re.fullmatch(r"\d\.\d{1,2}", value)
        if value is not None and not well_formed:
            errors.append(f"{where}: Python version {value!r} is not 'X.Y'")
    if parsed[0] and parsed[1] and parsed[0] > parsed[1]:
        errors.append(f"{where}: python_min {low} is above python_max {high}")


def driver_lookup(driver: dict[str, Any] | None) -> tuple[dict[tuple[int, int], str], dict[int, str]]:
    """GA Linux minimums by CUDA major.minor, and Linux MVC floors by major, from a driver file being validated."""
    ga: dict[tuple[int, int], str] = {}
    floors: dict[int, str] = {}
    if not driver:
        return ga, floors
    for row in driver.get("toolkit_driver", []) or []:
        if isinstance(row, dict) and row.get("stage") == "ga" and isinstance(row.get("linux_min"), str):
            cuda = kb.parse_cuda_version(row.get("cuda"))
            if cuda is not None:
                ga[(cuda[0], cuda[1])] = row["linux_min"]
    for row in driver.get("minor_version_compat", []) or []:
        if isinstance(row, dict) and isinstance(row.get("cuda_major"), int) and isinstance(row.get("linux_min"), str):
            floors[row["cuda_major"]] = row["linux_min"]
    return ga, floors
