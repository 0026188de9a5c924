"""Container commands a person pasted, and what they say about GPU access and the image's CUDA.

A report often shows the ``docker run`` (or podman, nerdctl, nvidia-docker) line that failed.  Whether it asked
for GPUs (``--gpus``, ``--runtime=nvidia``, a CDI ``--device nvidia.com/gpu=...``, ``/dev/nvidia*`` devices, or
nvidia-docker itself) and which CUDA its ``nvidia/cuda:X.Y`` image needs are facts as good as any collected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev

if TYPE_CHECKING:
    from gpudoctor.evidence.model import Evidence

_RUN = re.compile(r"\b(docker|podman|nerdctl|nvidia-docker)\s+(?:container\s+)?run\b([^\n]*)")
_GPU_FLAG = re.compile(
    r"--gpus\b|--runtime[= ]nvidia\b|--device[= ](?:nvidia\.com/gpu|/dev/nvidia|/dev/dri)|NVIDIA_VISIBLE_DEVICES"
    r"|--device[= ]\S*gpu"
)
# An nvidia/cuda image (also nvcr.io's and the old nvidia/cuda:X.Y-cudnn tags) and the CUDA it is built for.
_CUDA_IMAGE = re.compile(r"\b(?:nvcr\.io/)?nvidia/cuda:(\d+\.\d+)(?:\.\d+)?\b")
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.MULTILINE | re.IGNORECASE)
# nvidia-docker 1 and the container CLI state the image's requirement themselves.
_REQUIREMENT = re.compile(r"unsatisfied condition: cuda\s*>=\s*(\d+\.\d+)|driver \d+\.\d+ < image (\d+\.\d+)")
# nvidia-docker 1 says the driver's CUDA too: "unsupported CUDA version: driver 7.5 < image 8.0".
_DRIVER_CUDA = re.compile(r"unsupported CUDA version: driver (\d+\.\d+) < image")


@dataclass(frozen=True)
class PastedContainerRun:
    """One ``<engine> run ...`` line from a paste."""

    engine: str  # "docker", "podman", "nerdctl", "nvidia-docker"
    line: str  # the line as pasted
    gpu_access: bool  # it asked for GPUs (nvidia-docker always does)
    image_cuda: str | None  # "12.4" for an nvidia/cuda:12.4.1-... image on the line


@dataclass(frozen=True)
class PastedContainers:
    runs: tuple[PastedContainerRun, ...] = ()
    image_cuda: tuple[str, ...] = ()  # every nvidia/cuda image CUDA named (run lines, FROM lines, requirements)
    driver_cuda: str | None = None  # the driver's newest CUDA, when a container runtime said it

    @property
    def runs_without_gpus(self) -> tuple[PastedContainerRun, ...]:
        return tuple(run for run in self.runs if not run.gpu_access)


def pasted_containers(evidence: Evidence) -> PastedContainers:
    """The container runs and CUDA images a paste names (empty for collected evidence)."""
    text = evidence.text(Ev.PASTE.value)
    if not text:
        return PastedContainers()
    runs = []
    for match in _RUN.finditer(text):
        if match.start() - (text.rfind("\n", 0, match.start()) + 1) > 120:
            continue  # deep inside a long line: prose or a log message, not a command
        engine, rest = match.group(1), match.group(2)
        image = _CUDA_IMAGE.search(rest)
        runs.append(
            PastedContainerRun(
                engine=engine,
                line=text[text.rfind("\n", 0, match.start()) + 1 : match.end()].strip()[:300],
                gpu_access=engine == "nvidia-docker" or bool(_GPU_FLAG.search(rest)),
                image_cuda=image.group(1) if image else None,
            )
        )
    images = [m.group(1) for m in _CUDA_IMAGE.finditer(text)]
    images += [m.group(1) or m.group(2) for m in _REQUIREMENT.finditer(text)]
    for base in _FROM.finditer(text):
        image = _CUDA_IMAGE.search(base.group(1))
        if image:
            images.append(image.group(1))
    said = _DRIVER_CUDA.search(text)
    return PastedContainers(tuple(runs), tuple(dict.fromkeys(images)), said.group(1) if said else None)


# --------------------------------------------------------------------------- platform and TensorFlow's GPU list

_WSL = re.compile(r"microsoft-standard-WSL2|\bWSL ?2\b|/usr/lib/wsl/", re.IGNORECASE)
_WINDOWS = re.compile(
    r"\bWindows(?:[ -]\d+|[ -]Server|[ -]1[01])\b|\bMicrosoft Windows\b|\bwin_amd64\b|\bwin32\b"
    r"|\b[A-Z]:\\(?:Users|Program Files|ProgramData|Python\d*|anaconda\d?|miniconda\d?|tools)\\",
    re.IGNORECASE,
)
_MACOS = re.compile(r"\bmacOS\b|\bMac OS X\b|\bDarwin\b|\bosx-arm64\b|\bApple M\d\b", re.IGNORECASE)


def pasted_platform(evidence: Evidence) -> str | None:
    """ "wsl", "windows", "macos" or "linux" as a paste shows it (collected evidence knows better), else None."""
    text = evidence.text(Ev.PASTE.value)
    if not text:
        return None
    if _WSL.search(text):
        return "wsl"
    if _WINDOWS.search(text):
        return "windows"
    if _MACOS.search(text):
        return "macos"
    return "linux" if re.search(r"\b(?:Ubuntu|Debian|CentOS|Fedora|Rocky|RHEL|Linux)\b", text) else None
