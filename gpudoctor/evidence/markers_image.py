"""What a container image says about itself: NGC framework containers, ``rocm/*`` images, cloud deep-learning
containers, deepo-style all-in-one images.

Evidence only: the names to record.  What they mean (which image, built for which driver) lives in the facts
(``gpudoctor.facts.container_image``) and the knowledge base (``gpudoctor.kb.ngc_containers``).
"""

from __future__ import annotations

# Recorded with their values: the image's own ENV lines (versions, build ids), no secret among them.
ENV_VALUES: tuple[str, ...] = (
    "NVIDIA_PRODUCT_NAME",
    "NVIDIA_BUILD_ID",
    "NVIDIA_PYTORCH_VERSION",
    "PYTORCH_VERSION",
    "PYTORCH_BUILD_VERSION",
    "NVIDIA_TENSORFLOW_VERSION",
    "TENSORFLOW_VERSION",
    "CUDA_VERSION",
    "CUDA_DRIVER_VERSION",
    "CUDNN_VERSION",
    "NCCL_VERSION",
    "NV_CUDA_CUDART_VERSION",
)
ENV_PRESENCE: tuple[str, ...] = ()
# Paths whose existence is recorded.
FILES_EXIST: tuple[str, ...] = (
    "/NGC-DL-CONTAINER-LICENSE",
    "/opt/nvidia/entrypoint.d",
    "/usr/local/cuda/compat",
)
# Small files whose text is recorded (capped).
FILES_READ: tuple[str, ...] = ()
# Folders whose file names are recorded (the forward-compatibility libraries: libcuda.so.<driver version>).
DIRS_LIST: tuple[str, ...] = ("/usr/local/cuda/compat", "/usr/local/cuda/compat/lib", "/usr/local/cuda/compat/lib.real")
