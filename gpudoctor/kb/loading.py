"""Reading the knowledge base's data files (lazily, once) and describing what they hold."""

from __future__ import annotations

import functools
import json
from typing import Any

DATA_FILES = (
    "driver_cuda.json",
    "gpu_compute_capability.json",
    "pytorch.json",
    "tensorflow.json",
    "cudnn.json",
    "python_gpu_packages.json",
    "gpu_specs.json",
    "pcie.json",
    "nvlink.json",
    "xid.json",
    "health_limits.json",
    "docker_cuda.json",
    "apple_mps.json",
    "rocm_targets.json",
    "rocm_wheels.json",
    "rocm_images.json",
    "rocm_driver_compat.json",
    "rocm_install.json",
    "gpu_specs_amd.json",
    "intel_xpu.json",
    "cloud_instances.json",
    "cloud_providers.json",
    "notebook_platforms.json",
    "ngc_containers.json",
    "pip_pins.json",
)

# What each file holds, in a line (for ``gpudoctor kb``).
DESCRIPTIONS = {
    "xid": "NVIDIA Xid error codes: meaning, severity, what to do",
    "health_limits": "GPU health limits: retired pages, row remapping, temperature margin, datacenter brands",
    "nvlink": "NVLink generations: links per GPU and the bandwidth of one link",
    "driver_cuda": "NVIDIA driver <-> CUDA toolkit minimums, minor-version compatibility floors, architectures",
    "gpu_compute_capability": "GPU names -> compute capability and architecture",
    "pytorch": "PyTorch releases: CUDA variants, cuDNN pins, GPU arch lists, Python range, Windows wheels",
    "tensorflow": "TensorFlow releases: tested CUDA/cuDNN, Python range, [and-cuda], driver floors",
    "cudnn": "cuDNN majors: CUDA range, minimum compute capability, library files, pip packages",
    "python_gpu_packages": "JAX CUDA extras (jax[cuda12]/jax[cuda13]) and CuPy packages (cupy-cudaNNx)",
    "gpu_specs": "GPU spec sheets: memory bandwidth, FP32/TF32/FP16/BF16 peak TFLOP/s, PCIe link, NVLink",
    "docker_cuda": "nvidia/cuda image tags: CUDA release x OS x flavor, published or secondary only",
    "apple_mps": "Apple MPS: the macOS each PyTorch release needs, the last Intel-Mac wheels, Apple's install commands",
    "rocm_targets": "AMD gfx targets: family, products, support per ROCm release, PyTorch wheel targets, overrides",
    "rocm_wheels": "PyTorch's ROCm wheels: the ROCm variants each release publishes, and their index",
    "rocm_images": "rocm/dev-ubuntu image tags AMD builds, per ROCm release and Ubuntu",
    "rocm_driver_compat": "AMD GPU Driver (amdgpu) release -> the ROCm user space it supports; module versions mapped",
    "rocm_install": "ROCm install steps: repo.radeon.com repositories, signing key, amdgpu-install packages",
    "gpu_specs_amd": "AMD GPU spec sheets (merged into gpu_specs): memory, bandwidth, peak TFLOP/s, PCIe",
    "intel_xpu": "Intel GPUs: PyTorch's XPU wheel index, validated GPUs and OSes, Level Zero packages",
    "pcie": "PCIe generations: transfer rate, encoding, GB/s per lane and per x16 link, per direction",
    "cloud_instances": "Cloud GPU instance types: GPUs, memory, interconnect, network, GPU images",
    "cloud_providers": "Clouds and how each names itself in DMI and cloud-init",
    "notebook_platforms": "Hosted notebook platforms: markers, the platform's own way to a GPU",
    "ngc_containers": "NGC framework containers: CUDA, the driver each release needs, forward-compat branches",
    "pip_pins": "CUDA-library pins (nvidia-* Requires-Dist) of each framework build; JupyterLab/ipykernel per Python",
}


# --------------------------------------------------------------------------- loading


def as_list(value: object) -> list[Any]:
    """A JSON value that should be an array; anything else reads as empty."""
    return value if isinstance(value, list) else []


def as_dict(value: object) -> dict[str, Any]:
    """A JSON value that should be an object; anything else reads as empty."""
    return value if isinstance(value, dict) else {}


@functools.lru_cache(maxsize=None)
def _load(filename: str) -> dict[str, Any]:
    """One data file, parsed once (importlib.resources, so it works from a wheel or zip)."""
    from importlib import resources

    text = resources.files("gpudoctor.kb").joinpath("data").joinpath(filename).read_text(encoding="utf-8")
    # json.loads is typed Any: every data file is a JSON object at the top (tests/kb checks each one).
    return as_dict(json.loads(text))


def _driver_data() -> dict[str, Any]:
    return _load("driver_cuda.json")


def _gpu_data() -> dict[str, Any]:
    return _load("gpu_compute_capability.json")


def _torch_data() -> dict[str, Any]:
    return _load("pytorch.json")


def _tf_data() -> dict[str, Any]:
    return _load("tensorflow.json")


def _cudnn_data() -> dict[str, Any]:
    return _load("cudnn.json")


def _packages_data() -> dict[str, Any]:
    return _load("python_gpu_packages.json")


def _spec_data() -> dict[str, Any]:
    return _load("gpu_specs.json")


def _pcie_data() -> dict[str, Any]:
    return _load("pcie.json")


def _count_rows(data: dict[str, Any], stem: str) -> dict[str, int]:
    def size(value: Any) -> int:
        return len(value) if isinstance(value, list) else 0

    if stem == "driver_cuda":
        keys = ("toolkit_driver", "minor_version_compat", "architectures")
        return {key: size(data.get(key)) for key in keys}
    if stem == "gpu_compute_capability":
        return {"gpus": size(data.get("gpus"))}
    if stem == "pytorch":
        releases = as_list(data.get("releases"))
        variants = sum(size(row.get("variants")) for row in releases if isinstance(row, dict))
        return {"releases": len(releases), "variants": variants}
    if stem == "tensorflow":
        return {"releases": size(data.get("releases"))}
    if stem == "cudnn":
        return {"majors": size(data.get("majors"))}
    if stem == "python_gpu_packages":
        jax = as_dict(data.get("jax"))
        cupy = as_dict(data.get("cupy"))
        return {
            "jax_extras": size(jax.get("extras")),
            "jax_releases": size(jax.get("releases")),
            "cupy_packages": size(cupy.get("packages")),
        }
    if stem == "gpu_specs":
        return {"gpus": size(data.get("gpus")), "nvlink_generations": size(data.get("nvlink_generations"))}
    if stem in ("pcie", "nvlink"):
        return {"generations": size(data.get("rows"))}
    if stem == "xid":
        return {"xids": size(data.get("xids"))}
    if stem == "health_limits":
        return {"limits": size(data.get("limits"))}
    if stem == "docker_cuda":
        raw = as_list(data.get("rows"))
        rows = [row for row in raw if isinstance(row, dict)]
        published = sum(1 for row in rows if row.get("confidence") == "published")
        return {"cuda_releases": len(rows), "published": published, "secondary": len(rows) - published}
    if stem == "cloud_instances":
        return {key: size(data.get(key)) for key in ("instances", "series", "images")}
    if stem == "cloud_providers":
        return {"providers": size(data.get("providers"))}
    if stem == "notebook_platforms":
        return {"platforms": size(data.get("platforms"))}
    if stem == "ngc_containers":
        return {"releases": size(data.get("releases"))}
    if stem == "rocm_driver_compat":
        return {"drivers": size(data.get("matrix")), "module_versions": size(data.get("module_versions"))}
    if stem == "pip_pins":
        return {"builds": size(data.get("builds"))}
    return {}


def kb_info() -> dict[str, Any]:
    """For every data file (keyed by its stem): what it holds, how current it is, its row
    counts and how many sources it cites (for ``gpudoctor kb``)."""
    info: dict[str, Any] = {}
    for filename in DATA_FILES:
        stem = filename.rsplit(".", 1)[0]
        data = _load(filename)
        info[stem] = {
            "file": filename,
            "holds": DESCRIPTIONS.get(stem),
            "as_of": data.get("as_of"),
            "coverage": data.get("coverage"),
            "rows": _count_rows(data, stem),
            "sources": len(data.get("sources", {})) if isinstance(data.get("sources"), dict) else 0,
        }
    return info
