"""What a container image says about itself: NGC framework containers, ``nvidia/cuda`` images, AWS Deep Learning
Containers.

Evidence only: the names to record.  What they mean (which image, built for which driver) lives in the facts
(``gpudoctor.facts.container_image``) and the knowledge base (``gpudoctor.kb.ngc_containers``).  Every name here
was read in a real image's ENV lines or ``env`` output:

- NGC PyTorch 23.10 (``env`` in a public report): NVIDIA_PRODUCT_NAME=PyTorch, NVIDIA_PYTORCH_VERSION=23.10,
  NVIDIA_BUILD_ID=71422337, CUDA_VERSION=12.2.2.009, CUDA_DRIVER_VERSION=535.104.05, PYTORCH_VERSION,
  PYTORCH_BUILD_VERSION, CUDNN_VERSION, and /usr/local/cuda/compat/lib on LD_LIBRARY_PATH; NGC PyTorch 25.10's
  Dockerfile sets the same ENV names.
- nvidia/cuda images (gitlab.com/nvidia/container-images/cuda dist/*/base/Dockerfile): CUDA_VERSION,
  NV_CUDA_CUDART_VERSION, NVIDIA_REQUIRE_CUDA (recorded by the general allow-list), and the banner's
  /NGC-DL-CONTAINER-LICENSE.
- AWS Deep Learning Containers (aws/deep-learning-containers pytorch/training/docker/2.3/py3/cu121/Dockerfile.gpu):
  DLC_CONTAINER_TYPE=training, and SAGEMAKER_TRAINING_MODULE in the SageMaker flavour.
- rocm/pytorch (and its base rocm/pytorch:latest-base): built from PyTorch's ``.ci/docker/ubuntu-rocm/Dockerfile``
  (ROCm/pytorch at 10b22ea5c6a60ffa85520eb2d293affc48cea8ee), whose ENV lines are PYTORCH_ROCM_ARCH,
  ROCM_PATH=/opt/rocm, MAGMA_HOME=/opt/rocm/magma and BUILD_ENVIRONMENT.  AMD's guide says of the base image "a
  particular environment flag (BUILD_ENVIRONMENT) is set" and builds it as ``.ci/docker/build.sh
  pytorch-linux-<os-version>-rocm<rocm-version>-py<python-version>`` (ROCm/rocm-install-on-linux
  docs/install/3rd-party/pytorch-install.rst at 01a6299f); a ``docker history`` of such an image in a public
  repository reads ENV BUILD_ENVIRONMENT=pytorch-linux-focal-rocm5.3-py3.7, ENV MAGMA_HOME=/opt/rocm/magma,
  ENV PYTORCH_ROCM_ARCH=gfx900;gfx906;gfx908;gfx90a;gfx1030.  ROCM_PATH and PYTORCH_ROCM_ARCH are on the general
  allow-list (system_scan.ENV_ALLOW).  The rocm/dev-ubuntu-* images set no ENV of their own (ROCm/ROCm-docker
  dev/Dockerfile-ubuntu-22.04 at 0ae7bc0c05: ARG ROCM_VERSION only), so they are not named from the environment;
  their ROCm is /opt/rocm/.info/version, which ``facts.amd.rocm`` already reads.
- Google Cloud Deep Learning Containers (gcr.io/deeplearning-platform-release/*): ``printenv`` of
  rapids-gpu.21-12, pasted in the comments of a public Dockerfile built FROM it: CONTAINER_NAME=rapids-gpu/21-12+cu110,
  CONTAINER_URL=us-docker.pkg.dev/deeplearning-platform-release/gcr.io/rapids-gpu.21-12:nightly-2022-05-26,
  DL_ANACONDA_HOME=/opt/conda (beside the nvidia/cuda base's CUDA_VERSION=11.0.3).  DL_ANACONDA_HOME is also what
  Vertex AI Workbench notes use to add conda kernels.
- Azure Machine Learning curated environments: their Dockerfiles (MicrosoftDocs/azure-docs
  articles/machine-learning/resource-curated-environments.md, 2021-2022 versions, e.g. AzureML-pytorch-1.10:
  FROM mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.1-cudnn8-ubuntu18.04, ENV AZUREML_CONDA_ENVIRONMENT_PATH
  /azureml-envs/pytorch-1.10); images Azure ML builds end with ENV AZUREML_ENVIRONMENT_IMAGE True; the base images
  (Azure/AzureML-Containers base/gpu/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04/Dockerfile at 0095813e) write
  /IMAGE_INFORMATION ("<image name>, Materializaton Build:<n>") when built with IMAGE_NAME and BUILD_NUMBER.
- deepo (ufoym/deepo docker/Dockerfile.all-py38-cu113 at 245f19cf): FROM nvidia/cuda, ENV LANG only; nothing of
  its own names it, so a deepo image reads as the nvidia/cuda image it is built on.
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
    "DLC_CONTAINER_TYPE",
    "SAGEMAKER_TRAINING_MODULE",
    # rocm/pytorch (PyTorch's .ci/docker/ubuntu-rocm image): the build name with its ROCm, and MAGMA's home.
    "BUILD_ENVIRONMENT",
    "MAGMA_HOME",
    # Google Cloud Deep Learning Containers: the container's family/version and its registry path.
    "CONTAINER_NAME",
    "CONTAINER_URL",
    "DL_ANACONDA_HOME",
    # Azure ML curated environments and the images Azure ML builds.
    "AZUREML_CONDA_ENVIRONMENT_PATH",
    "AZUREML_ENVIRONMENT_IMAGE",
)
ENV_PRESENCE: tuple[str, ...] = ()
# Paths whose existence is recorded.
FILES_EXIST: tuple[str, ...] = (
    "/NGC-DL-CONTAINER-LICENSE",
    "/opt/nvidia/entrypoint.d",
    "/usr/local/cuda/compat",
)
# Small files whose text is recorded (capped).
FILES_READ: tuple[str, ...] = ("/IMAGE_INFORMATION",)  # Azure ML base images: "<image name>, Materializaton Build:<n>"
# Folders whose file names are recorded (the forward-compatibility libraries: libcuda.so.<driver version>).
DIRS_LIST: tuple[str, ...] = ("/usr/local/cuda/compat", "/usr/local/cuda/compat/lib", "/usr/local/cuda/compat/lib.real")
