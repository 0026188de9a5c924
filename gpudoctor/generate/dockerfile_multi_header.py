"""The header of a multi-framework Dockerfile: what the image is, how to regenerate, build and run it, the venvs,
the newer builds passed over so that frameworks could share one (and the ``--framework`` that gives the newest of
each instead), and every choice with its reason."""

from __future__ import annotations

import shlex

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_fields import choice_lines, comment_lines, tail_words
from gpudoctor.generate.dockerfile_jupyter import jupyter_header
from gpudoctor.generate.dockerfile_multi_search import Layout
from gpudoctor.generate.inputs import comment_safe
from gpudoctor.generate.model import Choice, DockerfileRequest

_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


def venv_list(builds: list[Build], layout: Layout) -> str:
    """ "/opt/venv (torch, jax), /opt/venv-tensorflow (tensorflow)": each venv and what it holds."""
    held = {venv: [b.framework for b in builds if layout.venv(b.framework) == venv] for venv in layout.ordered_venvs()}
    return ", ".join(f"{venv} ({', '.join(names)})" for venv, names in held.items())


def regenerate(request: DockerfileRequest, frameworks: str | None = None) -> str:
    """The command that writes this file again (``frameworks``: another --framework value)."""
    words = ["gpudoctor", "dockerfile"]
    source = request.target.source or ""
    if not request.cpu:
        if source.startswith("snapshot "):
            words += ["--from", source[len("snapshot ") :]]
        elif request.target.driver_version:
            words += ["--for-driver", request.target.driver_version]
    asked = ",".join(n + (f"=={v}" if v else "") for n, v in request.frameworks)
    words += ["--framework", frameworks or asked]
    if request.jupyter:
        words.append("--jupyter")
    if request.cpu:
        words.append("--cpu")
    else:
        words += ["--flavor", request.flavor] + (["--os", request.os] if request.os else [])
    words += tail_words(request)
    return " ".join(shlex.quote(word) for word in words)


def _kb_date() -> str:
    """The newest date of the data files the choices came from (drivers, the three frameworks, images, pins)."""
    from gpudoctor import kb
    from gpudoctor.kb.pip_pins import as_of

    info = kb.kb_info()
    stems = ("driver_cuda", "pytorch", "tensorflow", "python_gpu_packages", "docker_cuda")
    dates = {str(info[stem].get("as_of")) for stem in stems if stem in info and info[stem].get("as_of")}
    dates |= {as_of() or ""} - {""}
    return f"as of {max(dates)}" if dates else "date unknown"


def header(request: DockerfileRequest, choices: tuple[Choice, ...], builds: list[Build], layout: Layout) -> str:
    from gpudoctor import __version__

    gpu = "" if request.cpu else " --gpus all"
    names = ", ".join(_NAMES[b.framework] for b in builds)
    what = (
        names + (" (CPU only)" if request.cpu else " on NVIDIA GPUs") + (" with JupyterLab" if request.jupyter else "")
    )
    lines = [
        f"# A {what} image, written by gpudoctor {__version__} from its knowledge base ({_kb_date()}).",
        f"# Regenerate: {regenerate(request)}",
        "# Build: docker build -t my-image .",
    ]
    if request.jupyter:
        lines += jupyter_header(gpu)
        lines.append(
            f"# Preflight (is the GPU usable in the container?): docker run --rm{gpu} my-image gpudoctor check"
            + ("" if request.cpu else " --require-gpu")
        )
    else:
        lines.append(f"# Run: docker run --rm{gpu} my-image")
    if not layout.shared:
        lead = "The venvs" if layout.group else "Each framework has its own venv"
        lines += comment_lines(f"{lead}: {venv_list(builds, layout)}; the first is on PATH.", "# ", "# ")
    if layout.passed_over:
        lines.append("# Newer builds passed over so that the frameworks share a venv (their wheels' pins disagree):")
        for line in layout.passed_over:
            lines += comment_lines(f"- {line}", "#   ", "#     ")
    if layout.newest:
        lines.append("# The newest of each instead, in venvs of their own where they disagree:")
        lines.append(f"#   {regenerate(request, layout.newest)}")
    lines += ["#", "# What was chosen and why:"]
    lines += choice_lines(request, choices)
    return "\n".join(comment_safe(line.rstrip(), 1000) for line in lines)
