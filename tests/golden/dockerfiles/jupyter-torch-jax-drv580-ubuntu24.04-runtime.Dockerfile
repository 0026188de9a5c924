# syntax=docker/dockerfile:1
# A PyTorch, JAX on NVIDIA GPUs with JupyterLab image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-26).
# Regenerate: gpudoctor dockerfile --for-driver 580.82.07 --framework torch,jax --jupyter --flavor runtime --os ubuntu24.04 --preflight wheel -o Dockerfile
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
# - host driver: 580.82.07
#     from --for-driver 580.82.07; it runs CUDA 13.0 and older natively
# - base OS: ubuntu24.04
#     asked with --os
# - base image: nvidia/cuda:13.0.2-base-ubuntu24.04
#     driver 580.82.07 runs CUDA 13.0; 13.0.2 asks for 580.95.05 for full support and runs on this driver through
#     minor-version compatibility; the torch wheels bring their own CUDA libraries, so the small 'base' flavor
#     (cudart only) is enough
# - torch: torch==2.14.* cu130 from https://download.pytorch.org/whl/cu130
#     torch 2.14 cu130 (CUDA 13.0) is the newest wheel that fits; GPU compute capability unknown: arch coverage not
#     checked; driver 580.82.07 runs CUDA 13.0 natively; Python 3.12 is supported (torch 2.14: 3.10-3.15)
# - jax: jax[cuda13]==0.12.0.1
#     JAX 0.12.0.1 is the newest release with jax[cuda13] wheels for Python 3.12; driver 580.82.07 runs CUDA 13.x
#     (jax[cuda13] needs 580.65.06 or newer); its CUDA and cuDNN come as pip wheels (jax-cuda13-plugin,
#     jax-cuda13-pjrt)
# - venvs: /opt/venv
#     one venv: the same CUDA major, and every nvidia-* library two of them declare has a release all accept
#     (nvidia-cudnn-cu13, nvidia-nccl-cu13, nvidia-nvshmem-cu13) (each wheel's Requires-Dist, kb pip_pins)
# - python: 3.12 (ubuntu24.04's python3)
#     the base OS's own python3
# - jupyter: jupyterlab==4.6.6, ipykernel==7.4.0
#     the newest releases whose Requires-Python admits Python 3.12 (https://pypi.org/project/jupyterlab/4.6.6/,
#     https://pypi.org/project/ipykernel/7.4.0/); JupyterLab in its own venv /opt/jupyter, ipykernel in each
#     framework venv, registered as its kernel
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: jupyter lab --ip=0.0.0.0 --port=8888 --no-browser
#     JupyterLab as the image's service, as the non-root user; the preflight stays one command away: docker run --rm
#     --gpus all my-image gpudoctor check --require-gpu
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
    && python3 -m venv /opt/jupyter \
    && groupadd --gid 10001 gpu \
    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu

# The framework builds, in one venv: torch from its own index first; then jax from PyPI in one resolution, held by a
# constraints file of every package the torch step installed, so the second step cannot swap torch's CUDA libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'torch==2.14.*' --index-url https://download.pytorch.org/whl/cu130 \
    && pip freeze > /opt/venv/constraints.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    PIP_CONSTRAINT=/opt/venv/constraints.txt pip install 'jax[cuda13]==0.12.0.1'

# JupyterLab in its own venv; ipykernel in each framework venv, registered as a kernel in /opt/jupyter's
# kernel path (the 'Python 3' kernel there is JupyterLab's own venv, without the frameworks).
RUN --mount=type=cache,target=/root/.cache/pip \
    /opt/jupyter/bin/pip install 'jupyterlab==4.6.6' \
    && PIP_CONSTRAINT=/opt/venv/constraints.txt /opt/venv/bin/pip install 'ipykernel==7.4.0' \
    && /opt/venv/bin/python -m ipykernel install --prefix /opt/jupyter --name frameworks \
        --display-name 'Python (PyTorch, JAX)'

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
