"""The knowledge base room: what NVIDIA's and the frameworks' tables say, as data with a source on every row.

The data lives in ``gpudoctor/kb/data/*.json`` (shipped inside the package) and is read
lazily, once, the first time a lookup needs it: importing this module reads no file and
imports nothing beyond the standard library, so ``gpudoctor --version`` stays fast.

Every lookup is a pure function of its arguments and the data; junk in gives ``None``
(or a verdict whose status is ``"unknown"``), never an exception.  The data files are
checked by ``scripts/kb_validate.py`` (every row sourced, versions parse, newer CUDA never
needs an older driver, no duplicate GPU names).

``gpu_specs`` holds the spec sheets (peak TFLOP/s, memory bandwidth, PCIe, NVLink) and the
PCIe rate per generation, against which a smoke run's measurements are judged.

The framework part (``frameworks``, split into ``torch_wheels``, ``torch_choice``,
``tensorflow_builds`` and ``arch_coverage``) answers which PyTorch / TensorFlow / JAX / CuPy
build fits a machine and whether a build's GPU arch list covers a GPU; ``describe`` renders
the data for ``gpudoctor kb``.

``xid`` reads Xid codes by meaning (``xid_info(79)``: "GPU has fallen off the bus", severity,
action, commands); ``health_limits`` holds the thresholds the health checks judge against (DCGM's
retired-page limit, row remapping, persistence-mode brands, the temperature margin).

Driver versions compare as integer tuples ("570.124.06" > "570.26"); CUDA versions are
"major.minor" strings ("12.2"), with an optional patch ("12.2.2") where a lookup accepts one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each public name -> the module that defines it.  Imported on first use (PEP 562): the framework
# tables take tens of milliseconds to import, and a run on a machine without GPU frameworks never
# needs them.
_HOMES = {
    "gpudoctor.kb.arch_coverage": ("ArchCoverage", "arch_list_covers", "parse_arch_list", "parse_compute_capability"),
    "gpudoctor.kb.docker_choice": ("choose_cuda_image",),
    "gpudoctor.kb.docker_images": (
        "CudaImage",
        "image_tag",
        "is_published",
        "os_tokens",
        "published_images",
    ),
    "gpudoctor.kb.driver_cuda": (
        "DriverCudaVerdict",
        "driver_runs_cuda",
        "max_cuda_for_driver",
        "min_driver_for_cuda",
        "mvc_floor",
    ),
    "gpudoctor.kb.frameworks": (
        "CudnnMajor",
        "cudnn_major",
        "cudnn_min_compute_capability",
        "cupy_package_for_cuda",
        "jax_cuda_extra",
        "jax_install_requirement",
    ),
    "gpudoctor.kb.gpu_specs": (
        "GpuSpec",
        "gpu_spec_for_name",
        "max_nvlinks_per_gpu",
        "nvlink_rate_gbps",
        "pcie_gen_for_speed",
        "pcie_rate_gbps",
    ),
    "gpudoctor.kb.health_limits": (
        "HealthLimit",
        "all_health_limits",
        "health_limit",
        "is_datacenter_brand",
        "near_slowdown",
        "nvlink_crc_rate_limit",
        "pcie_replay_rate_limit",
        "retired_pages_capacity",
        "retired_pages_dbe_soft_limit",
        "retired_pages_limit",
        "retired_pages_over_limit",
        "row_remap_bank_limit",
        "row_remap_capacity",
        "temperature_margin_c",
    ),
    "gpudoctor.kb.gpu_names": (
        "GpuCapability",
        "architecture_for_cc",
        "build_name_index",
        "compute_capability_for_name",
        "match_name",
        "normalize_gpu_name",
    ),
    "gpudoctor.kb.loading": ("DATA_FILES", "_load", "kb_info"),
    "gpudoctor.kb.python_versions": ("parse_python_version",),
    "gpudoctor.kb.tensorflow_builds": ("TfChoice", "TfRelease", "choose_tensorflow", "tf_release", "tf_releases"),
    "gpudoctor.kb.torch_choice": ("WheelChoice", "choose_torch_wheel"),
    "gpudoctor.kb.torch_wheels": (
        "TorchRelease",
        "TorchVariant",
        "torch_release",
        "torch_releases",
        "torch_variant",
        "wheel_driver_floor",
    ),
    "gpudoctor.kb.versions": ("major", "major_minor", "parse_cuda_version", "parse_driver_version"),
    "gpudoctor.kb.xid": ("XidInfo", "describe_xid", "recovery_action_severity", "xid_codes", "xid_info"),
}
if TYPE_CHECKING:  # the same names, typed for mypy; at run time __getattr__ imports them on first use
    from gpudoctor.kb.arch_coverage import (
        ArchCoverage as ArchCoverage,
    )
    from gpudoctor.kb.arch_coverage import (
        arch_list_covers as arch_list_covers,
    )
    from gpudoctor.kb.arch_coverage import (
        parse_arch_list as parse_arch_list,
    )
    from gpudoctor.kb.arch_coverage import (
        parse_compute_capability as parse_compute_capability,
    )
    from gpudoctor.kb.docker_choice import (
        choose_cuda_image as choose_cuda_image,
    )
    from gpudoctor.kb.docker_images import (
        CudaImage as CudaImage,
    )
    from gpudoctor.kb.docker_images import (
        image_tag as image_tag,
    )
    from gpudoctor.kb.docker_images import (
        is_published as is_published,
    )
    from gpudoctor.kb.docker_images import (
        os_tokens as os_tokens,
    )
    from gpudoctor.kb.docker_images import (
        published_images as published_images,
    )
    from gpudoctor.kb.driver_cuda import (
        DriverCudaVerdict as DriverCudaVerdict,
    )
    from gpudoctor.kb.driver_cuda import (
        driver_runs_cuda as driver_runs_cuda,
    )
    from gpudoctor.kb.driver_cuda import (
        max_cuda_for_driver as max_cuda_for_driver,
    )
    from gpudoctor.kb.driver_cuda import (
        min_driver_for_cuda as min_driver_for_cuda,
    )
    from gpudoctor.kb.driver_cuda import (
        mvc_floor as mvc_floor,
    )
    from gpudoctor.kb.frameworks import (
        CudnnMajor as CudnnMajor,
    )
    from gpudoctor.kb.frameworks import (
        cudnn_major as cudnn_major,
    )
    from gpudoctor.kb.frameworks import (
        cudnn_min_compute_capability as cudnn_min_compute_capability,
    )
    from gpudoctor.kb.frameworks import (
        cupy_package_for_cuda as cupy_package_for_cuda,
    )
    from gpudoctor.kb.frameworks import (
        jax_cuda_extra as jax_cuda_extra,
    )
    from gpudoctor.kb.frameworks import (
        jax_install_requirement as jax_install_requirement,
    )
    from gpudoctor.kb.gpu_names import (
        GpuCapability as GpuCapability,
    )
    from gpudoctor.kb.gpu_names import (
        architecture_for_cc as architecture_for_cc,
    )
    from gpudoctor.kb.gpu_names import (
        build_name_index as build_name_index,
    )
    from gpudoctor.kb.gpu_names import (
        compute_capability_for_name as compute_capability_for_name,
    )
    from gpudoctor.kb.gpu_names import (
        match_name as match_name,
    )
    from gpudoctor.kb.gpu_names import (
        normalize_gpu_name as normalize_gpu_name,
    )
    from gpudoctor.kb.gpu_specs import (
        GpuSpec as GpuSpec,
    )
    from gpudoctor.kb.gpu_specs import (
        gpu_spec_for_name as gpu_spec_for_name,
    )
    from gpudoctor.kb.gpu_specs import (
        max_nvlinks_per_gpu as max_nvlinks_per_gpu,
    )
    from gpudoctor.kb.gpu_specs import (
        nvlink_rate_gbps as nvlink_rate_gbps,
    )
    from gpudoctor.kb.gpu_specs import (
        pcie_gen_for_speed as pcie_gen_for_speed,
    )
    from gpudoctor.kb.gpu_specs import (
        pcie_rate_gbps as pcie_rate_gbps,
    )
    from gpudoctor.kb.health_limits import (
        HealthLimit as HealthLimit,
    )
    from gpudoctor.kb.health_limits import (
        all_health_limits as all_health_limits,
    )
    from gpudoctor.kb.health_limits import (
        health_limit as health_limit,
    )
    from gpudoctor.kb.health_limits import (
        is_datacenter_brand as is_datacenter_brand,
    )
    from gpudoctor.kb.health_limits import (
        near_slowdown as near_slowdown,
    )
    from gpudoctor.kb.health_limits import (
        nvlink_crc_rate_limit as nvlink_crc_rate_limit,
    )
    from gpudoctor.kb.health_limits import (
        pcie_replay_rate_limit as pcie_replay_rate_limit,
    )
    from gpudoctor.kb.health_limits import (
        retired_pages_capacity as retired_pages_capacity,
    )
    from gpudoctor.kb.health_limits import (
        retired_pages_dbe_soft_limit as retired_pages_dbe_soft_limit,
    )
    from gpudoctor.kb.health_limits import (
        retired_pages_limit as retired_pages_limit,
    )
    from gpudoctor.kb.health_limits import (
        retired_pages_over_limit as retired_pages_over_limit,
    )
    from gpudoctor.kb.health_limits import (
        row_remap_bank_limit as row_remap_bank_limit,
    )
    from gpudoctor.kb.health_limits import (
        row_remap_capacity as row_remap_capacity,
    )
    from gpudoctor.kb.health_limits import (
        temperature_margin_c as temperature_margin_c,
    )
    from gpudoctor.kb.loading import (
        DATA_FILES as DATA_FILES,
    )
    from gpudoctor.kb.loading import (
        kb_info as kb_info,
    )
    from gpudoctor.kb.python_versions import (
        parse_python_version as parse_python_version,
    )
    from gpudoctor.kb.tensorflow_builds import (
        TfChoice as TfChoice,
    )
    from gpudoctor.kb.tensorflow_builds import (
        TfRelease as TfRelease,
    )
    from gpudoctor.kb.tensorflow_builds import (
        choose_tensorflow as choose_tensorflow,
    )
    from gpudoctor.kb.tensorflow_builds import (
        tf_release as tf_release,
    )
    from gpudoctor.kb.tensorflow_builds import (
        tf_releases as tf_releases,
    )
    from gpudoctor.kb.torch_choice import (
        WheelChoice as WheelChoice,
    )
    from gpudoctor.kb.torch_choice import (
        choose_torch_wheel as choose_torch_wheel,
    )
    from gpudoctor.kb.torch_wheels import (
        TorchRelease as TorchRelease,
    )
    from gpudoctor.kb.torch_wheels import (
        TorchVariant as TorchVariant,
    )
    from gpudoctor.kb.torch_wheels import (
        torch_release as torch_release,
    )
    from gpudoctor.kb.torch_wheels import (
        torch_releases as torch_releases,
    )
    from gpudoctor.kb.torch_wheels import (
        torch_variant as torch_variant,
    )
    from gpudoctor.kb.torch_wheels import (
        wheel_driver_floor as wheel_driver_floor,
    )
    from gpudoctor.kb.versions import (
        major as major,
    )
    from gpudoctor.kb.versions import (
        major_minor as major_minor,
    )
    from gpudoctor.kb.versions import (
        parse_cuda_version as parse_cuda_version,
    )
    from gpudoctor.kb.versions import (
        parse_driver_version as parse_driver_version,
    )
    from gpudoctor.kb.xid import (
        XidInfo as XidInfo,
    )
    from gpudoctor.kb.xid import (
        describe_xid as describe_xid,
    )
    from gpudoctor.kb.xid import (
        recovery_action_severity as recovery_action_severity,
    )
    from gpudoctor.kb.xid import (
        xid_codes as xid_codes,
    )
    from gpudoctor.kb.xid import (
        xid_info as xid_info,
    )

_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'gpudoctor.kb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_MODULE_OF))


# Every lazy name, exactly the table above (one home: the table).
__all__ = sorted(_MODULE_OF)
