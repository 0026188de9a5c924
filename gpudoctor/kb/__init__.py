"""The knowledge base room: what NVIDIA's and the frameworks' tables say, as data with a source on every row.

The data lives in ``gpudoctor/kb/data/*.json`` (shipped inside the package) and is read
lazily, once, the first time a lookup needs it: importing this module reads no file and
imports nothing beyond the standard library, so ``gpudoctor --version`` stays fast.

Every lookup is a pure function of its arguments and the data; junk in gives ``None``
(or a verdict whose status is ``"unknown"``), never an exception.  The data files are
checked by ``scripts/kb_validate.py`` (every row sourced, versions parse, newer CUDA never
needs an older driver, no duplicate GPU names).

The framework part (``frameworks``, split into ``torch_wheels``, ``torch_choice``,
``tensorflow_builds`` and ``arch_coverage``) answers which PyTorch / TensorFlow / JAX / CuPy
build fits a machine and whether a build's GPU arch list covers a GPU; ``describe`` renders
the data for ``gpudoctor kb``.

Driver versions compare as integer tuples ("570.124.06" > "570.26"); CUDA versions are
"major.minor" strings ("12.2"), with an optional patch ("12.2.2") where a lookup accepts one.
"""

from __future__ import annotations

from gpudoctor.kb.arch_coverage import ArchCoverage, arch_list_covers, parse_arch_list, parse_compute_capability
from gpudoctor.kb.driver_cuda import (
    DriverCudaVerdict, driver_runs_cuda, max_cuda_for_driver, min_driver_for_cuda, mvc_floor,
)
from gpudoctor.kb.frameworks import (
    CudnnMajor, cudnn_major, cudnn_min_compute_capability, cupy_package_for_cuda, jax_cuda_extra,
    jax_install_requirement,
)
from gpudoctor.kb.gpu_names import (
    GpuCapability, architecture_for_cc, build_name_index, compute_capability_for_name, match_name,
    normalize_gpu_name,
)
from gpudoctor.kb.loading import DATA_FILES, _load, kb_info
from gpudoctor.kb.python_versions import parse_python_version
from gpudoctor.kb.tensorflow_builds import TfChoice, TfRelease, choose_tensorflow, tf_release, tf_releases
from gpudoctor.kb.torch_choice import WheelChoice, choose_torch_wheel
from gpudoctor.kb.torch_wheels import (
    TorchRelease, TorchVariant, torch_release, torch_releases, torch_variant, wheel_driver_floor,
)
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version

__all__ = [
    "ArchCoverage", "CudnnMajor", "DATA_FILES", "DriverCudaVerdict", "GpuCapability", "TfChoice", "TfRelease",
    "TorchRelease", "TorchVariant", "WheelChoice", "arch_list_covers", "architecture_for_cc", "build_name_index",
    "choose_tensorflow", "choose_torch_wheel", "compute_capability_for_name", "cudnn_major",
    "cudnn_min_compute_capability", "cupy_package_for_cuda", "driver_runs_cuda", "jax_cuda_extra",
    "jax_install_requirement", "kb_info", "match_name", "max_cuda_for_driver", "min_driver_for_cuda", "mvc_floor",
    "normalize_gpu_name", "parse_arch_list", "parse_compute_capability", "parse_cuda_version",
    "parse_driver_version", "parse_python_version", "tf_release", "tf_releases", "torch_release", "torch_releases",
    "torch_variant", "wheel_driver_floor", "_load",
]
