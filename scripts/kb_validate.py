#!/usr/bin/env python3
"""Check the knowledge-base data files before they ship (maintainer script, not a test run).

    python scripts/kb_validate.py                 # the files inside gpudoctor/kb/data
    python scripts/kb_validate.py --data-dir DIR  # a copy being edited

Checks: every row has at least one source and every source key exists; a row whose
sources are all secondary says so in its note; driver and CUDA versions parse; within a
platform a newer CUDA release never needs an older driver; one GA row per CUDA minor; no
compute capability in two architecture rows; GPU names are unique once normalised, each
resolves to its own row (none is shadowed), and each row's architecture agrees with the
architecture table.  Prints a summary; exits 1 on any error.

``validate(data_dir)`` returns the list of errors, so a test can assert it is empty.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from gpudoctor import kb  # noqa: E402

DEFAULT_DATA_DIR = REPO / "gpudoctor" / "kb" / "data"
DRIVER_FILE = "driver_cuda.json"
GPU_FILE = "gpu_compute_capability.json"
STAGES = ("ga", "update", "rc")
CC_RE = re.compile(r"\d{1,2}\.\d")


def _load(path: pathlib.Path, errors: list[str]) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        errors.append(f"{path.name}: missing")
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        errors.append(f"{path.name}: not readable JSON: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{path.name}: top level is not an object")
        return None
    return data


def _check_header(name: str, data: dict[str, Any], errors: list[str]) -> dict[str, Any]:
    if not isinstance(data.get("as_of"), str) or not data.get("as_of"):
        errors.append(f"{name}: 'as_of' missing")
    sources = data.get("sources")
    if not isinstance(sources, dict) or not sources:
        errors.append(f"{name}: 'sources' missing or empty")
        return {}
    for key, source in sources.items():
        if not isinstance(source, dict) or not isinstance(source.get("title"), str) or not source["title"]:
            errors.append(f"{name}: source {key!r} has no title")
            continue
        url = source.get("url")
        if url is not None and not (isinstance(url, str) and url.startswith("https://")):
            errors.append(f"{name}: source {key!r} url is not an https URL: {url!r}")
        if not isinstance(source.get("secondary", False), bool):
            errors.append(f"{name}: source {key!r} 'secondary' is not true/false")
    return sources


def _check_sources(where: str, row: dict[str, Any], sources: dict[str, Any], errors: list[str]) -> None:
    keys = row.get("sources")
    if not isinstance(keys, list) or not keys:
        errors.append(f"{where}: no sources")
        return
    unknown = [key for key in keys if key not in sources]
    if unknown:
        errors.append(f"{where}: unknown source key(s) {unknown}")
        return
    if all(isinstance(sources[key], dict) and sources[key].get("secondary") for key in keys):
        note = row.get("note")
        if not (isinstance(note, str) and "secondary" in note.lower()):
            errors.append(f"{where}: every source is secondary but the note does not say so")


def _rows(name: str, data: dict[str, Any], key: str, errors: list[str]) -> list[dict[str, Any]]:
    rows = data.get(key)
    if not isinstance(rows, list) or not rows:
        errors.append(f"{name}: '{key}' missing or empty")
        return []
    good = [row for row in rows if isinstance(row, dict)]
    if len(good) != len(rows):
        errors.append(f"{name}: '{key}' has entries that are not objects")
    return good


def _check_driver_file(data: dict[str, Any], errors: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """Counts per table, and the compute capability -> architecture map the GPU file must agree with."""
    name = DRIVER_FILE
    sources = _check_header(name, data, errors)
    toolkit = _rows(name, data, "toolkit_driver", errors)
    seen_full: set[tuple[int, int, int]] = set()
    ga_count: dict[tuple[int, int], int] = {}
    ordered: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for row in toolkit:
        where = f"{name}: toolkit row {row.get('release')!r}"
        _check_sources(where, row, sources, errors)
        cuda = kb.parse_cuda_version(row.get("cuda"))
        full = kb.parse_cuda_version(row.get("cuda_full"))
        if cuda is None or cuda[2] is not None:
            errors.append(f"{where}: cuda {row.get('cuda')!r} is not 'major.minor'")
            continue
        if full is None or full[2] is None or full[:2] != cuda[:2]:
            errors.append(f"{where}: cuda_full {row.get('cuda_full')!r} is not 'X.Y.Z' of cuda {row.get('cuda')}")
            continue
        full3 = (full[0], full[1], full[2])
        if full3 in seen_full:
            errors.append(f"{where}: duplicate cuda_full {row.get('cuda_full')}")
        seen_full.add(full3)
        stage = row.get("stage")
        if stage not in STAGES:
            errors.append(f"{where}: stage {stage!r} is not one of {STAGES}")
        if stage == "ga":
            ga_count[cuda[:2]] = ga_count.get(cuda[:2], 0) + 1
        for column in ("linux_min", "windows_min"):
            value = row.get(column)
            if value is None:
                continue
            if kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        if row.get("linux_min") is None and not row.get("note"):
            errors.append(f"{where}: linux_min is null without a note saying why")
        ordered.append((full3, row))
    for minor in {kb.parse_cuda_version(r.get("cuda"))[:2] for _, r in ordered}:
        if ga_count.get(minor, 0) != 1:
            errors.append(f"{name}: CUDA {minor[0]}.{minor[1]} has {ga_count.get(minor, 0)} GA rows (want 1)")
    ordered.sort(key=lambda item: item[0])
    for column in ("linux_min", "windows_min"):
        previous: tuple[tuple[int, int, int], str, str] | None = None
        for full3, row in ordered:
            driver = kb.parse_driver_version(row.get(column))
            if driver is None:
                continue
            if previous is not None and driver < previous[0]:
                errors.append(
                    f"{name}: {column} not monotonic: CUDA {row.get('cuda_full')} needs {row.get(column)}, "
                    f"older than the {previous[2]} of CUDA {previous[1]}"
                )
            previous = (driver, str(row.get("cuda_full")), str(row.get(column)))

    mvc = _rows(name, data, "minor_version_compat", errors)
    majors: set[int] = set()
    for row in mvc:
        major = row.get("cuda_major")
        where = f"{name}: minor_version_compat row {major!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(major, int) or isinstance(major, bool):
            errors.append(f"{where}: cuda_major is not an integer")
            continue
        if major in majors:
            errors.append(f"{where}: duplicate cuda_major")
        majors.add(major)
        for column in ("linux_min", "windows_min"):
            value = row.get(column)
            if value is not None and kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        floor = kb.parse_driver_version(row.get("linux_min"))
        if floor is None:
            errors.append(f"{where}: linux_min missing")
            continue
        fulls = [
            kb.parse_driver_version(r.get("linux_min"))
            for _, r in ordered
            if kb.parse_cuda_version(r.get("cuda"))[0] == major and r.get("stage") == "ga"
        ]
        fulls = [value for value in fulls if value is not None]
        if fulls and floor > max(fulls):
            errors.append(f"{where}: floor {row.get('linux_min')} is above every full-support minimum of {major}.x")

    arch_rows = _rows(name, data, "architectures", errors)
    seen_cc: dict[str, str] = {}
    for row in arch_rows:
        where = f"{name}: architecture row {row.get('architecture')!r}"
        _check_sources(where, row, sources, errors)
        if not isinstance(row.get("architecture"), str) or not row.get("architecture"):
            errors.append(f"{where}: no architecture name")
        ccs = row.get("compute_capabilities")
        if not isinstance(ccs, list) or not ccs:
            errors.append(f"{where}: no compute_capabilities")
            continue
        for cc in ccs:
            if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
                errors.append(f"{where}: compute capability {cc!r} is not 'X.Y'")
                continue
            if cc in seen_cc:
                errors.append(f"{where}: compute capability {cc} also in {seen_cc[cc]!r}")
            seen_cc[cc] = str(row.get("architecture"))
    counts = {"toolkit_driver": len(toolkit), "minor_version_compat": len(mvc), "architectures": len(arch_rows)}
    return counts, seen_cc


def _check_gpu_file(data: dict[str, Any], cc_map: dict[str, str], errors: list[str]) -> dict[str, int]:
    name = GPU_FILE
    sources = _check_header(name, data, errors)
    gpus = _rows(name, data, "gpus", errors)
    seen: dict[tuple[str, ...], str] = {}
    for row in gpus:
        match = row.get("match")
        where = f"{name}: gpu {match!r}"
        _check_sources(where, row, sources, errors)
        tokens = kb.normalize_gpu_name(match)
        if not tokens:
            errors.append(f"{where}: empty match name")
            continue
        if tokens in seen:
            errors.append(f"{where}: duplicate match name (same as {seen[tokens]!r} once normalised)")
        seen[tokens] = str(match)
        cc = row.get("compute_capability")
        if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
            errors.append(f"{where}: compute_capability {cc!r} is not 'X.Y'")
            continue
        expected = cc_map.get(cc)
        if expected is None:
            errors.append(f"{where}: compute capability {cc} is in no architecture row")
        elif row.get("architecture") != expected:
            errors.append(f"{where}: architecture {row.get('architecture')!r} but {cc} is {expected!r}")
    index = kb.build_name_index(gpus)
    for row in gpus:
        match = row.get("match")
        if not kb.normalize_gpu_name(match):
            continue
        found, _truncated = kb.match_name(match, index)
        if not found or found[0] is not row:
            other = found[0].get("match") if found else None
            errors.append(f"{name}: gpu {match!r} does not resolve to its own row (got {other!r})")
    return {"gpus": len(gpus)}


def validate(data_dir: pathlib.Path | str | None = None) -> list[str]:
    """Every problem found in the data files under ``data_dir`` (default: the shipped ones)."""
    errors: list[str] = []
    validate_with_counts(data_dir, errors)
    return errors


def validate_with_counts(data_dir: pathlib.Path | str | None, errors: list[str]) -> dict[str, dict[str, int]]:
    base = pathlib.Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    counts: dict[str, dict[str, int]] = {}
    cc_map: dict[str, str] = {}
    driver = _load(base / DRIVER_FILE, errors)
    if driver is not None:
        counts[DRIVER_FILE], cc_map = _check_driver_file(driver, errors)
    gpus = _load(base / GPU_FILE, errors)
    if gpus is not None:
        counts[GPU_FILE] = _check_gpu_file(gpus, cc_map, errors)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate the gpudoctor knowledge-base data files.")
    parser.add_argument("--data-dir", type=pathlib.Path, default=DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    errors: list[str] = []
    counts = validate_with_counts(args.data_dir, errors)
    for filename, rows in counts.items():
        summary = ", ".join(f"{key} {value}" for key, value in rows.items())
        print(f"{filename}: {summary}")
    if errors:
        print(f"{len(errors)} error(s):")
        for error in errors:
            print(f"  - {error}")
        return 1
    print("ok: every row sourced, versions parse, driver minimums monotonic, GPU names unique")
    return 0


if __name__ == "__main__":
    sys.exit(main())
