"""driver_cuda.json: the toolkit -> driver rows (versions parse, one GA per CUDA minor, minimums monotonic per
platform), the minor-version-compatibility floors and the architecture rows (no compute capability twice)."""

from __future__ import annotations

from typing import Any

from gpudoctor import kb
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import CC_RE, table_rows

DRIVER_FILE = "driver_cuda.json"
STAGES = ("ga", "update", "rc")


def check_driver_file(data: dict[str, Any], errors: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    """Counts per table, and the compute capability -> architecture map the GPU file must agree with."""
    name = DRIVER_FILE
    sources = check_header(name, data, errors)
    toolkit = table_rows(name, data, "toolkit_driver", errors)
    seen_full: set[tuple[int, int, int]] = set()
    ga_count: dict[tuple[int, int], int] = {}
    ordered: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for row in toolkit:
        where = f"{name}: toolkit row {row.get('release')!r}"
        check_sources(where, row, sources, errors)
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
        for _full3, row in ordered:
            driver = kb.parse_driver_version(row.get(column))
            if driver is None:
                continue
            if previous is not None and driver < previous[0]:
                errors.append(
                    f"{name}: {column} not monotonic: CUDA {row.get('cuda_full')} needs {row.get(column)}, "
                    f"older than the {previous[2]} of CUDA {previous[1]}"
                )
            previous = (driver, str(row.get("cuda_full")), str(row.get(column)))

    mvc = table_rows(name, data, "minor_version_compat", errors)
    majors: set[int] = set()
    for row in mvc:
        major = row.get("cuda_major")
        where = f"{name}: minor_version_compat row {major!r}"
        check_sources(where, row, sources, errors)
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

    arch_rows = table_rows(name, data, "architectures", errors)
    seen_cc: dict[str, str] = {}
    for row in arch_rows:
        where = f"{name}: architecture row {row.get('architecture')!r}"
        check_sources(where, row, sources, errors)
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
