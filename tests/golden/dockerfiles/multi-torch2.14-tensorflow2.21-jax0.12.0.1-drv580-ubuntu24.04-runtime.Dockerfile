# syntax=docker/dockerfile:1
# A PyTorch, TensorFlow, JAX on NVIDIA GPUs image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --for-driver 580.82.07 --framework torch==2.14,tensorflow==2.21,jax==0.12.0.1 --flavor runtime --os ubuntu24.04 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run: docker run --rm --gpus all my-image
# The venvs: /opt/venv (torch, jax), /opt/venv-tensorflow (tensorflow); the first is on PATH.
#
# What was chosen and why:
# - host driver: 580.82.07
#     from --for-driver 580.82.07; it runs CUDA 13.0 and older natively
# - base OS: ubuntu24.04
#     asked with --os
# - base image: nvidia/cuda:13.0.2-base-ubuntu24.04
#     driver 580.82.07 runs CUDA 13.0; 13.0.2 asks for 580.95.05 for full support and runs on this driver through
#     minor-version compatibility; the torch wheels bring their own CUDA libraries, so the small 'base' flavor
#     (cudart only) is enough; chosen for torch, jax: every build brings its own CUDA libraries as wheels, so of the
#     images each build would get alone (nvidia/cuda:12.5.1-base-ubuntu24.04 too) the newest, all of which the
#     driver runs, gives the newest cudart and nvcc
# - torch: torch==2.14.* cu130 from https://download.pytorch.org/whl/cu130
#     keeps torch 2.14: its cu130 wheel (CUDA 13.0) fits; GPU compute capability unknown: arch coverage not checked;
#     driver 580.82.07 runs CUDA 13.0 natively; Python 3.12 is supported (torch 2.14: 3.10-3.15)
# - tensorflow: tensorflow[and-cuda]==2.21.0
#     keeps TensorFlow 2.21 (tested with CUDA 12.5, cuDNN 9.3); the [and-cuda] extra installs CUDA and cuDNN as pip
#     wheels: only the driver is needed; driver 580.82.07 runs CUDA 12.5 natively; Python 3.12 is supported
#     (3.10-3.13)
# - jax: jax[cuda13]==0.12.0.1
#     JAX 0.12.0.1 is the asked release with jax[cuda13] wheels for Python 3.12; driver 580.82.07 runs CUDA 13.x
#     (jax[cuda13] needs 580.65.06 or newer); its CUDA and cuDNN come as pip wheels (jax-cuda13-plugin,
#     jax-cuda13-pjrt)
# - venvs: /opt/venv (torch, jax), /opt/venv-tensorflow (tensorflow)
#     torch, jax share /opt/venv (every nvidia-* library two of them declare has a release all accept
#     (nvidia-cudnn-cu13, nvidia-nccl-cu13, nvidia-nvshmem-cu13)); tensorflow has its own venv: no build of it
#     agrees with theirs (tensorflow: their CUDA majors differ: tensorflow 2.21.0 (and-cuda) brings CUDA 12
#     libraries, torch 2.14.1 (cu130) brings CUDA 13 libraries, jax 0.12.0.1 (cuda13) brings CUDA 13 libraries)
#     (each wheel's Requires-Dist, kb pip_pins)
# - python: 3.12 (ubuntu24.04's python3)
#     the base OS's own python3
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --require-gpu --format text
#     a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)
FROM nvidia/cuda:13.0.2-base-ubuntu24.04

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
    && python3 -m venv /opt/venv-tensorflow \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework builds, in one venv (/opt/venv): torch from its own index first; then jax from PyPI in one
# resolution, held by a constraints file of every package the torch step installed, so the second step cannot swap
# torch's CUDA libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/venv/bin/pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130 \
    && /opt/venv/bin/pip freeze > /opt/venv/constraints.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    PIP_CONSTRAINT=/opt/venv/constraints.txt /opt/venv/bin/pip install 'jax[cuda13]==0.12.0.1'
# Then each framework whose CUDA libraries disagree with theirs, in its own venv: run it with that venv's python
# (/opt/venv-tensorflow/bin/python).
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/venv-tensorflow/bin/pip install 'tensorflow[and-cuda]==2.21.0'

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
