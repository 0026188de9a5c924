# syntax=docker/dockerfile:1
# A PyTorch on NVIDIA GPUs with JupyterLab image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --for-driver 570.124.06 --framework torch --jupyter --flavor devel --os ubuntu22.04 --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run JupyterLab, with a token you choose (no token is stored in the image):
#   export JUPYTER_TOKEN=$(openssl rand -hex 24)
#   docker run --rm --gpus all -p 127.0.0.1:8888:8888 -e JUPYTER_TOKEN my-image
#   then open http://127.0.0.1:8888/lab?token=$JUPYTER_TOKEN
# Without -e JUPYTER_TOKEN, JupyterLab makes a token at start: docker logs CONTAINER prints the login URL.
# 127.0.0.1 in -p keeps the port off the network (-p 8888:8888 publishes it on every interface, and
# Docker's rules bypass most host firewalls).
# Preflight (is the GPU usable in the container?): docker run --rm --gpus all my-image gpudoctor check --require-gpu
#
# What was chosen and why:
# - host driver: 570.124.06
#     from --for-driver 570.124.06; it runs CUDA 12.8 and older natively
# - base OS: ubuntu22.04
#     asked with --os
# - base image: nvidia/cuda:12.6.3-devel-ubuntu22.04
#     driver 570.124.06 runs CUDA <= 12.8 natively; 12.6.3 is the newest published release for the CUDA 12.6.x
#     build; devel brings nvcc 12.6.3 and the CUDA headers for building extensions
# - torch: torch==2.14.* cu126 from https://download.pytorch.org/whl/cu126
#     torch 2.14 cu126 (CUDA 12.6) is the newest wheel that fits; GPU compute capability unknown: arch coverage not
#     checked; driver 570.124.06 runs CUDA 12.6 natively; Python 3.10 is supported (torch 2.14: 3.10-3.15)
# - python: 3.10 (ubuntu22.04's python3)
#     the base OS's own python3
# - jupyter: jupyterlab==4.6.6, ipykernel==7.3.0
#     the newest releases whose Requires-Python admits Python 3.10 (https://pypi.org/project/jupyterlab/4.6.6/,
#     https://pypi.org/project/ipykernel/7.3.0/); JupyterLab in its own venv /opt/jupyter, ipykernel in each
#     framework venv, registered as its kernel
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: jupyter lab --ip=0.0.0.0 --port=8888 --no-browser
#     JupyterLab as the image's service, as the non-root user; the preflight stays one command away: docker run --rm
#     --gpus all my-image gpudoctor check --require-gpu
FROM nvidia/cuda:12.6.3-devel-ubuntu22.04

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
    && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv build-essential python3-dev \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv \
    && python3 -m venv /opt/jupyter \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework build.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu126

# JupyterLab in its own venv; ipykernel in each framework venv, registered as a kernel in /opt/jupyter's
# kernel path (the 'Python 3' kernel there is JupyterLab's own venv, without the frameworks).
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/jupyter/bin/pip install 'jupyterlab==4.6.6' \
    && /opt/venv/bin/pip install 'ipykernel==7.3.0' \
    && /opt/venv/bin/python -m ipykernel install --prefix /opt/jupyter --name torch \
        --display-name 'PyTorch'

# gpudoctor, whose check the header's preflight line runs, from the wheel 'gpudoctor dockerfile -o FILE'
# wrote next to FILE: keep it in the build context.
COPY gpudoctor-0.1.0-py3-none-any.whl /tmp/gpudoctor-0.1.0-py3-none-any.whl
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install /tmp/gpudoctor-0.1.0-py3-none-any.whl

USER 10001:10001
WORKDIR /home/gpu
EXPOSE 8888
# JupyterLab's /api answers without a login: the health check needs no token.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/opt/jupyter/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8888/api', timeout=4)"]
# No token in the image: JupyterLab makes one at start and prints the login URL (docker logs CONTAINER),
# or takes JUPYTER_TOKEN from docker run -e. --ip=0.0.0.0 lets Docker's port mapping reach it; publish
# it on 127.0.0.1 only (-p 127.0.0.1:8888:8888). Never --allow-root: it runs as uid 10001.
CMD ["/opt/jupyter/bin/jupyter", "lab", "--ip=0.0.0.0", "--port=8888", "--no-browser"]
