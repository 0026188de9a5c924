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

from gpudoctor.kb.driver_cuda import (
    DriverCudaVerdict, driver_runs_cuda, max_cuda_for_driver, min_driver_for_cuda, mvc_floor,
)
from gpudoctor.kb.gpu_names import (
    GpuCapability, architecture_for_cc, build_name_index, compute_capability_for_name, match_name,
    normalize_gpu_name,
)
from gpudoctor.kb.loading import DATA_FILES, _load, kb_info
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version

__all__ = [
    "DATA_FILES", "DriverCudaVerdict", "GpuCapability", "architecture_for_cc", "build_name_index",
    "compute_capability_for_name", "driver_runs_cuda", "kb_info", "match_name", "max_cuda_for_driver",
    "min_driver_for_cuda", "mvc_floor", "normalize_gpu_name", "parse_cuda_version", "parse_driver_version",
    "_load",
]
