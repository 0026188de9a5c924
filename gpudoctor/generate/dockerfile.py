"""``gpudoctor dockerfile``: a Dockerfile whose CUDA base image and framework build fit a host driver.

The request names the framework (torch, tensorflow, jax; optionally a version), the Python, the flavor
(runtime or devel), the base OS and the machine (driver, GPUs).  The knowledge base picks the framework
build (``choose_torch_wheel``, ``choose_tensorflow``, ``jax_releases.choose_jax``) and the base image
(``kb.docker_images.choose_cuda_image``: a tag NVIDIA publishes); this module decides how they fit together
and fills a template from the top-level ``dockerfiles/`` folder (package ``gpudoctor_dockerfiles``).

Decisions, each written into the file's header:

- The pip wheels of all three frameworks bring their own CUDA runtime libraries (torch's cuXYZ wheels,
  ``tensorflow[and-cuda]``, ``jax[cudaNN]``), so a runtime image only needs the ``base`` flavor (cudart and
  the NVIDIA environment); a devel image brings ``nvcc`` for building extensions.  TensorFlow before 2.14 has
  no ``[and-cuda]``: it gets a cuDNN ``runtime``/``devel`` image of its tested CUDA instead.
- The base image's CUDA is the build's own CUDA, or the newest the driver runs natively when that is older
  (the image's ``NVIDIA_REQUIRE_CUDA`` makes the container toolkit refuse a newer CUDA on most GPUs; the
  wheel itself still runs through minor-version compatibility).  So ``nvcc`` in a devel image matches the
  wheel's CUDA major, which is what ``torch.utils.cpp_extension`` insists on.
- Python: the base OS's own (ubuntu24.04: 3.12, ubuntu22.04: 3.10), or another from the deadsnakes PPA,
  which builds the Pythons an Ubuntu LTS does not ship; always in a venv at /opt/venv (PEP 668).
- ``--cpu``: ``python:X.Y-slim-bookworm``, torch from the CPU index, plain ``tensorflow`` (its Linux wheel
  runs on the CPU when no CUDA libraries are installed), plain ``jax``.
- The default command is gpudoctor's preflight (``gpudoctor check --require-gpu``): a container started
  without ``--gpus`` or on a driver too old says so before a long job starts.

Same request, same bytes: nothing in the output depends on the clock, only on the request, the knowledge
base and gpudoctor's version.
"""

from __future__ import annotations

import re
import shlex
import string
import textwrap
from dataclasses import dataclass

from gpudoctor.generate.model import Choice, DockerfileRequest, GeneratedFile, GenerationRefused

__all__ = ["CPU_PYTHONS", "DEADSNAKES_PYTHONS", "OS_PYTHON", "generate_dockerfile", "load_template"]

# The Python each supported base OS ships as python3 (packages.ubuntu.com: jammy python3 3.10.6-1~22.04, noble
# python3 3.12.3-0ubuntu1).
OS_PYTHON = {"ubuntu24.04": "3.12", "ubuntu22.04": "3.10"}
# Tried in this order when no --os is asked: the newest LTS first.
OS_ORDER = ("ubuntu24.04", "ubuntu22.04")
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
}
# python:X.Y-slim-bookworm images of the Docker official "python" image for the --cpu base. 3.9 reached end of life
# and docker-library/python removed it (PR #1094, commit 59e4abf, "Remove all traces of the now-EOL 3.9 release
# series", 2025-10-31); 3.14 came with the GA release (PR #1083, 2025-10-07).
CPU_PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
CPU_DEFAULT_PYTHON = "3.12"
FRAMEWORKS = ("torch", "tensorflow", "jax")
FLAVORS = ("runtime", "devel")
_REQUIREMENTS_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}")
_VERSION_RE = re.compile(r"\d{1,3}(\.\d{1,4}){0,2}")
_WRAP = 116


def load_template(name: str) -> str:
    """A template of the ``gpudoctor_dockerfiles`` package; from the source tree when it is not installed."""
    try:
        from importlib import resources

        return resources.files("gpudoctor_dockerfiles").joinpath(name).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        import pathlib

        path = pathlib.Path(__file__).resolve().parents[2] / "dockerfiles" / name
        return path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class _Build:
    """The framework build the knowledge base chose and how pip installs it."""

    framework: str
    pip_args: str  # what follows `pip install`: the quoted requirement and its index
    constraint: str | None  # the pinned requirement without extras, to hold --requirements to it
    extra_index: str | None  # the framework's index, for --requirements (torchvision & co. of the same build)
    cuda: str | None  # the CUDA major.minor its GPU libraries were built for; None: CPU build
    pip_libs: bool  # the wheels bring the CUDA/cuDNN libraries themselves
    choice: Choice


@dataclass(frozen=True)
class _Python:
    version: str
    binary: str  # "python3" or "python3.11"
    deadsnakes: bool
    choice: Choice


# --------------------------------------------------------------------------- public entry


def generate_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    """The Dockerfile for ``request``, or GenerationRefused with the nearest request that works."""
    _check_request(request)
    if request.cpu:
        return _cpu_dockerfile(request)
    if request.os is not None:
        return _cuda_dockerfile(request, _checked_os(request.os))
    refusals: list[GenerationRefused] = []
    for os_token in OS_ORDER:
        try:
            return _cuda_dockerfile(request, os_token)
        except GenerationRefused as refusal:
            refusals.append(refusal)

    # Every OS was tried: a refusal pointing at another OS says nothing new, and "--cpu" gives up the GPU, so
    # the first refusal that names a change of framework, Python or driver is the most useful one.
    def rank(refusal: GenerationRefused) -> int:
        nearest = refusal.nearest or ""
        return 2 if nearest.startswith("--os ") else 1 if nearest.startswith("--cpu") else 0

    raise min(refusals, key=rank)


def _check_request(request: DockerfileRequest) -> None:
    if request.framework not in FRAMEWORKS:
        raise GenerationRefused(
            f"unknown framework {_said(request.framework)}: choose torch, tensorflow or jax", "--framework torch"
        )
    if request.flavor not in FLAVORS:
        raise GenerationRefused(f"unknown flavor {_said(request.flavor)}: choose runtime or devel", "--flavor runtime")
    if request.framework_version is not None and not _VERSION_RE.fullmatch(str(request.framework_version)):
        raise GenerationRefused(
            f"{_said(request.framework_version)} is not a version like 2.7 or 2.7.1", f"--framework {request.framework}"
        )
    path = request.requirements
    if path is not None and (not _REQUIREMENTS_RE.fullmatch(path) or ".." in path.split("/")):
        raise GenerationRefused(
            f"--requirements {_said(path)} must be a plain relative path inside the build context "
            "(letters, digits, . _ - /; no '..')",
            "--requirements requirements.txt",
        )


def _said(value: object) -> str:
    """A value a person typed, quoted and cut short for a one-line message."""
    return repr(str(value)[:40])


def _checked_os(os_token: str) -> str:
    token = str(os_token).strip().lower()
    if token in OS_PYTHON:
        return token
    raise GenerationRefused(
        f"base OS {_said(os_token)} is not one gpudoctor writes Dockerfiles for (its steps use apt and "
        f"Ubuntu's packages): {', '.join(OS_ORDER)}",
        f"--os {OS_ORDER[0]}",
    )


def _driver(request: DockerfileRequest) -> str | None:
    from gpudoctor import kb

    text = request.target.driver_version
    return text.strip() if isinstance(text, str) and kb.parse_driver_version(text) else None


# --------------------------------------------------------------------------- Python


def _python_for_os(request: DockerfileRequest, os_token: str) -> _Python:
    own = OS_PYTHON[os_token]
    asked = request.python
    if asked is None or asked == own:
        why = "the base OS's own python3" + (" (asked with --python)" if asked else "")
        return _Python(own, "python3", False, Choice("python", f"{own} ({os_token}'s python3)", why))
    if asked in DEADSNAKES_PYTHONS[os_token]:
        why = (
            f"{os_token} ships Python {own}; {asked} comes from the deadsnakes PPA (ppa:deadsnakes/ppa), "
            "which builds the Pythons an Ubuntu LTS does not ship"
        )
        return _Python(asked, f"python{asked}", True, Choice("python", f"{asked} (deadsnakes PPA)", why))
    nearest = _nearest_for_python(asked)
    raise GenerationRefused(
        f"Python {_said(asked)} is neither {os_token}'s own ({own}) nor one the deadsnakes PPA builds for it", nearest
    )


def _nearest_for_python(asked: str) -> str:
    for os_token in OS_ORDER:
        if OS_PYTHON[os_token] == asked:
            return f"--os {os_token} --python {asked}"
    for os_token in OS_ORDER:
        if asked in DEADSNAKES_PYTHONS[os_token]:
            return f"--os {os_token} --python {asked}"
    if asked in CPU_PYTHONS:
        return f"--cpu --python {asked}"
    return f"--python {OS_PYTHON[OS_ORDER[0]]}"


def _python_in_range(os_token: str, low: str | None, high: str | None) -> str | None:
    """The Python this OS can give (its own first) inside [low, high], for a refusal's nearest request."""
    from gpudoctor import kb

    def key(version: str) -> tuple[int, int]:
        return kb.parse_python_version(version) or (0, 0)

    candidates = [OS_PYTHON[os_token], *reversed(DEADSNAKES_PYTHONS[os_token])]
    for version in candidates:
        if (low is None or key(version) >= key(low)) and (high is None or key(version) <= key(high)):
            return version
    return None


# --------------------------------------------------------------------------- framework builds


def _torch_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> _Build:
    from gpudoctor import kb
    from gpudoctor.kb.torch_wheels import INDEX_ROOT

    asked = request.framework_version
    own = kb.torch_release(asked) if asked else None
    if asked and own is None:
        known = kb.torch_releases()
        raise GenerationRefused(
            f"torch {asked} is not in the knowledge base (it knows {known[-1].torch} to {known[0].torch})",
            f"--framework torch=={known[0].torch}",
        )
    ccs = () if request.cpu else request.target.compute_capabilities
    wheel = kb.choose_torch_wheel(
        driver_version=None if request.cpu else driver,
        compute_capabilities=ccs,
        python_version=python,
        torch_version=asked,
    )
    if wheel.status != "ok" or wheel.torch is None or wheel.index_url is None or wheel.requirement is None:
        raise GenerationRefused(
            "no torch build fits: " + "; ".join(wheel.reasons),
            _nearest_after_no_build(wheel.upgrade_driver_to, wheel.python_note, request, os_token),
        )
    if own is not None and wheel.torch != own.torch:
        floors = [kb.wheel_driver_floor(v.cuda) for v in own.variants if v.cuda]
        floor = min((f for f in floors if f and kb.parse_driver_version(f)), key=kb.parse_driver_version, default=None)
        raise _version_refused(
            request,
            own.torch,
            wheel.torch,
            own.supports_python(python) is False,
            own.python_min,
            own.python_max,
            python,
            os_token,
            driver,
            floor,
        )
    requirement = wheel.requirement
    if request.cpu:
        index = f"{INDEX_ROOT}/cpu"
        chosen = f"{requirement} from {index}"
        why = (
            f"torch {wheel.torch} is the newest release for Python {python}; its CPU build comes from "
            "PyTorch's CPU index (no CUDA libraries)"
        )
        if wheel.python_note:
            why += f". {wheel.python_note}"
        return _Build(
            "torch",
            f"'{requirement}' --index-url {index}",
            requirement,
            index,
            None,
            False,
            Choice("torch", chosen, why),
        )
    variant = kb.torch_variant(wheel.torch, wheel.variant)
    cuda = variant.cuda if variant else None
    why = "; ".join(wheel.reasons)
    if wheel.python_note:
        why += f". {wheel.python_note}"
    return _Build(
        "torch",
        f"'{requirement}' --index-url {wheel.index_url}",
        requirement,
        wheel.index_url,
        cuda,
        True,
        Choice("torch", f"{requirement} {wheel.variant} from {wheel.index_url}", why),
    )


def _tensorflow_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> _Build:
    from gpudoctor import kb

    asked = request.framework_version
    own = kb.tf_release(asked) if asked else None
    if asked and own is None:
        known = kb.tf_releases()
        raise GenerationRefused(
            f"TensorFlow {asked} has no GPU build gpudoctor knows (it knows {known[-1].major_minor} to "
            f"{known[0].major_minor}, built for CUDA {known[-1].cuda} to {known[0].cuda})",
            f"--framework tensorflow=={_tf_nearest(known, driver, python)}",
        )
    choice = kb.choose_tensorflow(
        driver_version=None if request.cpu else driver, python_version=python, tf_version=asked
    )
    if choice.status != "ok" or choice.version is None or choice.requirement is None:
        raise GenerationRefused(
            "no TensorFlow build fits: " + "; ".join(choice.reasons),
            _nearest_after_no_build(choice.upgrade_driver_to, choice.python_note, request, os_token),
        )
    release = kb.tf_release(choice.version)
    if release is None:  # the data changed under us; treat as no build rather than guess
        raise GenerationRefused(f"TensorFlow {choice.version} is missing from the knowledge base", "--cpu")
    if own is not None and release.major_minor != own.major_minor:
        raise _version_refused(
            request,
            own.major_minor,
            release.major_minor,
            own.supports_python(python) is False,
            own.python_min,
            own.python_max,
            python,
            os_token,
            driver,
            own.linux_driver_mvc_floor,
        )
    pin = f"tensorflow=={release.version}"
    if request.cpu:
        why = (
            f"TensorFlow {release.version} is the newest release for Python {python}; the plain tensorflow "
            "wheel runs on the CPU when no CUDA libraries are installed (the [and-cuda] extra is what adds "
            "them)"
        )
        return _Build("tensorflow", f"'{pin}'", pin, None, None, False, Choice("tensorflow", pin, why))
    why = "; ".join(choice.reasons)
    if choice.python_note:
        why += f". {choice.python_note}"
    return _Build(
        "tensorflow",
        f"'{choice.requirement}'",
        pin,
        None,
        release.cuda,
        release.and_cuda,
        Choice("tensorflow", choice.requirement, why),
    )


def _tf_nearest(known: tuple, driver: str | None, python: str) -> str:
    from gpudoctor import kb

    choice = kb.choose_tensorflow(driver_version=driver, python_version=python)
    release = kb.tf_release(choice.version) if choice.version else None
    return (release or known[0]).major_minor


def _jax_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> _Build:
    from gpudoctor.kb.frameworks import jax_extras
    from gpudoctor.kb.jax_releases import choose_jax, jax_release, jax_releases

    asked = request.framework_version
    own = jax_release(asked) if asked else None
    if asked and own is None:
        known = jax_releases()
        newest = choose_jax(
            driver_version=driver,
            python_version=python,
            cpu=request.cpu,
            compute_capabilities=request.target.compute_capabilities,
        )
        raise GenerationRefused(
            f"JAX {asked} is not a release gpudoctor knows (it knows {known[-1].version} to {known[0].version}, "
            "the CUDA-plugin releases)",
            f"--framework jax=={newest.version or known[0].version}",
        )
    if not request.cpu and driver is None:
        raise GenerationRefused(
            "jax[cuda12] or jax[cuda13] depends on the host driver, and none is known",
            f"--for-driver {jax_extras()[0].linux_driver_min}" if jax_extras() else "--cpu",
        )
    choice = choose_jax(
        driver_version=driver,
        python_version=python,
        cpu=request.cpu,
        jax_version=asked,
        compute_capabilities=() if request.cpu else request.target.compute_capabilities,
    )
    if choice.status != "ok" or choice.version is None or choice.requirement is None:
        if own is not None:
            fallback = choose_jax(
                driver_version=driver,
                python_version=python,
                cpu=request.cpu,
                compute_capabilities=() if request.cpu else request.target.compute_capabilities,
            )
            floor = choice.upgrade_driver_to
            if fallback.version is not None or own.supports_python(python) is False:
                raise _version_refused(
                    request,
                    own.version,
                    fallback.version or own.version,
                    own.supports_python(python) is False,
                    own.python_min,
                    own.python_max,
                    python,
                    os_token,
                    driver,
                    floor,
                )
        if not request.cpu and choice.upgrade_driver_to:
            floors = ", ".join(f"jax[{e.extra}] needs {e.linux_driver_min}" for e in jax_extras() if e.linux_driver_min)
            raise GenerationRefused(
                f"no JAX CUDA build runs on driver {driver} with these GPUs ({floors})",
                f"--for-driver {choice.upgrade_driver_to}",
            )
        raise GenerationRefused(
            "no JAX build fits: " + "; ".join(choice.reasons),
            _nearest_after_no_build(None, choice.python_note, request, os_token),
        )
    constraint = f"jax=={choice.version}"
    why = "; ".join(choice.reasons) + (f". {choice.python_note}" if choice.python_note else "")
    if request.cpu:
        return _Build(
            "jax", f"'{choice.requirement}'", constraint, None, None, False, Choice("jax", choice.requirement, why)
        )
    row = next(e for e in jax_extras() if e.extra == choice.extra)
    cuda = _newest_cuda_of_major(row.cuda_major, driver)
    return _Build(
        "jax", f"'{choice.requirement}'", constraint, None, cuda, True, Choice("jax", choice.requirement, why)
    )


def _newest_cuda_of_major(major: int, driver: str) -> str | None:
    """The newest CUDA major.x this driver runs natively, else the newest major.x with a known driver minimum."""
    from gpudoctor import kb

    best = kb.max_cuda_for_driver(driver)
    parsed = kb.parse_cuda_version(best) if best else None
    if parsed is not None and parsed[0] == major:
        return f"{parsed[0]}.{parsed[1]}"
    for minor in range(20, -1, -1):
        if kb.min_driver_for_cuda(f"{major}.{minor}"):
            return f"{major}.{minor}"
    return None


def _nearest_after_no_build(
    upgrade: str | None, python_note: str | None, request: DockerfileRequest, os_token: str | None = None
) -> str:
    if upgrade and not request.cpu:
        return f"--for-driver {upgrade}"
    if python_note:
        found = re.search(r"needs Python (\d\.\d+)-(\d\.\d+)|range \((\d\.\d+)-(\d\.\d+)\)", python_note)
        if found:
            low, high = found.group(1) or found.group(3), found.group(2) or found.group(4)
            # The newest Python in range that the base image can give: a --python the next run accepts.
            if request.cpu:
                fit = next((v for v in reversed(CPU_PYTHONS) if _between(v, low, high)), None)
            else:
                fit = _python_in_range(os_token, low, high) if os_token else high
            if fit:
                return f"--python {fit}"
    return "--cpu" if not request.cpu else "--cpu --framework torch"


def _version_refused(
    request: DockerfileRequest,
    asked: str,
    chosen: str,
    python_blocks: bool,
    low: str | None,
    high: str | None,
    python: str,
    os_token: str | None,
    driver: str | None,
    driver_floor: str | None,
) -> GenerationRefused:
    """The asked release does not fit: say why (Python, driver, else the GPUs), and name what does."""
    from gpudoctor import kb

    name = {"torch": "torch", "tensorflow": "TensorFlow", "jax": "JAX"}[request.framework]
    flag = request.framework
    if python_blocks:
        if request.cpu:
            fit = next((v for v in reversed(CPU_PYTHONS) if _between(v, low, high)), None)
        else:
            fit = _python_in_range(os_token, low, high) if os_token else None
        if fit:
            return GenerationRefused(
                f"{name} {asked} needs Python {low}-{high}, not {python}", f"--framework {flag}=={asked} --python {fit}"
            )
    floor = kb.parse_driver_version(driver_floor) if driver_floor else None
    current = kb.parse_driver_version(driver) if driver else None
    if floor is not None and current is not None and current < floor:
        return GenerationRefused(
            f"{name} {asked} needs driver {driver_floor} or newer, and this one is {driver}",
            f"--framework {flag}=={chosen}",
        )
    return GenerationRefused(
        f"{name} {asked} has no build for this machine's GPUs or Python {python}", f"--framework {flag}=={chosen}"
    )


def _between(version: str, low: str | None, high: str | None) -> bool:
    from gpudoctor import kb

    value = kb.parse_python_version(version)
    return (
        value is not None
        and (low is None or value >= (kb.parse_python_version(low) or (0, 0)))
        and (high is None or value <= (kb.parse_python_version(high) or (99, 99)))
    )


def _build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> _Build:
    if request.framework == "torch":
        return _torch_build(request, driver, python, os_token)
    if request.framework == "tensorflow":
        return _tensorflow_build(request, driver, python, os_token)
    return _jax_build(request, driver, python, os_token)


# --------------------------------------------------------------------------- base image


def _base_image(request: DockerfileRequest, build: _Build, driver: str | None, os_token: str) -> Choice:
    from gpudoctor import kb
    from gpudoctor.kb.docker_images import is_published

    if build.cuda is None or _cuda_key(build.cuda) == (0, 0):
        raise GenerationRefused(f"the {build.framework} build has no CUDA version in the knowledge base", "--cpu")
    build_cuda = "%d.%d" % _cuda_key(build.cuda)
    driver_max = kb.max_cuda_for_driver(driver) if driver else None
    if driver and driver_max is None:
        raise GenerationRefused(f"driver {driver} is older than every CUDA release the knowledge base knows", "--cpu")
    top = build_cuda
    if build.pip_libs and driver_max and _cuda_key(driver_max) < _cuda_key(build_cuda):
        # The container toolkit checks the image's NVIDIA_REQUIRE_CUDA against the driver: an image newer than
        # the driver's CUDA does not start on most GPUs, while the wheel's own libraries still run (MVC).
        top = driver_max
        if _cuda_key(top)[0] != _cuda_key(build_cuda)[0]:
            raise GenerationRefused(
                f"driver {driver} runs CUDA {driver_max} at most, another major than the "
                f"{build.framework} build's CUDA {build_cuda}",
                "--cpu",
            )
    elif driver_max and _cuda_key(driver_max) < _cuda_key(build_cuda):
        need = kb.min_driver_for_cuda(build_cuda)
        raise GenerationRefused(
            f"{build.choice.chosen} needs CUDA {build_cuda} and cuDNN in the image, newer than "
            f"the CUDA {driver_max} driver {driver} runs",
            f"--for-driver {need}" if need else "--cpu",
        )
    if build.pip_libs:
        flavor, cudnn = ("devel" if request.flavor == "devel" else "base"), False
    else:
        flavor, cudnn = request.flavor, True
    image = _published_image(driver, top, flavor, cudnn, os_token, build.pip_libs)
    if image is None:
        label = ("cudnn-" if cudnn else "") + flavor
        span = f"CUDA {top}" if not build.pip_libs or top.endswith(".0") else f"CUDA {_cuda_key(top)[0]}.0-{top}"
        raise GenerationRefused(
            f"no published nvidia/cuda {label} image for {span} on {os_token}"
            + (f" that driver {driver} runs natively" if driver else ""),
            _nearest_image_request(request, driver, top, flavor, cudnn, os_token, build.pip_libs),
        )
    if not is_published(image.tag):  # the kb promises a published tag; never emit one it does not list
        raise GenerationRefused(
            f"nvidia/cuda tag {image.tag} is not one the knowledge base lists as published", "--cpu"
        )
    # The OS is always passed to the kb (this module tries them in turn), so its "as asked" is not ours to say.
    kb_why = image.why.replace(f"; {image.os} as asked", "").rstrip(".")
    why = [kb_why] if kb_why else []
    if build.pip_libs and flavor == "base":
        why.append(
            f"the {build.framework} wheels bring their own CUDA libraries, so the small 'base' flavor "
            "(cudart only) is enough"
        )
    elif build.pip_libs:
        why.append(f"devel brings nvcc {image.cuda} and the CUDA headers for building extensions")
    else:
        why.append("this TensorFlow has no [and-cuda] extra: CUDA and cuDNN come from the image")
    image_cuda = "%d.%d" % _cuda_key(image.cuda)
    if build.pip_libs and image_cuda != build_cuda:
        reason = (
            f"the driver runs CUDA {driver_max} at most (nvidia-container-cli refuses an image newer than that)"
            if top != build_cuda
            else f"no {flavor} image of CUDA {build_cuda} is published here"
        )
        why.append(
            f"the image has CUDA {image_cuda}, not the build's {build_cuda}: {reason}; the wheel's own "
            "libraries run through minor-version compatibility"
        )
        if request.flavor == "devel":
            why.append(
                f"nvcc {image_cuda} has the build's CUDA major, which torch.utils.cpp_extension requires "
                "(it only warns on another minor)"
            )
    return Choice("base image", image.tag, "; ".join(why))


def _published_image(driver: str | None, top: str, flavor: str, cudnn: bool, os_token: str, step_down: bool):
    """The kb's image for CUDA ``top`` (or, when the build brings its own libraries, the newest lower minor of the
    same major that has one) on ``os_token``; None when there is none."""
    from gpudoctor.kb.docker_images import choose_cuda_image

    major, minor = _cuda_key(top)
    for candidate in range(minor, -1 if step_down else minor - 1, -1):
        try:
            return choose_cuda_image(
                driver_version=driver, cuda=f"{major}.{candidate}", flavor=flavor, cudnn=cudnn, os=os_token
            )
        except GenerationRefused:
            continue
    return None


def _nearest_image_request(
    request: DockerfileRequest, driver: str | None, top: str, flavor: str, cudnn: bool, os_token: str, step_down: bool
) -> str:
    """Another base OS that has the image, else the driver whose CUDA has one here, else --cpu."""
    from gpudoctor import kb
    from gpudoctor.kb.docker_images import published_images

    for other in OS_ORDER:
        if other != os_token and _published_image(driver, top, flavor, cudnn, other, step_down) is not None:
            python = f" --python {request.python}" if request.python else ""
            return f"--os {other}{python}"
    major = _cuda_key(top)[0]
    here = sorted(
        {
            _cuda_key(i.cuda)
            for i in published_images()
            if i.os == os_token and i.flavor == flavor and i.cudnn == cudnn and _cuda_key(i.cuda)[0] == major
        }
    )
    needs = [kb.min_driver_for_cuda("%d.%d" % cuda) for cuda in here]
    needs = [need for need in needs if need]
    return f"--for-driver {needs[0]}" if needs and driver else "--cpu"


def _cuda_key(text: str) -> tuple[int, int]:
    from gpudoctor import kb

    parsed = kb.parse_cuda_version(text)
    return (parsed[0], parsed[1]) if parsed else (0, 0)


# --------------------------------------------------------------------------- the two kinds of image


def _cuda_dockerfile(request: DockerfileRequest, os_token: str) -> GeneratedFile:
    from gpudoctor import kb

    driver = _driver(request)
    python = _python_for_os(request, os_token)
    build = _build(request, driver, python.version, os_token)
    base = _base_image(request, build, driver, os_token)
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
    preflight = Choice(
        "default command",
        "gpudoctor check --require-gpu --format text",
        "a preflight: exit 0 only when the container sees a usable GPU (run with --gpus all)",
    )
    choices = (driver_choice, os_choice, base, build.choice, python.choice, preflight)
    fields = _common_fields(request, build, choices, preflight.chosen, base.chosen)
    fields["apt_steps"] = _apt_steps(request, python)
    fields["python_bin"] = python.binary
    text = string.Template(load_template("Dockerfile.cuda.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=choices, kind="dockerfile")


def _cpu_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    python = request.python or CPU_DEFAULT_PYTHON
    if python not in CPU_PYTHONS:
        raise GenerationRefused(
            f"Python {_said(python)} has no python:X.Y-slim-bookworm image gpudoctor knows ({', '.join(CPU_PYTHONS)})",
            f"--cpu --python {CPU_DEFAULT_PYTHON}",
        )
    build = _build(request, None, python, None)
    image = f"python:{python}-slim-bookworm"
    base = Choice(
        "base image",
        image,
        "--cpu: the Docker official Python image on Debian 12, no CUDA; "
        + ("Python asked with --python" if request.python else "its default Python"),
    )
    python_choice = Choice("python", f"{python} (the image's own)", "the python image's interpreter, in a venv")
    preflight = Choice(
        "default command",
        "gpudoctor check --format text",
        "reports what the container sees (no GPU is expected in a CPU image)",
    )
    choices = (base, build.choice, python_choice, preflight)
    fields = _common_fields(request, build, choices, preflight.chosen, image)
    text = string.Template(load_template("Dockerfile.cpu.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=choices, kind="dockerfile")


def _common_fields(
    request: DockerfileRequest, build: _Build, choices: tuple[Choice, ...], preflight: str, image: str
) -> dict[str, str]:
    from gpudoctor import __version__

    constraint = ""
    if build.constraint and request.requirements:
        constraint = f" \\\n    && echo '{build.constraint}' > /opt/venv/constraints.txt"
    return {
        "header": _header(request, choices),
        "base_image": image,
        "framework_install": build.pip_args,
        "gpudoctor_version": __version__,
        "constraints_step": constraint,
        "requirements_block": _requirements_block(request, build),
        "preflight": ", ".join(f'"{word}"' for word in preflight.split()),
    }


def _apt_steps(request: DockerfileRequest, python: _Python) -> str:
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
    if len(install) > _WRAP:
        install = f"    && apt-get install -y --no-install-recommends \\\n        {' '.join(packages)} \\"
    lines.append(install)
    return "".join(line + "\n" for line in lines)


def _requirements_block(request: DockerfileRequest, build: _Build) -> str:
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
    if request.python:
        words += ["--python", request.python]
    if request.requirements:
        words += ["--requirements", request.requirements]
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


def _comment(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width=_WRAP, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    ) or [first.rstrip()]


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
    if request.target.compute_capabilities and not request.cpu:
        names = ", ".join(request.target.gpu_names) or "GPUs"
        lines += _comment(
            f"- GPUs: {names} (compute capability {', '.join(request.target.compute_capabilities)})", "# ", "#     "
        )
    for choice in choices:
        lines += _comment(f"- {choice.what}: {choice.chosen}", "# ", "#     ")
        lines += _comment(choice.why, "#     ", "#     ")
    return "\n".join(line.rstrip() for line in lines)
