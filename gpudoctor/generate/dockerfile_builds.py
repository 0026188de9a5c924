"""The framework build a generated Dockerfile installs: the knowledge base's choice of torch, TensorFlow or JAX for
the driver, GPUs and Python, how pip installs it, and the refusal (with the nearest request that works) when none
fits."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudoctor.generate.dockerfile_python import CPU_PYTHONS, python_between, python_in_range
from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused
from gpudoctor.kb.tensorflow_builds import TfRelease


@dataclass(frozen=True)
class Build:
    """The framework build the knowledge base chose and how pip installs it."""

    framework: str
    pip_args: str  # what follows `pip install`: the quoted requirement and its index
    constraint: str | None  # the pinned requirement without extras, to hold --requirements to it
    extra_index: str | None  # the framework's index, for --requirements (torchvision & co. of the same build)
    cuda: str | None  # the CUDA major.minor its GPU libraries were built for; None: CPU build
    pip_libs: bool  # the wheels bring the CUDA/cuDNN libraries themselves
    choice: Choice


def _torch_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> Build:
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
        parsed = [(version, f) for f in floors if f and (version := kb.parse_driver_version(f))]
        floor = min(parsed)[1] if parsed else None
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
        return Build(
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
    return Build(
        "torch",
        f"'{requirement}' --index-url {wheel.index_url}",
        requirement,
        wheel.index_url,
        cuda,
        True,
        Choice("torch", f"{requirement} {wheel.variant} from {wheel.index_url}", why),
    )


def _tensorflow_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> Build:
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
        return Build("tensorflow", f"'{pin}'", pin, None, None, False, Choice("tensorflow", pin, why))
    why = "; ".join(choice.reasons)
    if choice.python_note:
        why += f". {choice.python_note}"
    return Build(
        "tensorflow",
        f"'{choice.requirement}'",
        pin,
        None,
        release.cuda,
        release.and_cuda,
        Choice("tensorflow", choice.requirement, why),
    )


def _tf_nearest(known: tuple[TfRelease, ...], driver: str | None, python: str) -> str:
    from gpudoctor import kb

    choice = kb.choose_tensorflow(driver_version=driver, python_version=python)
    release = kb.tf_release(choice.version) if choice.version else None
    return (release or known[0]).major_minor


def _jax_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> Build:
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
    if request.cpu or driver is None:  # driver is known here unless --cpu (checked above)
        return Build(
            "jax", f"'{choice.requirement}'", constraint, None, None, False, Choice("jax", choice.requirement, why)
        )
    row = next(e for e in jax_extras() if e.extra == choice.extra)
    cuda = _newest_cuda_of_major(row.cuda_major, driver)
    return Build("jax", f"'{choice.requirement}'", constraint, None, cuda, True, Choice("jax", choice.requirement, why))


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
                fit = next((v for v in reversed(CPU_PYTHONS) if python_between(v, low, high)), None)
            else:
                fit = python_in_range(os_token, low, high) if os_token else high
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
            fit = next((v for v in reversed(CPU_PYTHONS) if python_between(v, low, high)), None)
        else:
            fit = python_in_range(os_token, low, high) if os_token else None
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


def choose_build(request: DockerfileRequest, driver: str | None, python: str, os_token: str | None) -> Build:
    if request.framework == "torch":
        return _torch_build(request, driver, python, os_token)
    if request.framework == "tensorflow":
        return _tensorflow_build(request, driver, python, os_token)
    return _jax_build(request, driver, python, os_token)
