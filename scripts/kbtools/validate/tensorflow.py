"""tensorflow.json: releases unique and newest first, Python ranges, and the driver columns equal to what the driver
table (in the same data directory) says for the tested CUDA."""

from __future__ import annotations

import re
from typing import Any

from gpudoctor import kb
from kbtools.common import release_key
from kbtools.sources import check_header, check_key_list, check_sources
from kbtools.validate.common import driver_lookup, python_range, table_rows

TF_FILE = "tensorflow.json"


def check_tf_file(data: dict[str, Any], driver: dict[str, Any] | None, errors: list[str]) -> dict[str, int]:
    name = TF_FILE
    sources = check_header(name, data, errors)
    releases = table_rows(name, data, "releases", errors)
    ga, floors = driver_lookup(driver)
    seen: set[tuple[int, ...]] = set()
    previous: tuple[int, ...] | None = None
    for row in releases:
        version = row.get("version")
        where = f"{name}: TensorFlow {version!r}"
        check_sources(where, row, sources, errors)
        check_key_list(where, row, "driver_sources", sources, errors, required=True)
        if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+\.\d+", version):
            errors.append(f"{where}: version is not 'X.Y.Z'")
            continue
        key = release_key(version)
        if key[:2] in seen:
            errors.append(f"{where}: duplicate release {key[0]}.{key[1]}")
        seen.add(key[:2])
        if previous is not None and key >= previous:
            errors.append(f"{where}: releases are not ordered newest first")
        previous = key
        python_range(where, row, errors)
        cuda = kb.parse_cuda_version(row.get("cuda"))
        if cuda is None:
            errors.append(f"{where}: cuda {row.get('cuda')!r} does not parse")
            continue
        for column in ("and_cuda", "windows_native_gpu"):
            if not isinstance(row.get(column), bool):
                errors.append(f"{where}: {column} is not true/false")
        if row.get("windows_native_gpu") is True and key[:2] > (2, 10):
            errors.append(f"{where}: native Windows GPU after 2.10")
        for column in ("linux_driver_min", "linux_driver_mvc_floor"):
            value = row.get(column)
            if value is not None and kb.parse_driver_version(value) is None:
                errors.append(f"{where}: {column} {value!r} is not a driver version")
        if driver is not None:
            expected = ga.get((cuda[0], cuda[1]))
            if row.get("linux_driver_min") != expected:
                errors.append(
                    f"{where}: linux_driver_min {row.get('linux_driver_min')!r} but the driver table says "
                    f"{expected!r} for CUDA {cuda[0]}.{cuda[1]}"
                )
            floor = floors.get(cuda[0])
            if row.get("linux_driver_mvc_floor") != floor:
                errors.append(
                    f"{where}: linux_driver_mvc_floor {row.get('linux_driver_mvc_floor')!r} but the driver "
                    f"table's CUDA {cuda[0]}.x floor is {floor!r}"
                )
    return {"releases": len(releases)}
