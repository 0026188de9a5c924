"""The body of a multi-framework Dockerfile: environment, system packages and venvs, the framework installs, the
JupyterLab kernels' venvs, the preflight and the command (the header is ``dockerfile_multi_header``).

The installs: in a venv that several frameworks share, torch comes first from its own index; then the PyPI
frameworks in one resolution, held by a constraints file of everything the torch step installed (``pip freeze``),
so the second step cannot swap torch's CUDA libraries.  Without torch they resolve together in one ``pip install``.
A framework with a venv of its own installs there with that venv's pip.
"""

from __future__ import annotations

import json
import shlex

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_fields import comment_lines
from gpudoctor.generate.dockerfile_jupyter import KERNEL_NAMES
from gpudoctor.generate.dockerfile_multi_search import SHARED_VENV, Layout
from gpudoctor.generate.dockerfile_preflight import preflight_block
from gpudoctor.generate.model import Choice, DockerfileRequest

_CACHE = "RUN --mount=type=cache,target=/root/.cache/pip \\"
CONSTRAINTS = f"{SHARED_VENV}/constraints.txt"


def env_block(request: DockerfileRequest, venv: str) -> str:
    lines = []
    if not request.cpu:
        lines += [
            "ARG DEBIAN_FRONTEND=noninteractive",
            "# The NVIDIA Container Toolkit mounts the host driver's libraries and devices by these two variables.",
            "ENV NVIDIA_VISIBLE_DEVICES=all \\",
            "    NVIDIA_DRIVER_CAPABILITIES=compute,utility \\",
            "    PYTHONDONTWRITEBYTECODE=1 \\",
        ]
    else:
        lines.append("ENV PYTHONDONTWRITEBYTECODE=1 \\")
    lines += [
        "    PYTHONUNBUFFERED=1 \\",
        "    PIP_DISABLE_PIP_VERSION_CHECK=1 \\",
        f"    VIRTUAL_ENV={venv} \\",
        f"    PATH={venv}/bin:$PATH",
    ]
    return "".join(line + "\n" for line in lines)


def system_block(os_token: str | None, apt: str, makes: list[str]) -> str:
    venvs = "".join(f"    && {make} \\\n" for make in makes)
    user = (
        "    && groupadd --gid 10001 gpu \\\n"
        "    && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash gpu\n"
    )
    if os_token is None:
        first, rest = makes[0], makes[1:]
        lines = (
            "# The venvs keep the image's own pip and packages apart from the frameworks'; a non-root user to run it.\n"
        )
        return lines + f"RUN {first} \\\n" + "".join(f"    && {make} \\\n" for make in rest) + user
    return (
        "# System packages, the venvs (PEP 668 marks Ubuntu's own Python externally managed) and a non-root user.\n"
        "# The base image's docker-clean hook would delete downloaded .debs; removing it lets the BuildKit cache "
        "keep them.\n"
        "# Ubuntu's archive replaces package versions within a release, so pins would break later builds: the base\n"
        "# image tag fixes the release instead.\n"
        "# hadolint ignore=DL3008\n"
        "RUN --mount=type=cache,target=/var/cache/apt,sharing=locked \\\n"
        "    rm -f /etc/apt/apt.conf.d/docker-clean \\\n"
        "    && apt-get update \\\n"
        f"{apt}    && rm -rf /var/lib/apt/lists/* \\\n{venvs}{user}"
    )


def group_builds(builds: list[Build], layout: Layout) -> list[Build]:
    """The builds that share /opt/venv, torch first (it comes from its own index, the others from PyPI)."""
    group = [b for b in builds if b.framework in layout.group]
    return sorted(group, key=lambda b: b.framework != "torch")


def constrained_venvs(builds: list[Build], layout: Layout) -> dict[str, str]:
    """venv -> constraints file, for the venv whose later installs must keep what torch installed."""
    group = group_builds(builds, layout)
    return {SHARED_VENV: CONSTRAINTS} if len(group) > 1 and group[0].framework == "torch" else {}


def framework_block(builds: list[Build], layout: Layout) -> str:
    if len(builds) == 1:
        single = ["# The framework build.", _CACHE, f"    pip install {builds[0].pip_args}"]
        return "".join(line + "\n" for line in single) + "\n"
    if layout.shared:
        return _shared_lines(group_builds(builds, layout), "pip", "") + "\n"
    apart = [b for b in builds if b.framework not in layout.group]
    lines: list[str] = []
    block = ""
    if layout.group:
        block = _shared_lines(group_builds(builds, layout), f"{SHARED_VENV}/bin/pip", f" ({SHARED_VENV})")
        lines = comment_lines(
            "Then each framework whose CUDA libraries disagree with theirs, in its own venv: run it with that venv's "
            "python (" + ", ".join(f"{layout.venv(b.framework)}/bin/python" for b in apart) + ").",
            "# ",
            "# ",
        )
    else:
        lines = comment_lines(
            "The framework builds, each in its own venv: run each with its venv's python ("
            + ", ".join(f"{layout.venv(b.framework)}/bin/python" for b in builds)
            + ").",
            "# ",
            "# ",
        )
    installs = [f"{layout.venv(build.framework)}/bin/pip install {build.pip_args}" for build in apart]
    lines += [_CACHE, "    " + " \\\n    && ".join(installs)]
    return block + "".join(line + "\n" for line in lines) + "\n"


def _shared_lines(group: list[Build], pip: str, where: str) -> str:
    """The installs of the builds that share one venv (``pip``: "pip" when that venv is on PATH, else its path)."""
    first, rest = group[0], group[1:]
    if first.framework == "torch":
        names = " and ".join(b.framework for b in rest)
        held = "cannot swap torch's CUDA libraries" if first.cuda else "cannot change what torch installed"
        lines = comment_lines(
            f"The framework builds, in one venv{where}: torch from its own index first; then {names} from PyPI in one "
            f"resolution, held by a constraints file of every package the torch step installed, so the second step "
            f"{held}.",
            "# ",
            "# ",
        )
        lines += [
            _CACHE,
            f"    {pip} install {first.pip_args} \\",
            f"    && {pip} freeze > {CONSTRAINTS}",
            _CACHE,
            f"    PIP_CONSTRAINT={CONSTRAINTS} {pip} install " + " ".join(b.pip_args for b in rest),
        ]
        return "".join(line + "\n" for line in lines)
    lines = [f"# The framework builds, in one venv{where} and one resolution (all from PyPI).", _CACHE]
    lines.append(f"    {pip} install " + " ".join(b.pip_args for b in group))
    return "".join(line + "\n" for line in lines)


def kernel(builds: list[Build], layout: Layout, venv: str) -> tuple[str, str]:
    """The kernel name and display name of the framework venv ``venv``."""
    held = [b.framework for b in builds if layout.venv(b.framework) == venv]
    name = held[0] if len(held) == 1 else "frameworks"
    display = KERNEL_NAMES[held[0]] if len(held) == 1 else "Python (" + ", ".join(KERNEL_NAMES[f] for f in held) + ")"
    return name, display


def preflight(request: DockerfileRequest, python: str) -> str:
    block = preflight_block(request, python)
    if request.jupyter:  # JupyterLab is the command; the check is the header's one-off docker run
        block = block.replace(
            "whose check is the default command below", "whose check the header's preflight line runs"
        )
        block = block.replace(
            "which adds these lines and makes the default command its check:", "which adds these lines:"
        )
        block = "".join(line for line in block.splitlines(keepends=True) if not line.startswith("#   CMD ["))
    return block


def command_choice(request: DockerfileRequest) -> Choice:
    if request.jupyter:
        return Choice(
            "default command",
            "jupyter lab --ip=0.0.0.0 --port=8888 --no-browser",
            "JupyterLab as the image's service, as the non-root user; the preflight stays one command away: "
            "docker run --rm"
            + ("" if request.cpu else " --gpus all")
            + " my-image gpudoctor check"
            + ("" if request.cpu else " --require-gpu")
            + ("" if request.preflight != "none" else " (after adding it: see below)"),
        )
    if request.preflight == "none":
        module = request.framework
        return Choice(
            "default command",
            f"python -c 'import {module}; print({module}.__version__)'",
            "no preflight: the command only shows that the first framework imports",
        )
    if request.cpu:
        return Choice("default command", "gpudoctor check --format text", "reports what the container sees")
    return Choice(
        "default command",
        "gpudoctor check --require-gpu --format text",
        "a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)",
    )


def command_tail(request: DockerfileRequest, command: str) -> str:
    words = ", ".join(json.dumps(word) for word in shlex.split(command))
    if request.cpu:
        return f"# Replace this with your own command (docker run IMAGE python train.py).\nCMD [{words}]\n"
    return (
        "# Replace this with your own command (docker run --gpus all IMAGE python train.py); run it as it is to check\n"
        "# that the container sees a usable GPU (exit 0) before a long job starts.\n"
        f"CMD [{words}]\n"
    )
