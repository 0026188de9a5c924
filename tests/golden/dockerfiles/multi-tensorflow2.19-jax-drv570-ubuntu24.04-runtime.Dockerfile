# syntax=docker/dockerfile:1
# A TensorFlow, JAX on NVIDIA GPUs image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --for-driver 570.124.06 --framework tensorflow==2.19,jax --flavor runtime --os ubuntu24.04 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run: docker run --rm --gpus all my-image
# Each framework has its own venv: /opt/venv-tensorflow (tensorflow), /opt/venv-jax (jax); the first is on PATH.
#
# What was chosen and why:
# - host driver: 570.124.06
#     from --for-driver 570.124.06; it runs CUDA 12.8 and older natively
# - base OS: ubuntu24.04
#     asked with --os
# - base image: nvidia/cuda:12.8.1-base-ubuntu24.04
#     driver 570.124.06 runs CUDA <= 12.8 natively; 12.8.1 is the newest published release for the CUDA 12.8.x
#     build; the jax wheels bring their own CUDA libraries, so the small 'base' flavor (cudart only) is enough;
#     chosen for jax: every build brings its own CUDA libraries as wheels, so of the images each build would get
#     alone (nvidia/cuda:12.5.1-base-ubuntu24.04 too) the newest, all of which the driver runs, gives the newest
#     cudart and nvcc
# - tensorflow: tensorflow[and-cuda]==2.19.0
#     keeps TensorFlow 2.19 (tested with CUDA 12.5, cuDNN 9.3); the [and-cuda] extra installs CUDA and cuDNN as pip
#     wheels: only the driver is needed; driver 570.124.06 runs CUDA 12.5 natively; Python 3.12 is supported
#     (3.9-3.12)
# - jax: jax[cuda12]==0.12.0.1
#     JAX 0.12.0.1 is the newest release with jax[cuda12] wheels for Python 3.12; driver 570.124.06 runs CUDA 12.x
#     (jax[cuda12] needs 525.60.13 or newer); its CUDA and cuDNN come as pip wheels (jax-cuda12-plugin,
#     jax-cuda12-pjrt)
# - venvs: /opt/venv-tensorflow (tensorflow), /opt/venv-jax (jax)
#     each framework in its own venv: tensorflow 2.19.0 (and-cuda) pins nvidia-cuda-nvcc-cu12 ==12.5.82, jax
#     0.12.0.1 (cuda12) needs >=12.6.85; tensorflow 2.19.0 (and-cuda) pins nvidia-cudnn-cu12 ==9.3.0.75, jax
#     0.12.0.1 (cuda12) needs <10.0,>=9.10.2.21: no release satisfies both (each wheel's Requires-Dist, kb
#     pip_pins); nor does any build of the 10 releases before the newest of each that was not pinned
# - python: 3.12 (ubuntu24.04's python3)
#     the base OS's own python3
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --require-gpu --format text
#     a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)
FROM nvidia/cuda:12.8.1-base-ubuntu24.04

ARG DEBIAN_FRONTEND=noninteractive
# The NVIDIA Container Toolkit mounts the host driver's libraries and devices by these two variables.
ENV NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv-tensorflow \
    PATH=/opt/venv-tensorflow/bin:$PATH

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
    && python3 -m venv /opt/venv-tensorflow \
    && python3 -m venv /opt/venv-jax \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework builds, each in its own venv: run each with its venv's python (/opt/venv-tensorflow/bin/python,
# /opt/venv-jax/bin/python).
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/venv-tensorflow/bin/pip install 'tensorflow[and-cuda]==2.19.0' \
    && /opt/venv-jax/bin/pip install 'jax[cuda12]==0.12.0.1'

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
