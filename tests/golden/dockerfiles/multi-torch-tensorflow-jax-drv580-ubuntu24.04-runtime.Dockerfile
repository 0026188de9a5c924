# syntax=docker/dockerfile:1
# A PyTorch, TensorFlow, JAX on NVIDIA GPUs image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --for-driver 580.82.07 --framework torch,tensorflow,jax --flavor runtime --os ubuntu24.04 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run: docker run --rm --gpus all my-image
# Newer builds passed over so that the frameworks share a venv (their wheels' pins disagree):
#   - torch 2.14.1 (cu130), the newest that fits, for torch 2.10.0 (cu128): their CUDA majors differ: torch 2.14.1
#     (cu130) brings CUDA 13 libraries, tensorflow 2.20.0 (and-cuda) brings CUDA 12 libraries, jax 0.12.0.1 (cuda12)
#     brings CUDA 12 libraries
#   - tensorflow 2.21.0 (and-cuda), the newest that fits, for tensorflow 2.20.0 (and-cuda): tensorflow 2.21.0
#     (and-cuda) pins nvidia-nccl-cu12 <3.0,>=2.27.7, torch 2.10.0 (cu128) needs ==2.27.5: no release satisfies both
#   - jax 0.12.0.1 (cuda13), the newest that fits, for jax 0.12.0.1 (cuda12): their CUDA majors differ: jax 0.12.0.1
#     (cuda13) brings CUDA 13 libraries, torch 2.10.0 (cu128) brings CUDA 12 libraries, tensorflow 2.20.0 (and-cuda)
#     brings CUDA 12 libraries
# The newest of each instead, in venvs of their own where they disagree:
#   gpudoctor dockerfile --for-driver 580.82.07 --framework torch==2.14,tensorflow==2.21.0,jax==0.12.0.1 --flavor runtime --os ubuntu24.04 --preflight wheel -o Dockerfile
#
# What was chosen and why:
# - host driver: 580.82.07
#     from --for-driver 580.82.07; it runs CUDA 13.0 and older natively
# - base OS: ubuntu24.04
#     asked with --os
# - base image: nvidia/cuda:12.9.1-base-ubuntu24.04
#     driver 580.82.07 runs CUDA <= 13.0 natively; 12.9.1 is the newest published release for the CUDA 12.9.x build;
#     the jax wheels bring their own CUDA libraries, so the small 'base' flavor (cudart only) is enough; chosen for
#     jax: every build brings its own CUDA libraries as wheels, so of the images each build would get alone
#     (nvidia/cuda:12.5.1-base-ubuntu24.04, nvidia/cuda:12.8.1-base-ubuntu24.04 too) the newest, all of which the
#     driver runs, gives the newest cudart and nvcc
# - torch: torch==2.10.* cu128 from https://download.pytorch.org/whl/cu128
#     torch 2.10 cu128 (CUDA 12.8) fits too; GPU compute capability unknown: arch coverage not checked; driver
#     580.82.07 runs CUDA 12.8 natively; Python 3.12 is supported (torch 2.10: 3.10-3.14); taken over torch 2.14.1
#     (cu130), the newest that fits, so that the frameworks share a venv (see venvs)
# - tensorflow: tensorflow[and-cuda]==2.20.0
#     takes TensorFlow 2.20 (tested with CUDA 12.5, cuDNN 9.3); the [and-cuda] extra installs CUDA and cuDNN as pip
#     wheels: only the driver is needed; driver 580.82.07 runs CUDA 12.5 natively; Python 3.12 is supported
#     (3.9-3.13); taken over tensorflow 2.21.0 (and-cuda), the newest that fits, so that the frameworks share a venv
#     (see venvs)
# - jax: jax[cuda12]==0.12.0.1
#     JAX 0.12.0.1 ships jax[cuda12] too, and driver 580.82.07 runs CUDA 12.x (it needs 525.60.13 or newer); its
#     CUDA and cuDNN come as pip wheels (jax-cuda12-plugin, jax-cuda12-pjrt); taken over jax 0.12.0.1 (cuda13), the
#     newest that fits, so that the frameworks share a venv (see venvs)
# - venvs: /opt/venv
#     one venv: the same CUDA major, and every nvidia-* library two of them declare has a release all accept
#     (nvidia-cublas-cu12, nvidia-cuda-cupti-cu12, nvidia-cuda-nvcc-cu12, nvidia-cuda-nvrtc-cu12,
#     nvidia-cuda-runtime-cu12, nvidia-cudnn-cu12, nvidia-cufft-cu12, nvidia-curand-cu12, nvidia-cusolver-cu12,
#     nvidia-cusparse-cu12, nvidia-nccl-cu12, nvidia-nvjitlink-cu12, nvidia-nvshmem-cu12) (each wheel's
#     Requires-Dist, kb pip_pins); torch 2.10.0 (cu128), tensorflow 2.20.0 (and-cuda), jax 0.12.0.1 (cuda12) rather
#     than the newest, whose pins disagree (see above)
# - python: 3.12 (ubuntu24.04's python3)
#     the base OS's own python3
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --require-gpu --format text
#     a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)
FROM nvidia/cuda:12.9.1-base-ubuntu24.04

ARG DEBIAN_FRONTEND=noninteractive
# The NVIDIA Container Toolkit mounts the host driver's libraries and devices by these two variables.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# System packages, the venvs (PEP 668 marks Ubuntu's own Python externally managed) and a non-root user.
# The base image's docker-clean hook would delete downloaded .debs; removing it lets the BuildKit cache keep them.
# Ubuntu's archive replaces package versions within a release, so pins would break later builds: the base
# image tag fixes the release instead.
# hadolint ignore=DL3008
RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \
    rm -f /etc/apt/apt.conf.d/docker-clean \
    && apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework builds, in one venv: torch from its own index first; then tensorflow and jax from PyPI in one
# resolution, held by a constraints file of every package the torch step installed, so the second step cannot swap
# torch's CUDA libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'torch==2.10.*' --index-url https://download.pytorch.org/whl/cu128 \
    && pip freeze > /opt/venv/constraints.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'tensorflow[and-cuda]==2.20.0' 'jax[cuda12]==0.12.0.1'

# gpudoctor, whose check is the default command below, from the wheel 'gpudoctor dockerfile -o FILE'
# wrote next to FILE: keep it in the build context.
COPY gpudoctor-0.1.0-py3-none-any.whl /tmp/gpudoctor-0.1.0-py3-none-any.whl
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install /tmp/gpudoctor-0.1.0-py3-none-any.whl

USER 10001:10001
WORKDIR /home/gpu
# Replace this with your own command (docker run --gpus all IMAGE python train.py); run it as it is to check
# that the container sees a usable GPU (exit 0) before a long job starts.
CMD ["gpudoctor", "check", "--require-gpu", "--format", "text"]
