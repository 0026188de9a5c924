"""deepo-style Dockerfiles: several frameworks in one image (``--framework torch,tensorflow,jax``), and
``--jupyter`` (JupyterLab as the image's service, see ``dockerfile_jupyter``).  This module checks the request,
tries the base OSes and puts the file together; the parts are elsewhere:

- ``dockerfile_multi_search`` (with ``dockerfile_multi_candidates``): each framework's build and the venvs.  The
  frameworks whose versions were not pinned may take older builds the knowledge base accepts for this driver, GPUs
  and Python, so that all of them share one venv: same CUDA major, and pins of every ``nvidia-*`` wheel two of them
  declare that some release satisfies (``kb.pip_pins.agree``).  When no set agrees the odd one out, or each, gets a
  venv of its own, and the header says why and which newer builds were passed over.
- ``dockerfile_multi_blocks``: the body (venvs, installs, kernels, command); ``dockerfile_multi_header``: the header.
- The base image: every build here brings its CUDA libraries as wheels, so the image only has to start on the
  driver; of the images the single-framework generator picks for each build (each already no newer than the
  driver runs), the newest: its cudart and nvcc are the newest the driver runs, and a devel image's nvcc then
  has the CUDA major of the newest build.
- ``--cpu``: CPU wheels (torch's CPU index, plain tensorflow and jax) in one venv; they declare no CUDA library.
"""

from __future__ import annotations

import re
import string

from gpudoctor.generate.dockerfile_base import choose_base_image
from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_fields import load_template
from gpudoctor.generate.dockerfile_jupyter import jupyter_block, jupyter_plan, jupyter_tail
from gpudoctor.generate.dockerfile_multi_blocks import (
    command_choice,
    command_tail,
    constrained_venvs,
    env_block,
    framework_block,
    kernel,
    preflight,
    system_block,
)
from gpudoctor.generate.dockerfile_multi_header import header, venv_list
from gpudoctor.generate.dockerfile_multi_search import plan_builds
from gpudoctor.generate.dockerfile_preflight import check_preflight_python, source_choice
from gpudoctor.generate.dockerfile_python import (
    CPU_DEFAULT_PYTHON,
    CPU_PYTHONS,
    apt_steps,
    on_fitting_os,
    python_for_os,
    said,
)
from gpudoctor.generate.model import GENERATOR_FRAMEWORKS, Choice, DockerfileRequest, GeneratedFile, GenerationRefused

# The apt lines that install the image's Python: the single-framework generator's, handed in by its dispatch (so
# this module never imports that one, which imports this).

_VERSION_RE = re.compile(r"\d{1,3}(\.\d{1,4}){0,3}")


def wants_multi(request: DockerfileRequest) -> bool:
    return bool(request.more_frameworks) or request.jupyter


def refuse_rocm(request: DockerfileRequest) -> GenerationRefused:
    return GenerationRefused(
        "ROCm images hold one framework (torch) and no JupyterLab yet: gpudoctor writes them for torch alone",
        "--framework torch --vendor amd",
    )


def multi_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    """The Dockerfile for several frameworks and/or JupyterLab, or GenerationRefused with the nearest request."""
    _check(request)
    if request.cpu:
        return _dockerfile(request, None)
    return on_fitting_os(request, lambda os_token: _dockerfile(request, os_token))


def _check(request: DockerfileRequest) -> None:
    names = [name for name, _ in request.frameworks]
    for name, version in request.frameworks:
        if name not in GENERATOR_FRAMEWORKS:
            raise GenerationRefused(
                f"unknown framework {said(name)}: choose torch, tensorflow or jax", "--framework torch,tensorflow,jax"
            )
        if version is not None and not _VERSION_RE.fullmatch(str(version)):
            raise GenerationRefused(f"{said(version)} is not a version like 2.7 or 2.7.1", f"--framework {name}")
    if len(set(names)) != len(names):
        unique = ",".join(dict.fromkeys(names))
        raise GenerationRefused(f"a framework is named twice ({','.join(names)})", f"--framework {unique}")
    if request.requirements and len(names) > 1:
        raise GenerationRefused(
            "--requirements with several frameworks: which venv should hold them is yours to say",
            f"--framework {names[0]} --requirements {request.requirements}",
        )


def _base(request: DockerfileRequest, builds: list[Build], driver: str | None, os_token: str) -> Choice:
    from gpudoctor.kb.versions import cuda_key

    images = [choose_base_image(request, build, driver, os_token) for build in builds]
    newest = max(images, key=lambda image: cuda_key(image.chosen.split(":", 1)[1].split("-", 1)[0]))
    chosen_for = [b.framework for b, i in zip(builds, images) if i.chosen == newest.chosen]
    others = sorted({i.chosen for i in images} - {newest.chosen})
    why = newest.why
    if others:
        why += (
            f"; chosen for {', '.join(chosen_for)}: every build brings its own CUDA libraries as wheels, so of the "
            f"images each build would get alone ({', '.join(others)} too) the newest, all of which the driver "
            "runs, gives the newest cudart and nvcc"
        )
    return Choice("base image", newest.chosen, why)


def _dockerfile(request: DockerfileRequest, os_token: str | None) -> GeneratedFile:
    from gpudoctor import kb

    text = request.target.driver_version
    driver = text if (not request.cpu and isinstance(text, str) and kb.parse_driver_version(text)) else None
    if os_token is None:
        python = request.python or CPU_DEFAULT_PYTHON
        if python not in CPU_PYTHONS:
            raise GenerationRefused(
                f"Python {said(python)} has no python:X.Y-slim-bookworm image gpudoctor knows",
                f"--cpu --python {CPU_DEFAULT_PYTHON}",
            )
        binary, apt = "python", ""
        python_choice = Choice("python", f"{python} (the image's own)", "the python image's interpreter, in venvs")
    else:
        picked = python_for_os(request, os_token)
        python, binary, python_choice = picked.version, picked.binary, picked.choice
        apt = apt_steps(request, picked)
    builds, layout = plan_builds(request, driver, python, os_token)
    choices: list[Choice] = []
    if os_token is None:
        image = f"python:{python}-slim-bookworm"
        choices.append(Choice("base image", image, "--cpu: the Docker official Python image on Debian 12, no CUDA"))
        check_preflight_python(request, python, "the image's Python")
    else:
        max_cuda = kb.max_cuda_for_driver(driver) if driver else None
        driver_why = f"from {request.target.source}" + (
            f"; it runs CUDA {max_cuda} and older natively" if max_cuda else ""
        )
        choices.append(Choice("host driver", driver or "unknown", driver_why))
        choices.append(
            Choice("base OS", os_token, "asked with --os" if request.os else "the newest Ubuntu LTS that fits")
        )
        base = _base(request, builds, driver, os_token)
        image = base.chosen
        choices.append(base)
        check_preflight_python(request, python, f"{os_token}'s Python")
    choices += [build.choice for build in builds]
    if len(builds) > 1:
        choices.append(Choice("venvs", "/opt/venv" if layout.shared else venv_list(builds, layout), layout.why))
    choices.append(python_choice)
    plan = None
    if request.jupyter:
        plan = jupyter_plan(python, "--python 3.12" if os_token is None else "--os ubuntu24.04")
        choices.append(plan.choice)
    choices.append(source_choice(request))
    command = command_choice(request)
    choices.append(command)
    first = layout.venv(builds[0].framework)
    venvs = layout.ordered_venvs()
    makes = [f"{binary} -m venv {venv}" for venv in venvs] + ([f"{binary} -m venv /opt/jupyter"] if plan else [])
    fields = {
        "header": header(request, tuple(choices), builds, layout),
        "base_image": image,
        "env_block": env_block(request, first),
        "system_block": system_block(os_token, apt, makes),
        "framework_block": framework_block(builds, layout),
        "jupyter_block": "",
        "preflight_block": preflight(request, python),
        "tail_block": jupyter_tail() if plan else command_tail(request, command.chosen),
    }
    if plan:
        kernels = [(venv, *kernel(builds, layout, venv)) for venv in venvs]
        fields["jupyter_block"] = jupyter_block(plan, kernels, constrained_venvs(builds, layout))
    text = string.Template(load_template("Dockerfile.multi.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=tuple(choices), kind="dockerfile")
