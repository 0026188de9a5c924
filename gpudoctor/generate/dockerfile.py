"""``gpudoctor dockerfile``: a Dockerfile whose CUDA base image and framework build fit a host driver.

The request names the framework (torch, tensorflow, jax; optionally a version), the Python, the flavor
(runtime or devel), the base OS and the machine (driver, GPUs).  The knowledge base picks the framework
build (``choose_torch_wheel``, ``choose_tensorflow``, ``jax_releases.choose_jax``) and the base image
(``kb.docker_choice.choose_cuda_image``: a tag NVIDIA publishes); this module decides how they fit together
and fills a template from the top-level ``dockerfiles/`` folder (package ``gpudoctor_dockerfiles``).

Decisions, each written into the file's header:

- The pip wheels of all three frameworks bring their own CUDA runtime libraries (torch's cuXYZ wheels,
  ``tensorflow[and-cuda]``, ``jax[cudaNN]``), so a runtime image only needs the ``base`` flavor (cudart and
  the NVIDIA environment); a devel image brings ``nvcc`` for building extensions.  TensorFlow before 2.14 has
  no ``[and-cuda]``: it gets a cuDNN ``runtime``/``devel`` image of its tested CUDA instead.
- An old driver whose CUDA has no published image left (R470: 11.4) gets the newest image whose
  ``NVIDIA_REQUIRE_CUDA`` admits its branch (11.8.0 admits R470), run through minor-version compatibility.
- The base image's CUDA is the build's own CUDA, or the newest the driver runs natively when that is older
  (the image's ``NVIDIA_REQUIRE_CUDA`` makes the container toolkit refuse a newer CUDA on most GPUs; the
  wheel itself still runs through minor-version compatibility).  So ``nvcc`` in a devel image matches the
  wheel's CUDA major, which is what ``torch.utils.cpp_extension`` insists on.
- Python: the base OS's own (ubuntu24.04: 3.12, ubuntu22.04: 3.10, ubuntu20.04: 3.8), or another from the
  deadsnakes PPA, which builds the Pythons an Ubuntu LTS does not ship; always in a venv at /opt/venv (PEP 668).
- ``--cpu``: ``python:X.Y-slim-bookworm``, torch from the CPU index, plain ``tensorflow`` (its Linux wheel
  runs on the CPU when no CUDA libraries are installed), plain ``jax``.
- The default command is gpudoctor's preflight (``gpudoctor check --require-gpu``): a container started
  without ``--gpus`` or on a driver too old says so before a long job starts.  ``request.preflight`` says where
  that gpudoctor comes from: ``pypi`` (``gpudoctor==VERSION``), ``wheel`` (``wheel_name()``, which the command
  writes next to the Dockerfile, COPY'd in) or ``none`` (the framework's import as the command, and a comment
  saying how to add the preflight).

Same request, same bytes: nothing in the output depends on the clock, only on the request, the knowledge
base and gpudoctor's version.
"""

from __future__ import annotations

import re
import shlex
import string

from gpudoctor.generate.dockerfile_base import choose_base_image
from gpudoctor.generate.dockerfile_builds import Build, choose_build
from gpudoctor.generate.dockerfile_fields import build_fields, choice_lines, load_template, tail_words
from gpudoctor.generate.dockerfile_preflight import (
    PREFLIGHT_MODES,
    check_preflight_python,
    command_choice,
    preflight_block,
    source_choice,
    wheel_name,
)
from gpudoctor.generate.dockerfile_python import (
    CPU_DEFAULT_PYTHON,
    CPU_PYTHONS,
    DEADSNAKES_PYTHONS,
    OS_PYTHON,
    apt_steps,
    on_fitting_os,
    python_for_os,
    said,
)
from gpudoctor.generate.inputs import comment_safe, safe_request
from gpudoctor.generate.model import GENERATOR_FRAMEWORKS, Choice, DockerfileRequest, GeneratedFile, GenerationRefused

__all__ = [
    "CPU_PYTHONS",
    "DEADSNAKES_PYTHONS",
    "OS_PYTHON",
    "PREFLIGHT_MODES",
    "generate_dockerfile",
    "load_template",
    "wheel_name",
]

FLAVORS = ("runtime", "devel")
_REQUIREMENTS_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}")
_VERSION_RE = re.compile(r"\d{1,3}(\.\d{1,4}){0,2}")


# --------------------------------------------------------------------------- public entry


def generate_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    """The Dockerfile for ``request``, or GenerationRefused with the nearest request that works."""
    given_driver = request.target.driver_version
    request = safe_request(request)
    _check_request(request)
    from gpudoctor.generate.dockerfile_rocm import rocm_dockerfile, wants_rocm

    # Several frameworks or --jupyter: dockerfile_multi (one framework without --jupyter never goes there).
    multi = bool(request.more_frameworks) or request.jupyter
    if wants_rocm(request):
        if multi:
            from gpudoctor.generate.dockerfile_multi import refuse_rocm

            raise refuse_rocm(request)
        return rocm_dockerfile(request)
    if not request.cpu and isinstance(given_driver, str) and re.fullmatch(r"\s*\d{2,4}\s*", given_driver):
        # A bare branch would otherwise read as no driver at all ("unknown"); the CLI resolves it before this.
        from gpudoctor.kb.driver_cuda import oldest_driver_release

        oldest = oldest_driver_release(given_driver)
        raise GenerationRefused(
            f"driver {said(given_driver)} is a branch, not a release like 550.54.15",
            f"--for-driver {oldest or '550.54.15'}",
        )
    if multi:
        from gpudoctor.generate.dockerfile_multi import multi_dockerfile

        return multi_dockerfile(request)
    if request.cpu:
        return _cpu_dockerfile(request)
    return on_fitting_os(request, lambda os_token: _cuda_dockerfile(request, os_token))


def _check_request(request: DockerfileRequest) -> None:
    if request.preflight not in PREFLIGHT_MODES:
        raise GenerationRefused(
            f"unknown preflight {said(request.preflight)}: choose pypi, wheel or none", "--preflight wheel"
        )
    if request.framework not in GENERATOR_FRAMEWORKS:
        raise GenerationRefused(
            f"unknown framework {said(request.framework)}: choose torch, tensorflow or jax", "--framework torch"
        )
    if request.flavor not in FLAVORS:
        raise GenerationRefused(f"unknown flavor {said(request.flavor)}: choose runtime or devel", "--flavor runtime")
    if request.framework_version is not None and not _VERSION_RE.fullmatch(str(request.framework_version)):
        raise GenerationRefused(
            f"{said(request.framework_version)} is not a version like 2.7 or 2.7.1", f"--framework {request.framework}"
        )
    path = request.requirements
    if path is not None and (not _REQUIREMENTS_RE.fullmatch(path) or ".." in path.split("/")):
        raise GenerationRefused(
            f"--requirements {said(path)} must be a plain relative path inside the build context "
            "(letters, digits, . _ - /; no '..')",
            "--requirements requirements.txt",
        )


def _driver(request: DockerfileRequest) -> str | None:
    from gpudoctor import kb

    text = request.target.driver_version
    return text.strip() if isinstance(text, str) and kb.parse_driver_version(text) else None


# --------------------------------------------------------------------------- the two kinds of image


def _cuda_dockerfile(request: DockerfileRequest, os_token: str) -> GeneratedFile:
    from gpudoctor import kb

    driver = _driver(request)
    python = python_for_os(request, os_token)
    build = choose_build(request, driver, python.version, os_token)
    base = choose_base_image(request, build, driver, os_token)
    if driver:
        max_cuda = kb.max_cuda_for_driver(driver)
        driver_why = (
            f"from {request.target.source}; it runs CUDA {max_cuda} and older natively"
            if max_cuda
            else f"from {request.target.source}"
        )
    else:
        driver_why = "unknown: the host needs a driver that runs the base image's CUDA"
    driver_choice = Choice("host driver", driver or "unknown", driver_why)
    os_why = "asked with --os" if request.os else "the newest Ubuntu LTS with a published base image that fits"
    os_choice = Choice("base OS", os_token, os_why)
    check_preflight_python(request, python.version, f"{os_token}'s Python")
    preflight = command_choice(
        request,
        "gpudoctor check --require-gpu --format text",
        "a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)",
    )
    choices = (driver_choice, os_choice, base, build.choice, python.choice, source_choice(request), preflight)
    fields = _common_fields(request, build, choices, preflight.chosen, base.chosen)
    fields["preflight_block"] = preflight_block(request, python.version)
    fields["apt_steps"] = apt_steps(request, python)
    fields["python_bin"] = python.binary
    text = string.Template(load_template("Dockerfile.cuda.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=choices, kind="dockerfile")


def _cpu_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    python = request.python or CPU_DEFAULT_PYTHON
    if python not in CPU_PYTHONS:
        raise GenerationRefused(
            f"Python {said(python)} has no python:X.Y-slim-bookworm image gpudoctor knows ({', '.join(CPU_PYTHONS)})",
            f"--cpu --python {CPU_DEFAULT_PYTHON}",
        )
    build = choose_build(request, None, python, None)
    image = f"python:{python}-slim-bookworm"
    base = Choice(
        "base image",
        image,
        "--cpu: the Docker official Python image on Debian 12, no CUDA; "
        + ("Python asked with --python" if request.python else "its default Python"),
    )
    python_choice = Choice("python", f"{python} (the image's own)", "the python image's interpreter, in a venv")
    check_preflight_python(request, python, "the image's Python")
    preflight = command_choice(
        request, "gpudoctor check --format text", "reports what the container sees (no GPU is expected in a CPU image)"
    )
    choices = (base, build.choice, python_choice, source_choice(request), preflight)
    fields = _common_fields(request, build, choices, preflight.chosen, image)
    fields["preflight_block"] = preflight_block(request, python)
    text = string.Template(load_template("Dockerfile.cpu.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=choices, kind="dockerfile")


def _common_fields(
    request: DockerfileRequest, build: Build, choices: tuple[Choice, ...], command: str, image: str
) -> dict[str, str]:
    return {"header": _header(request, choices), **build_fields(request, build, command, image)}


# --------------------------------------------------------------------------- header


def _regenerate_command(request: DockerfileRequest) -> str:
    words = ["gpudoctor", "dockerfile"]
    source = request.target.source or ""
    if not request.cpu:
        if source.startswith("snapshot "):
            words += ["--from", source[len("snapshot ") :]]
        if request.target.driver_version and _driver(request):
            words += ["--for-driver", _driver(request) or ""]
    framework = request.framework + (f"=={request.framework_version}" if request.framework_version else "")
    words += ["--framework", framework]
    if request.cpu:
        words.append("--cpu")
    else:
        words += ["--flavor", request.flavor]
        if request.os:
            words += ["--os", request.os]
    words += tail_words(request)
    return " ".join(shlex.quote(word) for word in words)


def _kb_date(framework: str) -> str:
    from gpudoctor import kb

    info = kb.kb_info()
    stems = ["driver_cuda", {"torch": "pytorch", "tensorflow": "tensorflow", "jax": "python_gpu_packages"}[framework]]
    stems += sorted(stem for stem in info if "docker" in stem)
    dates = {stem: str(info[stem].get("as_of")) for stem in stems if stem in info and info[stem].get("as_of")}
    if len(set(dates.values())) == 1:
        return f"as of {next(iter(dates.values()))}"
    return ", ".join(f"{stem} as of {date}" for stem, date in dates.items()) or "date unknown"


def _header(request: DockerfileRequest, choices: tuple[Choice, ...]) -> str:
    from gpudoctor import __version__

    gpu = "" if request.cpu else " --gpus all"
    what = f"{request.framework} (CPU only)" if request.cpu else f"{request.framework} on NVIDIA GPUs"
    lines = [
        f"# A {what} image, written by gpudoctor {__version__} from its knowledge base "
        f"({_kb_date(request.framework)}).",
        f"# Regenerate: {_regenerate_command(request)}",  # one line, to copy whole
        f"# Build: docker build -t my-image .    Run: docker run --rm{gpu} my-image",
        "#",
        "# What was chosen and why:",
    ]
    lines += choice_lines(request, choices)
    # Every value was checked at the boundary (inputs.safe_request); no line of the header can end early anyway.
    return "\n".join(comment_safe(line.rstrip(), 1000) for line in lines)
