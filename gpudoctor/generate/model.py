"""The contract between the CLI and the generators: what is asked, what comes back, how a refusal reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.errors import UsageError

# The frameworks the generators can install (a Dockerfile or install script per framework).
GENERATOR_FRAMEWORKS = ("torch", "tensorflow", "jax")


class GenerationRefused(UsageError):
    """The asked combination cannot work; the message says why and ``nearest`` what would (one line each)."""

    def __init__(self, reason: str, nearest: str | None = None):
        self.reason = reason
        self.nearest = nearest
        super().__init__(reason + (f"; nearest that works: {nearest}" if nearest else ""))


@dataclass(frozen=True)
class MachineTarget:
    """What the generated file must fit: taken from this machine's facts, a snapshot, or flags."""

    driver_version: str | None = None  # "550.54.15"; None: no driver known (CPU image / driver step needed)
    compute_capabilities: tuple[str, ...] = ()  # ("9.0",) of the GPUs that will run it
    gpu_names: tuple[str, ...] = ()
    distro_id: str | None = None  # os-release ID: "ubuntu", "debian", "rhel", "rocky", "almalinux", "amzn"
    distro_version: str | None = None  # os-release VERSION_ID: "24.04", "12", "9.4", "2023"
    wsl: bool = False
    # The container runtime the generator runs in ("docker", "podman", "kubernetes", ...); None: not in one.  Inside
    # a container the driver, kernel headers and reboot are the host's: the install script plans none of them.
    container: str | None = None
    secure_boot: bool | None = None
    source: str = "this machine"  # "this machine", "snapshot PATH", "--for-driver"
    # AMD: the GPUs' names and LLVM targets, the installed ROCm, and which vendor's GPUs the machine has ("amd" when
    # it has AMD GPUs and no NVIDIA ones: the generators then write for ROCm unless asked otherwise).
    amd_gpu_names: tuple[str, ...] = ()
    gfx_targets: tuple[str, ...] = ()  # ("gfx90a",)
    rocm_version: str | None = None  # "6.2.2"
    gpu_vendor: str | None = None  # "amd", "nvidia" or None (none found / both)


@dataclass(frozen=True)
class DockerfileRequest:
    framework: str = "torch"  # "torch", "tensorflow", "jax"
    framework_version: str | None = None  # "2.13" / "2.13.0" / None: the newest that fits
    python: str | None = None  # "3.12"; None: the base OS's own Python
    flavor: str = "runtime"  # "runtime" or "devel"
    os: str | None = None  # base OS token "ubuntu24.04", "ubuntu22.04", ...; None: the newest that fits
    cpu: bool = False  # a CPU-only image (python:X.Y-slim base, CPU wheels)
    requirements: str | None = None  # path of a requirements file to COPY and install, relative to the context
    target: MachineTarget = field(default_factory=MachineTarget)
    # Where the preflight gpudoctor comes from: "pypi" (gpudoctor==VERSION from the index), "wheel" (the wheel the
    # command writes next to the Dockerfile, COPY'd in) or "none" (no preflight; a comment says how to add it).
    preflight: str = "wheel"
    # "amd" (or a ROCm version in ``rocm``): a ROCm image; "nvidia": a CUDA one; None: from the machine.
    vendor: str | None = None
    rocm: str | None = None  # "6.2.2": the ROCm to fit instead of the machine's
    # Further frameworks in the same image ((name, version or None), ...): `--framework torch,tensorflow,jax`.
    more_frameworks: tuple[tuple[str, str | None], ...] = ()
    jupyter: bool = False  # JupyterLab as the image's service, a kernel per framework venv

    @property
    def frameworks(self) -> tuple[tuple[str, str | None], ...]:
        """Every framework asked for, the first one first."""
        return ((self.framework, self.framework_version), *self.more_frameworks)


@dataclass(frozen=True)
class InstallScriptRequest:
    distro: str | None = None  # "ubuntu24.04", "debian12", "rhel9", "rocky8", "amzn2023", "wsl-ubuntu24.04", ...
    driver: bool = True  # install the NVIDIA driver (never inside WSL)
    cuda_toolkit: str | None = None  # "12.8": also install this toolkit; None: not asked
    cudnn: bool = False
    container_toolkit: bool = False
    framework: str | None = "torch"  # a venv with this framework; None: no Python step
    framework_version: str | None = None
    python: str | None = None
    venv: str = "~/.venvs/gpu"
    target: MachineTarget = field(default_factory=MachineTarget)
    vendor: str | None = None  # "amd": the ROCm stack; "nvidia"; None: from the machine
    rocm: str | None = None  # the ROCm release to install ("6.2.2"); None: the newest the knowledge base has


@dataclass(frozen=True)
class Choice:
    """One decision a generator made, with why: written into the file's header and printed with -v."""

    what: str  # "base image", "torch", "driver branch"
    chosen: str  # "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"
    why: str  # "driver 570.124.04 runs CUDA <= 12.8; torch 2.13 cu128 is its newest build"


@dataclass(frozen=True)
class GeneratedFile:
    text: str
    choices: tuple[Choice, ...] = ()
    kind: str = "dockerfile"  # "dockerfile" or "install-script"
