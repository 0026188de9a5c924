"""tensorflow.json from table 3 of the reference: each release's tested CUDA / cuDNN, Python range, the
``[and-cuda]`` extra, native Windows GPU support and the driver columns derived from the driver table."""

from __future__ import annotations

from typing import Any

from gpudoctor.kb.python_versions import parse_python_range
from gpudoctor.kb.versions import parse_driver_version
from kbtools.common import merge, release_key, split_keys
from kbtools.refresh.pypi import SOURCE_KEY, newest_words
from kbtools.sources import collect_sources, flag_secondary, header


def _strip_ge(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    value = text.strip().lstrip(">=").strip()
    return value if parse_driver_version(value) else None


def build_tensorflow(reference: dict[str, Any]) -> dict[str, Any]:
    table = reference["table3_tensorflow"]
    used: list[str] = ["T3_131", "MVC"]  # the driver columns are derived from table 1
    releases = []
    for raw in table.get("releases", []):
        keys = split_keys(raw.get("source"))
        used = merge(used, keys)
        python_min, python_max, python_note = parse_python_range(raw.get("python"))
        releases.append(
            {
                "version": raw.get("tensorflow"),
                "python": raw.get("python"),
                "python_min": python_min,
                "python_max": python_max,
                "python_note": python_note,
                "cuda": raw.get("tested_cuda"),
                "cudnn": raw.get("tested_cudnn"),
                "and_cuda": bool(raw.get("and_cuda_extra")),
                "windows_native_gpu": bool(raw.get("windows_native_gpu")),
                "linux_driver_min": _strip_ge(raw.get("linux_driver_toolkit_level")),
                "linux_driver_mvc_floor": _strip_ge(raw.get("linux_driver_mvc_floor")),
                "driver_sources": ["T3_131", "MVC"],
                "note": None,
                "sources": keys,
            }
        )
    releases.sort(key=lambda row: release_key(str(row["version"])), reverse=True)
    and_cuda_sources = split_keys(table.get("and_cuda_source"))
    used = merge(used, and_cuda_sources, split_keys(table.get("source")), [SOURCE_KEY])
    sources = collect_sources(reference, used)
    for row in releases:
        flag_secondary(row, sources)
    return {
        **header(reference, "table3_tensorflow", f"{table.get('as_of')} {newest_words('tensorflow')}"),
        "notes": [
            "cuda / cudnn: the tested build configuration. linux_driver_min: the CUDA release notes' driver for "
            "that CUDA (full support); linux_driver_mvc_floor: the least driver that runs that CUDA major through "
            "minor-version compatibility. Both are derived from the driver table, not stated per release by Google.",
            str(table.get("windows")),
            str(table.get("driver_doc")),
            str(table.get("gpu_arch_doc")),
        ],
        "and_cuda_mechanism": table.get("and_cuda_mechanism"),
        "and_cuda_sources": and_cuda_sources,
        "sources": sources,
        "releases": releases,
    }
