"""The text pieces every Dockerfile shares, CUDA, CPU and ROCm alike: the templates, the framework and requirements
steps, the default command, and the header's wrapped comment lines."""

from __future__ import annotations

import json
import shlex
import textwrap

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_python import WRAP
from gpudoctor.generate.model import Choice, DockerfileRequest


def load_template(name: str) -> str:
    """A template of the ``gpudoctor_dockerfiles`` package; from the source tree when it is not installed."""
    try:
        from importlib import resources

        return resources.files("gpudoctor_dockerfiles").joinpath(name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        import pathlib

        path = pathlib.Path(__file__).resolve().parents[2] / "dockerfiles" / name
        return path.read_text(encoding="utf-8")


def build_fields(request: DockerfileRequest, build: Build, command: str, image: str) -> dict[str, str]:
    """The template fields of the framework build, the user's requirements and the default command."""
    constraint = ""
    if build.constraint and request.requirements:
        constraint = f" \\\n    && echo '{build.constraint}' > /opt/venv/constraints.txt"
    words = shlex.split(command)
    return {
        "base_image": image,
        "framework_install": build.pip_args,
        "constraints_step": constraint,
        "requirements_block": _requirements_block(request, build),
        "command": ", ".join(json.dumps(word) for word in words),
    }


def _requirements_block(request: DockerfileRequest, build: Build) -> str:
    if not request.requirements:
        return ""
    extra = f" \\\n    --extra-index-url {build.extra_index}" if build.extra_index else ""
    constraint = " --constraint /opt/venv/constraints.txt" if build.constraint else ""
    lines = [
        f"# Your requirements, held to the {build.framework} build above (the constraint) so a bare "
        f"'{build.framework}' line",
        "# cannot swap it for another build"
        + ("; the framework's index serves its companions (torchvision...)." if extra else "."),
        f"COPY {request.requirements} /tmp/requirements.txt",
        "RUN --mount=type=cache,target=/root/.cache/pip \\",
        f"    pip install --requirement /tmp/requirements.txt{constraint}{extra}",
    ]
    return "".join(line + "\n" for line in lines) + "\n"


def comment_lines(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width=WRAP, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    ) or [first.rstrip()]


def choice_lines(request: DockerfileRequest, choices: tuple[Choice, ...]) -> list[str]:
    """The header's "What was chosen and why" lines: the GPUs it was fitted to, then each choice and its reason."""
    lines: list[str] = []
    if request.target.compute_capabilities and not request.cpu:
        gpus = ", ".join(request.target.gpu_names) or "GPUs"
        lines += comment_lines(
            f"- GPUs: {gpus} (compute capability {', '.join(request.target.compute_capabilities)})", "# ", "#     "
        )
    for choice in choices:
        lines += comment_lines(f"- {choice.what}: {choice.chosen}", "# ", "#     ")
        lines += comment_lines(choice.why, "#     ", "#     ")
    return lines


def tail_words(request: DockerfileRequest) -> list[str]:
    """The regenerate command's last options, the same for every image: Python, requirements, preflight."""
    words: list[str] = []
    if request.python:
        words += ["--python", request.python]
    if request.requirements:
        words += ["--requirements", request.requirements]
    words += ["--preflight", request.preflight]
    if request.preflight == "wheel":
        words += ["-o", "Dockerfile"]  # the wheel is written next to the file
    return words
