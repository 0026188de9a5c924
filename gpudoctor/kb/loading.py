"""Reading the knowledge base's data files (lazily, once) and describing what they hold."""

from __future__ import annotations

import functools
import json
from typing import Any

DATA_FILES = ("driver_cuda.json", "gpu_compute_capability.json")


# --------------------------------------------------------------------------- loading


@functools.lru_cache(maxsize=None)
def _load(filename: str) -> dict[str, Any]:
    """One data file, parsed once (importlib.resources, so it works from a wheel or zip)."""
    from importlib import resources

    text = resources.files("gpudoctor.kb").joinpath("data").joinpath(filename).read_text(encoding="utf-8")
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
