# syntax=docker/dockerfile:1
# A PyTorch, TensorFlow, JAX (CPU only) image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --framework torch,tensorflow,jax --cpu --python 3.12 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run: docker run --rm my-image
#
# What was chosen and why:
# - base image: python:3.12-slim-bookworm
#     --cpu: the Docker official Python image on Debian 12, no CUDA
# - torch: torch==2.14.* from https://download.pytorch.org/whl/cpu
#     torch 2.14 is the newest release for Python 3.12; its CPU build comes from PyTorch's CPU index (no CUDA
#     libraries)
# - tensorflow: tensorflow==2.21.0
#     TensorFlow 2.21.0 is the newest release for Python 3.12; the plain tensorflow wheel runs on the CPU when no
#     CUDA libraries are installed (the [and-cuda] extra is what adds them)
# - jax: jax==0.12.0.1
#     JAX 0.12.0.1 is the newest release for Python 3.12; plain jax runs on the CPU
# - venvs: /opt/venv
#     CPU builds declare no CUDA library, so one venv holds them all
# - python: 3.12 (the image's own)
#     the python image's interpreter, in venvs
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --format text
#     reports what the container sees
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# The venvs keep the image's own pip and packages apart from the frameworks'; a non-root user to run it.
RUN python -m venv /opt/venv \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework builds, in one venv: torch from its own index first; then tensorflow and jax from PyPI in one
# resolution, held by a constraints file of every package the torch step installed, so the second step cannot change
# what torch installed.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cpu \
    && pip freeze > /opt/venv/constraints.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'tensorflow==2.21.0' 'jax==0.12.0.1'

# gpudoctor, whose check is the default command below, from the wheel 'gpudoctor dockerfile -o FILE'
# wrote next to FILE: keep it in the build context.
COPY gpudoctor-0.1.0-py3-none-any.whl /tmp/gpudoctor-0.1.0-py3-none-any.whl
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install /tmp/gpudoctor-0.1.0-py3-none-any.whl

USER 10001:10001
WORKDIR /home/gpu
# Replace this with your own command (docker run IMAGE python train.py).
CMD ["gpudoctor", "check", "--format", "text"]
