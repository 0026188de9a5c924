"""Building the generated data files from the shared reference (``compat.json``), one module per table;
``build_all`` is the list of files the refresh owns, in the order it reports them."""

from __future__ import annotations

from typing import Any

from kbtools.refresh.cudnn import build_cudnn
from kbtools.refresh.docker_cuda import DOCKER_FILE, build_docker_cuda
from kbtools.refresh.gpu_specs import build_gpu_specs
from kbtools.refresh.pcie import build_pcie
from kbtools.refresh.pytorch import build_pytorch
from kbtools.refresh.tensorflow import build_tensorflow

GENERATED = ("pytorch.json", "tensorflow.json", "cudnn.json", "gpu_specs.json", "pcie.json", DOCKER_FILE)


def build_all(reference: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The generated files, by file name."""
    return {
        "pytorch.json": build_pytorch(reference),
        "tensorflow.json": build_tensorflow(reference),
        "cudnn.json": build_cudnn(reference),
        "gpu_specs.json": build_gpu_specs(reference),
        "pcie.json": build_pcie(reference),
        DOCKER_FILE: build_docker_cuda(reference),
    }
