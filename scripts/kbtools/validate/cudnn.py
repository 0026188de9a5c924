"""cudnn.json: one row per major, library and pip names that carry the major, minimum compute capabilities."""

from __future__ import annotations

import re
from typing import Any

from kbtools.sources import check_header, check_sources
from kbtools.validate.common import CC_RE, table_rows

CUDNN_FILE = "cudnn.json"


def check_cudnn_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = CUDNN_FILE
    sources = check_header(name, data, errors)
    majors = table_rows(name, data, "majors", errors)
    seen: set[int] = set()
    for row in majors:
        major = row.get("major")
        where = f"{name}: cuDNN {major!r}"
        check_sources(where, row, sources, errors)
        if not isinstance(major, int) or isinstance(major, bool):
            errors.append(f"{where}: major is not an integer")
            continue
        if major in seen:
            errors.append(f"{where}: duplicate major")
        seen.add(major)
        libraries = row.get("libraries")
        if not isinstance(libraries, list) or not libraries:
            errors.append(f"{where}: no libraries")
        else:
            for lib in libraries:
                if not isinstance(lib, str) or not re.fullmatch(rf"libcudnn\w*\.so\.{major}", lib):
                    errors.append(f"{where}: library {lib!r} is not libcudnn*.so.{major}")
        for pip in row.get("pip_packages", []) or []:
            if not isinstance(pip, str) or not re.fullmatch(r"nvidia-cudnn-cu\d{2}", pip):
                errors.append(f"{where}: pip package {pip!r} is not nvidia-cudnn-cuNN")
        cc = row.get("min_compute_capability")
        if cc is not None and (not isinstance(cc, str) or not CC_RE.fullmatch(cc)):
            errors.append(f"{where}: min_compute_capability {cc!r} is not 'X.Y'")
        steps = row.get("min_compute_capability_from", []) or []
        for step in steps:
            ok = (
                isinstance(step, list)
                and len(step) == 2
                and isinstance(step[0], str)
                and re.fullmatch(rf"{major}\.\d+\.\d+", step[0])
                and isinstance(step[1], str)
                and CC_RE.fullmatch(step[1])
            )
            if not ok:
                errors.append(f"{where}: min_compute_capability_from entry {step!r} is not [version, 'X.Y']")
        if cc is None and not steps:
            errors.append(f"{where}: no minimum compute capability at all")
    return {"majors": len(majors)}
