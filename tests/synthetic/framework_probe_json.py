"""SYNTHETIC framework-probe records: GPU-side cases this CPU-only machine cannot record.

Each dict is written by hand in the exact shape of the probe JSON contract
(``gpudoctor/facts/framework_model.py``): the common keys, then the framework's
own.  The values are plausible for the versions named (torch 2.6.0+cu126 ships
cuDNN 9.5.1 and NCCL 2.21.5 for sm_50..sm_90), but no machine printed them.
The real CPU-side records are in ``tests/recorded/``.
"""

from __future__ import annotations

import copy
from typing import Any

_SITE = "/home/ada/venv/lib/python3.12/site-packages"

SYNTHETIC_PYTHON: dict[str, Any] = {
    "executable": "/home/ada/venv/bin/python",
    "version": "3.12.3",
    "implementation": "CPython",
    "platform": "linux",
    "machine": "x86_64",
    "prefix": "/home/ada/venv",
    "base_prefix": "/usr",
    "virtualenv": True,
    "conda_prefix": None,
}

_NVIDIA_PACKAGES = {
    "nvidia-cuda-runtime-cu12": "12.6.77",
    "nvidia-cudnn-cu12": "9.5.1.17",
    "nvidia-nccl-cu12": "2.21.5",
    "nvidia-nvjitlink-cu12": "12.6.85",
    "nvidia-cublas-cu12": "12.6.4.1",
}

_TORCH_LIBRARIES = [
    f"{_SITE}/torch/lib/libtorch_cuda.so",
    f"{_SITE}/nvidia/cuda_runtime/lib/libcudart.so.12",
    f"{_SITE}/nvidia/cudnn/lib/libcudnn.so.9",
    f"{_SITE}/nvidia/cudnn/lib/libcudnn_graph.so.9",
    f"{_SITE}/nvidia/nvjitlink/lib/libnvJitLink.so.12",
    f"{_SITE}/nvidia/nccl/lib/libnccl.so.2",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03",
]


def _common(probe: str, name: str, version: str) -> dict[str, Any]:
    return {
        "probe": probe,
        "probe_version": 1,
        "python": copy.deepcopy(SYNTHETIC_PYTHON),
        "installed": True,
        "distribution": {
            "name": name,
            "version": version,
            "installer": "pip",
            "direct_url": None,
            "conda_channel": None,
        },
        "import_ok": True,
        "import_error": None,
        "import_s": 1.7,
        "log_lines": [],
        "warnings": [],
        "loaded_libraries": [],
        "nvidia_packages": dict(_NVIDIA_PACKAGES),
    }


# torch 2.6.0+cu126 on an RTX 4090 (8.9), everything working.
SYNTHETIC_TORCH_CUDA_OK: dict[str, Any] = {
    **_common("torch", "torch", "2.6.0+cu126"),
    "loaded_libraries": list(_TORCH_LIBRARIES),
    "version": "2.6.0+cu126",
    "cuda": "12.6",
    "hip": None,
    "debug": False,
    "cudnn": 90501,
    "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "is_available": True,
    "device_count": 1,
    "devices": [
        {
            "index": 0,
            "name": "NVIDIA GeForce RTX 4090",
            "capability": [8, 9],
            "total_memory": 25_393_692_672,
            "multi_processor_count": 128,
        }
    ],
    "cuda_init_error": None,
    "driver_cuda_version": 12060,
    "nccl": [2, 21, 5],
}

# The same wheel on an RTX 5090 (12.0): torch warns, and the capability is outside the arch list.
SYNTHETIC_TORCH_SM120_UNSUPPORTED: dict[str, Any] = {
    **copy.deepcopy(SYNTHETIC_TORCH_CUDA_OK),
    "devices": [
        {
            "index": 0,
            "name": "NVIDIA GeForce RTX 5090",
            "capability": [12, 0],
            "total_memory": 33_667_874_816,
            "multi_processor_count": 170,
        }
    ],
    "driver_cuda_version": 12080,
    "warnings": [
        "\nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
        "sm_86 sm_90.\nIf you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
        "instructions at https://pytorch.org/get-started/locally/\n"
    ],
}

# A CUDA wheel whose CUDA initialisation fails (the driver is older than the wheel's CUDA).
SYNTHETIC_TORCH_CUDA_INIT_FAILS: dict[str, Any] = {
    **copy.deepcopy(SYNTHETIC_TORCH_CUDA_OK),
    "is_available": False,
    "device_count": 0,
    "devices": [],
    "driver_cuda_version": 11040,
    "cuda_init_error": "The NVIDIA driver on your system is too old (found version 11040). Please update your "
    "GPU driver by downloading and installing a new version from the URL: "
    "http://www.nvidia.com/Download/index.aspx",
    "loaded_libraries": [],
}

# Importing torch failed: a pip nvidia wheel with a missing symbol (a mixed-up environment).
SYNTHETIC_TORCH_IMPORT_ERROR: dict[str, Any] = {
    **_common("torch", "torch", "2.5.1"),
    "import_ok": False,
    "import_error": {
        "type": "ImportError",
        "message": f"{_SITE}/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
        "__nvJitLinkComplete_12_4, version libnvJitLink.so.12",
        "traceback_tail": 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        f'  File "{_SITE}/torch/__init__.py", line 367, in <module>\n'
        "    from torch._C import *  # noqa: F403\nImportError: ... undefined symbol: "
        "__nvJitLinkComplete_12_4, version libnvJitLink.so.12",
    },
}

SYNTHETIC_NOT_INSTALLED: dict[str, Any] = {
    "probe": "cupy",
    "probe_version": 1,
    "python": copy.deepcopy(SYNTHETIC_PYTHON),
    "installed": False,
}

# tensorflow[and-cuda] 2.18.0 on an RTX 3090: the GPU is listed.
SYNTHETIC_TENSORFLOW_GPU_OK: dict[str, Any] = {
    **_common("tensorflow", "tensorflow", "2.18.0"),
    "version": "2.18.0",
    "keras_version": "3.8.0",
    "built_with_cuda": True,
    "build_info": {
        "cpu_compiler": "/usr/lib/llvm-18/bin/clang",
        "cuda_compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"],
        "cuda_version": "12.5.1",
        "cudnn_version": "9",
        "is_cuda_build": True,
        "is_rocm_build": False,
        "is_tensorrt_build": False,
    },
    "gpus": [
        {
            "name": "/physical_device:GPU:0",
            "device_type": "GPU",
            "details": {"device_name": "NVIDIA GeForce RTX 3090", "compute_capability": [8, 6]},
        }
    ],
    "gpus_listed": True,
    "log_lines": [
        "I0000 00:00:1737317404.258825   10111 gpu_device.cc:2022] Created device "
        "/job:localhost/replica:0/task:0/device:GPU:0 with 22290 MB memory:  -> device: 0, name: NVIDIA GeForce "
        "RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6",
    ],
}

# The same install run without the nvidia wheels on the loader path: TensorFlow skips the GPU.
SYNTHETIC_TENSORFLOW_CANNOT_DLOPEN: dict[str, Any] = {
    **copy.deepcopy(SYNTHETIC_TENSORFLOW_GPU_OK),
    "gpus": [],
    "gpus_listed": True,
    "log_lines": [
        "W0000 00:00:1737317404.258825   10111 gpu_device.cc:2344] Cannot dlopen some GPU libraries. Please make "
        "sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow "
        "the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries "
        "for your platform.",
        "Skipping registering GPU devices...",
    ],
}

# jax[cuda12] 0.4.38 with two A100s.
SYNTHETIC_JAX_GPU_OK: dict[str, Any] = {
    **_common("jax", "jax", "0.4.38"),
    "version": "0.4.38",
    "jaxlib_version": "0.4.38",
    "plugins": {"jax-cuda12-plugin": "0.4.38", "jax-cuda12-pjrt": "0.4.38"},
    "default_backend": "gpu",
    "devices": [
        {"id": 0, "platform": "gpu", "device_kind": "NVIDIA A100-SXM4-80GB"},
        {"id": 1, "platform": "gpu", "device_kind": "NVIDIA A100-SXM4-80GB"},
    ],
    "backend_errors": [],
}

# Plain `pip install jax` on a GPU machine: JAX warns and runs on the CPU.
SYNTHETIC_JAX_CPU_FALLBACK: dict[str, Any] = {
    **_common("jax", "jax", "0.4.38"),
    "version": "0.4.38",
    "jaxlib_version": "0.4.38",
    "plugins": {},
    "default_backend": "cpu",
    "devices": [{"id": 0, "platform": "cpu", "device_kind": "cpu"}],
    "backend_errors": [],
    "log_lines": [
        "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled "
        "jaxlib is not installed. Falling back to cpu."
    ],
    "nvidia_packages": {},
}

# cupy-cuda12x 13.3.0 on an RTX 4090, runtime 12.6 against a 12.4 driver.
SYNTHETIC_CUPY_OK: dict[str, Any] = {
    **_common("cupy", "cupy-cuda12x", "13.3.0"),
    "version": "13.3.0",
    "runtime_version": 12060,
    "driver_version": 12040,
    "device_count": 1,
    "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "capability": "89"}],
    "error": None,
}

SYNTHETIC_CUPY_NO_DRIVER: dict[str, Any] = {
    **_common("cupy", "cupy-cuda12x", "13.3.0"),
    "version": "13.3.0",
    "runtime_version": 12060,
    "driver_version": 0,
    "device_count": None,
    "devices": [],
    "error": "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version",
}

ALL_SYNTHETIC: dict[str, dict[str, Any]] = {
    name: value
    for name, value in dict(globals()).items()
    if name.startswith("SYNTHETIC_") and name != "SYNTHETIC_PYTHON"
}
