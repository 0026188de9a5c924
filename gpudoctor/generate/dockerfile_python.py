"""The Python a generated Dockerfile runs: the base OS's own, one the deadsnakes PPA builds for it, or the Docker
official ``python`` image's for ``--cpu``; and the nearest Python a refusal can name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TypeVar

from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused
from gpudoctor.kb.python_versions import parse_python_version

# Generated lines are wrapped at this width (comments, long apt-get lines).
WRAP = 116

# The Python each supported base OS ships as python3 (packages.ubuntu.com: focal python3 3.8.2-0ubuntu2, jammy
# python3 3.10.6-1~22.04, noble python3 3.12.3-0ubuntu1).
OS_PYTHON = {"ubuntu24.04": "3.12", "ubuntu22.04": "3.10", "ubuntu20.04": "3.8"}
# Tried in this order when no --os is asked: the newest LTS first.  Ubuntu 20.04 last: NVIDIA still publishes its
# images up to CUDA 12.9 (none for 13.x), which old drivers and Python 3.8 projects need.
OS_ORDER = ("ubuntu24.04", "ubuntu22.04", "ubuntu20.04")
# What the deadsnakes PPA builds for each LTS. Its description ("Supported Ubuntu and Python Versions" on
# launchpad.net/~deadsnakes/+archive/ubuntu/ppa, as add-apt-repository prints it in 2024-2025 logs; noble's line as
# corrected in github.com/deadsnakes/issues/issues/284): jammy "Python3.7 - Python3.9, Python3.11 - Python3.13",
# noble "Python3.7 - Python3.11, Python3.13", never the Python Ubuntu itself ships. 3.14 on noble: newer than the
# description, seen installed from the PPA on Ubuntu 24.04 (EduMIPS64/edumips64#1641, "install Python 3.14 from the
# deadsnakes PPA", merged 2026-04). No such evidence for 3.14 on jammy, so it is left out there: a refusal naming
# 3.13 beats a Dockerfile whose apt step fails.
DEADSNAKES_PYTHONS = {
    "ubuntu24.04": ("3.7", "3.8", "3.9", "3.10", "3.11", "3.13", "3.14"),
    "ubuntu22.04": ("3.7", "3.8", "3.9", "3.11", "3.12", "3.13"),
    # The 2024-2025 description above lists no focal, and "packages are deleted from deadsnakes once a distribution
    # version reaches end-of-life" (github.com/deadsnakes/issues/issues/251): focal's own 3.8 only.
    "ubuntu20.04": (),
}
# python:X.Y-slim-bookworm images of the Docker official "python" image for the --cpu base. 3.9 reached end of life
# and docker-library/python removed it (PR #1094, commit 59e4abf, "Remove all traces of the now-EOL 3.9 release
# series", 2025-10-31); 3.14 came with the GA release (PR #1083, 2025-10-07).
CPU_PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
CPU_DEFAULT_PYTHON = "3.12"


_Built = TypeVar("_Built")


def checked_os(os_token: object) -> str:
    """An ``--os`` token gpudoctor writes Dockerfiles for, else the refusal naming the ones it does."""
    token = str(os_token).strip().lower()
    if token in OS_PYTHON:
        return token
    raise GenerationRefused(
        f"base OS {said(os_token)} is not one gpudoctor writes Dockerfiles for (its steps use apt and "
        f"Ubuntu's packages): {', '.join(OS_ORDER)}",
        f"--os {OS_ORDER[0]}",
    )


def on_fitting_os(request: DockerfileRequest, build: Callable[[str], _Built]) -> _Built:
    """``build`` on the asked ``--os``, else on the first base OS (newest LTS first) where it fits.

    When none fits, every OS was tried: a refusal pointing at another OS (or at ``--preflight``, which is about
    the image's gpudoctor, not the machine) says nothing new, and "--cpu" gives up the GPU, so the first refusal
    that names a change of framework, Python or driver is the most useful one.
    """
    if request.os is not None:
        return build(checked_os(request.os))
    refusals: list[GenerationRefused] = []
    for os_token in OS_ORDER:
        try:
            return build(os_token)
        except GenerationRefused as refusal:
            refusals.append(refusal)

    def rank(refusal: GenerationRefused) -> int:
        nearest = refusal.nearest or ""
        return 2 if nearest.startswith(("--os ", "--preflight ")) else 1 if nearest.startswith("--cpu") else 0

    raise min(refusals, key=rank)


@dataclass(frozen=True)
class PythonChoice:
    """The interpreter the image runs and where it comes from."""

    version: str
    binary: str  # "python3" or "python3.11"
    deadsnakes: bool
    choice: Choice


def said(value: object) -> str:
    """A value a person typed, quoted and cut short for a one-line message."""
    return repr(str(value)[:40])


def python_for_os(request: DockerfileRequest, os_token: str) -> PythonChoice:
    own = OS_PYTHON[os_token]
    asked = request.python
    if asked is None or asked == own:
        why = "the base OS's own python3" + (" (asked with --python)" if asked else "")
        return PythonChoice(own, "python3", False, Choice("python", f"{own} ({os_token}'s python3)", why))
    if asked in DEADSNAKES_PYTHONS[os_token]:
        why = (
            f"{os_token} ships Python {own}; {asked} comes from the deadsnakes PPA (ppa:deadsnakes/ppa), "
            "which builds the Pythons an Ubuntu LTS does not ship"
        )
        return PythonChoice(asked, f"python{asked}", True, Choice("python", f"{asked} (deadsnakes PPA)", why))
    nearest = nearest_for_python(asked)
    raise GenerationRefused(
        f"Python {said(asked)} is neither {os_token}'s own ({own}) nor one gpudoctor knows the deadsnakes PPA "
        "to build for it",
        nearest,
    )


def nearest_for_python(asked: str) -> str:
    for os_token in OS_ORDER:
        if OS_PYTHON[os_token] == asked:
            return f"--os {os_token} --python {asked}"
    for os_token in OS_ORDER:
        if asked in DEADSNAKES_PYTHONS[os_token]:
            return f"--os {os_token} --python {asked}"
    if asked in CPU_PYTHONS:
        return f"--cpu --python {asked}"
    return f"--python {OS_PYTHON[OS_ORDER[0]]}"


def python_in_range(os_token: str, low: str | None, high: str | None) -> str | None:
    """The Python this OS can give (its own first) inside [low, high], for a refusal's nearest request."""

    def key(version: str) -> tuple[int, int]:
        return parse_python_version(version) or (0, 0)

    candidates = [OS_PYTHON[os_token], *reversed(DEADSNAKES_PYTHONS[os_token])]
    for version in candidates:
        if (low is None or key(version) >= key(low)) and (high is None or key(version) <= key(high)):
            return version
    return None


def python_between(version: str, low: str | None, high: str | None) -> bool:
    value = parse_python_version(version)
    return (
        value is not None
        and (low is None or value >= (parse_python_version(low) or (0, 0)))
        and (high is None or value <= (parse_python_version(high) or (99, 99)))
    )


def apt_steps(request: DockerfileRequest, python: PythonChoice) -> str:
    """The apt-get lines of the system-packages RUN: the Python, its venv module, build tools for devel."""
    packages = ["ca-certificates", python.binary, f"{python.binary}-venv"]
    if request.flavor == "devel":  # a compiler and Python headers to build CUDA extensions with nvcc
        packages += ["build-essential", f"{python.binary}-dev"]
    lines = []
    if python.deadsnakes:
        # add-apt-repository fetches the PPA's signing key over HTTPS from Launchpad (gpg-agent stores it).
        lines += [
            "    && apt-get install -y --no-install-recommends software-properties-common gpg-agent \\",
            "    && add-apt-repository -y ppa:deadsnakes/ppa \\",
            "    && apt-get update \\",
        ]
    install = f"    && apt-get install -y --no-install-recommends {' '.join(packages)} \\"
    if len(install) > WRAP:
        install = f"    && apt-get install -y --no-install-recommends \\\n        {' '.join(packages)} \\"
    lines.append(install)
    return "".join(line + "\n" for line in lines)
