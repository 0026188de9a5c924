"""python_gpu_packages.json: JAX's CUDA extras (driver floors from the driver table), its release rows (newest
first, Python ranges, extras that exist, jaxlib at or below the release) and CuPy's package names."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor import kb
from kbtools.sources import check_header, check_key_list, check_sources
from kbtools.validate.common import CC_RE, driver_lookup, python_range, table_rows

PACKAGES_FILE = "python_gpu_packages.json"


def check_packages_file(data: dict[str, Any], driver: dict[str, Any] | None, errors: list[str]) -> dict[str, int]:
    name = PACKAGES_FILE
    sources = check_header(name, data, errors)
    _ga, floors = driver_lookup(driver)
    jax: dict[str, Any] = data["jax"] if isinstance(data.get("jax"), dict) else {}
    cupy: dict[str, Any] = data["cupy"] if isinstance(data.get("cupy"), dict) else {}
    extras = table_rows(f"{name} jax", jax, "extras", errors)
    packages = table_rows(f"{name} cupy", cupy, "packages", errors)
    check_key_list(f"{name}: jax platforms", jax, "platform_sources", sources, errors, required=True)
    seen: set[str] = set()
    for row in extras:
        extra = row.get("extra")
        where = f"{name}: jax[{extra}]"
        check_sources(where, row, sources, errors)
        match = re.fullmatch(r"cuda(\d{2})", extra) if isinstance(extra, str) else None
        if match is None or row.get("cuda_major") != int(match.group(1)):
            errors.append(f"{where}: extra and cuda_major {row.get('cuda_major')!r} disagree")
            continue
        if extra in seen:
            errors.append(f"{where}: duplicate extra")
        seen.add(str(extra))  # a cudaNN string by now
        floor = row.get("linux_driver_min")
        if kb.parse_driver_version(floor) is None:
            errors.append(f"{where}: linux_driver_min {floor!r} is not a driver version")
        elif driver is not None and floors.get(row["cuda_major"]) != floor:
            errors.append(
                f"{where}: linux_driver_min {floor} but the driver table's CUDA "
                f"{row['cuda_major']}.x floor is {floors.get(row['cuda_major'])!r}"
            )
        branch = row.get("driver_branch_min")
        if kb.parse_driver_version(floor) and isinstance(branch, str) and branch.isdigit():
            if kb.parse_driver_version(floor)[0] < int(branch):
                errors.append(f"{where}: linux_driver_min {floor} is below its branch R{branch}")
        cc = row.get("min_compute_capability")
        if not isinstance(cc, str) or not CC_RE.fullmatch(cc):
            errors.append(f"{where}: min_compute_capability {cc!r} is not 'X.Y'")
    releases = table_rows(f"{name} jax", jax, "releases", errors)
    known_extras = seen
    seen_releases: list[tuple[int, ...]] = []
    for row in releases:
        version = row.get("version")
        where = f"{name}: jax {version}"
        check_sources(where, row, sources, errors)
        if not isinstance(version, str) or not re.fullmatch(r"\d+(\.\d+){2,3}", version):
            errors.append(f"{where}: version is not 'X.Y.Z'")
            continue
        key = tuple(int(x) for x in version.split("."))  # all parts: 0.9.0.1 is not 0.9.0
        if key in seen_releases:
            errors.append(f"{where}: duplicate release")
        elif seen_releases and key > seen_releases[-1]:
            errors.append(f"{where}: releases are not newest first")
        seen_releases.append(key)
        python_range(where, row, errors)
        if row.get("python_min") is None or row.get("python_max") is None:
            errors.append(f"{where}: python_min and python_max are both needed")
        extras_of = row.get("extras")
        if not isinstance(extras_of, list) or not extras_of or not all(isinstance(x, str) for x in extras_of):
            errors.append(f"{where}: extras is not a non-empty list of extra names")
        elif set(extras_of) - known_extras:
            errors.append(f"{where}: extras {sorted(set(extras_of) - known_extras)} are not in jax.extras")
        jaxlib = row.get("jaxlib")
        if jaxlib is not None and (
            not isinstance(jaxlib, str)
            or not re.fullmatch(r"\d+(\.\d+){2,3}", jaxlib)
            or tuple(int(x) for x in jaxlib.split(".")) > key
        ):
            errors.append(f"{where}: jaxlib {jaxlib!r} is not a version at or below the release")
    seen_packages: set[str] = set()
    for row in packages:
        package = row.get("package")
        where = f"{name}: {package!r}"
        check_sources(where, row, sources, errors)
        major = row.get("cuda_major")
        if not isinstance(major, int) or package != f"cupy-cuda{major}x":
            errors.append(f"{where}: package name and cuda_major {major!r} disagree")
        if package in seen_packages:
            errors.append(f"{where}: duplicate package")
        seen_packages.add(str(package))
    return {"jax_extras": len(extras), "jax_releases": len(releases), "cupy_packages": len(packages)}
