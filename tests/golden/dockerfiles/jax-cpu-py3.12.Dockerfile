# syntax=docker/dockerfile:1
# A jax (CPU only) image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-22).
# Regenerate: gpudoctor dockerfile --framework jax --cpu --python 3.12 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .    Run: docker run --rm my-image
#
# What was chosen and why:
# - base image: python:3.12-slim-bookworm
#     --cpu: the Docker official Python image on Debian 12, no CUDA; Python asked with --python
# - jax: jax==0.12.0.1
#     JAX 0.12.0.1 is the newest release for Python 3.12; plain jax runs on the CPU
# - python: 3.12 (the image's own)
#     the python image's interpreter, in a venv
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --format text
#     reports what the container sees (no GPU is expected in a CPU image)
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# The venv keeps the image's own pip and packages apart from the framework's; a non-root user to run it.
RUN python -m venv /opt/venv \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework build.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'jax==0.12.0.1'

# gpudoctor, whose check is the default command below, from the wheel 'gpudoctor dockerfile -o FILE'
# wrote next to FILE: keep it in the build context.
COPY gpudoctor-0.1.0-py3-none-any.whl /tmp/gpudoctor-0.1.0-py3-none-any.whl
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install /tmp/gpudoctor-0.1.0-py3-none-any.whl

USER 10001:10001
WORKDIR /home/gpu
# Replace this with your own command (docker run IMAGE python train.py).
CMD ["gpudoctor", "check", "--format", "text"]
