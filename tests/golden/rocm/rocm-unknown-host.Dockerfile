# syntax=docker/dockerfile:1
# A torch on AMD GPUs (ROCm) image, written by gpudoctor 0.1.0 from its knowledge base (as of 2026-11-25).
# Regenerate: gpudoctor dockerfile --vendor amd --framework torch --flavor runtime --requirements requirements.txt --preflight wheel -o Dockerfile
# Build: docker build -t my-image .
# Run:   docker run --rm --device=/dev/kfd --device=/dev/dri --group-add video --group-add "$(getent group render | cut -d: -f3)" --ipc=host --shm-size 8G my-image
#   /dev/kfd is the compute interface of all GPUs and /dev/dri holds one render node per GPU (pass single
#   /dev/dri/renderD<N> nodes instead to limit the GPUs); the groups let the non-root user open them (on newer
#   systems /dev/kfd belongs to group render, whose number the getent finds on the host); --ipc=host and
#   --shm-size 8G give the data loaders shared memory. The host needs the amdgpu driver (amdgpu-dkms).
#   Optional: --cap-add=SYS_PTRACE --security-opt seccomp=unconfined
#   (AMD's PyTorch image docs run with these: seccomp=unconfined enables memory mapping, recommended for
#   HPC; SYS_PTRACE lets debuggers and profilers attach).
#
# What was chosen and why:
# - host ROCm: unknown
#     unknown: no ROCm found on the machine; the newest wheel index with an image is used
# - base OS: ubuntu24.04
#     the newest Ubuntu with a rocm/dev image that fits
# - base image: rocm/dev-ubuntu-24.04:6.4
#     AMD's image with the user-space ROCm of the rocm6.4 wheel [ROCM_PT_INSTALL], built and tagged by AMD's build
#     script [ROCM_DOCKER_BUILD]; it holds ROCm 6.4, hipcc and python3
# - torch: torch==2.9.* rocm6.4 from https://download.pytorch.org/whl/rocm6.4
#     torch 2.9 rocm6.4 is the newest ROCm wheel the knowledge base knows that has a rocm/dev image of ROCm 6.4.x
#     [P_TI]; the newer rocm7.2 wheel (torch 2.13) has no rocm/dev image in the knowledge base; torch 2.9 supports
#     Python 3.12
# - python: 3.12 (ubuntu24.04's python3)
#     the base image's own python3, in a venv
# - gpudoctor: gpudoctor-0.1.0-py3-none-any.whl (COPY)
#     the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context
# - default command: gpudoctor check --require-gpu --format text
#     a preflight: exit 0 only when the container sees a usable GPU (run with the device flags above)
FROM rocm/dev-ubuntu-24.04:6.4

ARG DEBIAN_FRONTEND=noninteractive
# No vendor variables here: the GPUs reach the container as device nodes (/dev/kfd, /dev/dri), see "Run" above.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# System packages, the venv (PEP 668 marks Ubuntu's own Python externally managed) and a non-root user.
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

# The framework build: its ROCm wheel brings its own ROCm libraries.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install 'torch==2.9.*' --index-url https://download.pytorch.org/whl/rocm6.4 \
    && echo 'torch==2.9.*' > /opt/venv/constraints.txt

# gpudoctor, whose check is the default command below, from the wheel 'gpudoctor dockerfile -o FILE'
# wrote next to FILE: keep it in the build context.
COPY gpudoctor-0.1.0-py3-none-any.whl /tmp/gpudoctor-0.1.0-py3-none-any.whl
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install /tmp/gpudoctor-0.1.0-py3-none-any.whl

# Your requirements, held to the torch build above (the constraint) so a bare 'torch' line
# cannot swap it for another build; the framework's index serves its companions (torchvision...).
COPY requirements.txt /tmp/requirements.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install --requirement /tmp/requirements.txt --constraint /opt/venv/constraints.txt \
    --extra-index-url https://download.pytorch.org/whl/rocm6.4

USER 10001:10001
WORKDIR /home/gpu
# Replace this with your own command (docker run <the device flags above> IMAGE python train.py); run it as it is
# to check that the container sees a usable GPU (exit 0) before a long job starts.
CMD ["gpudoctor", "check", "--require-gpu", "--format", "text"]
