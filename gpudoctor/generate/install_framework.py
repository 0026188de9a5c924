"""What the install script's venv and toolkit steps install: the framework build (torch, TensorFlow, JAX) for the
driver, GPUs and Python, with the driver floor it brings, and the CUDA toolkit asked for; or the refusal."""

from __future__ import annotations

import re

from gpudoctor.generate.model import GenerationRefused, InstallScriptRequest
from gpudoctor.kb.versions import major, major_minor, version_key

_IMPORTS = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


class FrameworkBuild:
    """The framework build the venv gets, and the driver it needs."""

    def __init__(
        self,
        label: str,
        requirement: str,
        index_url: str,
        import_name: str,
        floor: str | None,
        cuda_major: int | None,
        why: str,
    ):
        self.label, self.requirement, self.index_url, self.import_name = label, requirement, index_url, import_name
        self.floor, self.cuda_major, self.why = floor, cuda_major, why


def choose_framework(request: InstallScriptRequest, python: str, os_name: str) -> FrameworkBuild | None:
    from gpudoctor import kb

    name = request.framework
    if name is None:
        return None
    if name not in _IMPORTS:
        raise GenerationRefused(f"unknown framework {name!r}: choose torch, tensorflow or jax", nearest="torch")
    driver = request.target.driver_version
    ccs = request.target.compute_capabilities
    if name == "torch":
        choice = kb.choose_torch_wheel(
            driver_version=driver,
            compute_capabilities=ccs,
            python_version=python,
            os=os_name,
            torch_version=request.framework_version,
        )
        if choice.status != "ok" or not choice.requirement:
            raise GenerationRefused(
                "no PyTorch build fits: " + "; ".join(choice.reasons[:2]),
                nearest=f"--for-driver {choice.upgrade_driver_to}" if choice.upgrade_driver_to else None,
            )
        if request.framework_version and choice.torch != _release(request.framework_version):
            raise GenerationRefused(
                f"torch {request.framework_version} has no build that fits this machine",
                nearest=f"--framework torch=={choice.torch}",
            )
        variant = kb.torch_variant(choice.torch, choice.variant)
        cuda = variant.cuda if variant else None
        return FrameworkBuild(
            f"torch {choice.torch} {choice.variant}",
            choice.requirement,
            choice.index_url or "",
            "torch",
            kb.wheel_driver_floor(cuda, os_name),
            major(cuda),
            "; ".join(choice.reasons[:3]),
        )
    if name == "tensorflow":
        tf = kb.choose_tensorflow(
            driver_version=driver, python_version=python, os=os_name, tf_version=request.framework_version
        )
        if tf.status != "ok" or not tf.requirement or not tf.version:
            raise GenerationRefused(
                "no TensorFlow build fits: " + "; ".join(tf.reasons[:2]),
                nearest=f"--for-driver {tf.upgrade_driver_to}" if tf.upgrade_driver_to else None,
            )
        if request.framework_version and not tf.version.startswith(_release(request.framework_version)):
            raise GenerationRefused(
                f"TensorFlow {request.framework_version} does not fit this machine",
                nearest=f"--framework tensorflow=={tf.version}",
            )
        release = kb.tf_release(tf.version)
        floor = (
            release.linux_driver_mvc_floor
            if release and os_name == "linux"
            else (kb.wheel_driver_floor(release.cuda, os_name) if release else None)
        )
        return FrameworkBuild(
            f"TensorFlow {tf.version}",
            tf.requirement,
            "",
            "tensorflow",
            floor,
            major(release.cuda if release else None),
            "; ".join(tf.reasons[:3]),
        )
    # JAX: the pinned release and extra for the driver that will run it; with no driver known, the one the newest
    # floor gives (the driver step installs at least that).
    from gpudoctor.kb.frameworks import jax_extras
    from gpudoctor.kb.jax_releases import JaxChoice, choose_jax, jax_releases

    def choose(driver_version: str | None) -> JaxChoice:
        return choose_jax(
            driver_version=driver_version,
            python_version=python,
            os=os_name,
            compute_capabilities=ccs,
            jax_version=request.framework_version,
        )

    assumed = driver or newest_floor()
    jax = choose(assumed)
    if jax.upgrade_driver_to and request.driver and os_name == "linux":
        # The loaded driver is too old for any JAX CUDA build, but the driver step upgrades it to this build's floor.
        assumed = newest_floor()
        jax = choose(assumed)
    if jax.status != "ok" or not jax.requirement or not jax.extra:
        newest = choose_jax(driver_version=assumed, python_version=python, os=os_name, compute_capabilities=ccs)
        if request.framework_version and newest.version:
            nearest = f"--framework jax=={newest.version}"
        elif jax.upgrade_driver_to:
            nearest = f"--for-driver {jax.upgrade_driver_to}"
        elif jax.python_note:  # no release has wheels for this Python: the oldest that gets the newest JAX
            nearest = f"--python {jax_releases()[0].python_min}"
        else:
            nearest = "--framework torch"
        raise GenerationRefused("no JAX build fits: " + "; ".join(jax.reasons[:2]), nearest=nearest)
    row = next((e for e in jax_extras() if e.extra == jax.extra), None)
    why = "; ".join(jax.reasons[:2])
    if jax.python_note:  # the distro's Python holds JAX back: say so, and how to get the newer release
        why += f". {jax.python_note} (--python X.Y makes the venv with another Python)"
    return FrameworkBuild(
        f"JAX {jax.version} ({jax.extra})",
        jax.requirement,
        "",
        "jax",
        row.linux_driver_min if row else None,
        row.cuda_major if row else None,
        why,
    )


def _release(version: str) -> str:
    """The release a ``--framework X==VERSION`` names, to two parts ("2.13.0" -> "2.13")."""
    return major_minor(version) or version


def newest_floor() -> str:
    """The highest minor-version-compatibility floor the knowledge base lists (CUDA 13.x: 580.65.06)."""
    from gpudoctor.kb.torch_wheels import wheel_driver_floor

    floors = [f for f in (wheel_driver_floor(f"{cuda}.0") for cuda in range(11, 20)) if f]
    return max(floors, key=version_key)


def choose_toolkit(request: InstallScriptRequest) -> tuple[str, str | None, str] | None:
    """(the CUDA toolkit release, the driver it needs, why) for ``--cuda-toolkit``: the release asked for, or, when
    it cannot build for every GPU present (CUDA 13 for a Pascal GPU), the newest that can, saying so."""
    from gpudoctor import kb
    from gpudoctor.kb.driver_branches import toolkit_for_gpus

    if not request.cuda_toolkit:
        return None
    match = re.fullmatch(r"\s*(\d{1,2})\.(\d{1,2})(?:\.\d+)?\s*", request.cuda_toolkit)
    if not match:
        raise GenerationRefused(f"CUDA toolkit {request.cuda_toolkit[:20]!r} must look like 12.8")
    asked = f"{int(match.group(1))}.{int(match.group(2))}"
    version, changed = toolkit_for_gpus(asked, request.target.compute_capabilities)
    if version is None:
        raise GenerationRefused(f"no CUDA toolkit fits these GPUs: {changed}", nearest="--cuda-toolkit 12.8")
    need = kb.min_driver_for_cuda(version, "linux")
    if need is None and kb.wheel_driver_floor(version) is None:
        raise GenerationRefused(f"CUDA {version} is not in the knowledge base", nearest="--cuda-toolkit 12.8")
    need = need or kb.wheel_driver_floor(version)
    why = changed or "asked for"
    return version, need, f"{why}; the driver needs >= {need}" if need else why


def framework_words(request: InstallScriptRequest) -> list[str]:
    """The regenerate command's framework, Python and venv options (every install script ends its command so)."""
    import shlex

    framework = request.framework or "none"
    version = f"=={request.framework_version}" if request.framework_version and request.framework else ""
    words = [f"--framework {framework}{version}"]
    if request.python:
        words.append(f"--python {request.python}")
    if request.venv != "~/.venvs/gpu":
        words.append(f"--venv {shlex.quote(request.venv)}")
    return words
