"""Which image a container runs: an NGC framework container, ``nvidia/cuda``, an AWS Deep Learning Container, and
(``container_image_kinds``) rocm/pytorch, Google Cloud Deep Learning Containers and Azure ML environments; from the
image's own environment and files.  Tolerant: never raises.

The names read are the ones ``gpudoctor.evidence.markers_image`` records (each was read in a real image).  An NGC
framework image names itself (NVIDIA_PRODUCT_NAME=PyTorch, NVIDIA_PYTORCH_VERSION=23.10) and the driver it was
built with (CUDA_DRIVER_VERSION=535.104.05); a plain nvidia/cuda image has only its CUDA (CUDA_VERSION,
NV_CUDA_CUDART_VERSION) and the toolkit's start condition (NVIDIA_REQUIRE_CUDA).  The forward-compatibility
libraries an image carries are ``/usr/local/cuda/compat/libcuda.so.<driver version>``.
"""

from __future__ import annotations

import re

from gpudoctor.facts.environment import EnvFacts
from gpudoctor.facts.platform_model import ContainerImage

_RELEASE = re.compile(r"\d{2}\.\d{2}(?:\.\d{1,2})?")  # NGC "23.10", "20.07.1"
_DRIVER = re.compile(r"\d{3,4}\.\d{1,4}(?:\.\d{1,4})?")
_CUDA = re.compile(r"(\d{1,2}\.\d{1,2}(?:\.\d{1,4})?)")
_COMPAT_LIB = re.compile(r"libcuda\.so\.(\d{3,4}\.\d{1,4}(?:\.\d{1,4})?)$")
_PRODUCT_VERSION = re.compile(r"NVIDIA_([A-Z0-9_]+)_VERSION")
_MAX_VALUE = 200  # an ENV value longer than this is not a version

# NVIDIA_<PRODUCT>_VERSION -> the framework the image is built around, and the ENV naming its version.
_FRAMEWORK_ENV: dict[str, tuple[str, tuple[str, ...]]] = {
    "PYTORCH": ("torch", ("PYTORCH_BUILD_VERSION", "PYTORCH_VERSION")),
    "TENSORFLOW": ("tensorflow", ("TENSORFLOW_VERSION",)),
}
COMPAT_DIRS = ("/usr/local/cuda/compat", "/usr/local/cuda/compat/lib", "/usr/local/cuda/compat/lib.real")


def _value(env: EnvFacts, name: str) -> str | None:
    value = env.get(name)
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if value and len(value) <= _MAX_VALUE and value.isprintable() else None


def _match(pattern: re.Pattern[str], text: str | None) -> str | None:
    return text if text is not None and pattern.fullmatch(text) else None


def cuda_of(text: str | None) -> str | None:
    """``"12.2.2.009"`` -> ``"12.2.2"``, ``"12.3.2"`` -> itself; junk -> None."""
    if text is None:
        return None
    match = _CUDA.match(text)
    return match.group(1) if match else None


def compat_driver(dirs: dict[str, tuple[str, ...]]) -> str | None:
    """The driver version of the forward-compatibility libcuda the image carries (the newest, if several)."""
    found: list[str] = []
    for folder in COMPAT_DIRS:
        for name in dirs.get(folder, ()):
            match = _COMPAT_LIB.search(name) if isinstance(name, str) else None
            if match:
                found.append(match.group(1))
    if not found:
        return None
    return max(found, key=lambda v: tuple(int(p) for p in v.split(".")))


def _ngc_product(env: EnvFacts) -> tuple[str | None, str | None]:
    """(product word, release) from NVIDIA_PRODUCT_NAME and NVIDIA_<PRODUCT>_VERSION."""
    product = _value(env, "NVIDIA_PRODUCT_NAME")
    for name in sorted(env.variables):
        match = _PRODUCT_VERSION.fullmatch(name)
        release = _match(_RELEASE, _value(env, name)) if match else None
        if match and release:
            return product or match.group(1).title(), release
    return product, None


def _frameworks(env: EnvFacts) -> dict[str, str]:
    found: dict[str, str] = {}
    for framework, names in _FRAMEWORK_ENV.values():
        value = next((v for v in (_value(env, name) for name in names) if v), None)
        if value:
            found[framework] = value
    return found


def identify_image(
    env: EnvFacts, exists: tuple[str, ...], files: dict[str, str], dirs: dict[str, tuple[str, ...]]
) -> ContainerImage | None:
    """The image this container runs, or None when nothing names one."""
    try:
        return _identify(env, exists, files, dirs)
    except (TypeError, ValueError, AttributeError):  # evidence of the wrong shape: say nothing rather than fail
        return None


def _identify(
    env: EnvFacts, exists: tuple[str, ...], files: dict[str, str], dirs: dict[str, tuple[str, ...]]
) -> ContainerImage | None:
    from gpudoctor.facts.container_image_kinds import other_image

    cuda = cuda_of(_value(env, "CUDA_VERSION")) or cuda_of(_value(env, "NV_CUDA_CUDART_VERSION"))
    built_for = _match(_DRIVER, _value(env, "CUDA_DRIVER_VERSION"))
    require = _value(env, "NVIDIA_REQUIRE_CUDA")
    compat = compat_driver(dirs)
    product, release = _ngc_product(env)
    frameworks = _frameworks(env)
    evidence: list[str] = []
    for name in ("NVIDIA_PRODUCT_NAME", "NVIDIA_BUILD_ID", "CUDA_DRIVER_VERSION", "DLC_CONTAINER_TYPE"):
        if _value(env, name):
            evidence.append(f"{name} is set")
    if release:
        evidence.append(f"NGC release {release}")
    if compat:
        evidence.append(f"forward-compatibility libcuda.so.{compat} in /usr/local/cuda/compat")

    def image(kind: str, name: str, release: str | None = None, more: tuple[str, ...] = ()) -> ContainerImage:
        return ContainerImage(
            kind=kind,
            name=name,
            release=release,
            frameworks=frameworks,
            cuda_version=cuda,
            built_for_driver=built_for,
            require_cuda=require,
            compat_driver=compat,
            evidence=tuple(evidence) + more,
        )

    ngc_signs = product or release or _value(env, "NVIDIA_BUILD_ID") or built_for
    if ngc_signs:
        words = " ".join(w for w in ("NGC", product or "container", release) if w)
        return image("ngc", words, release)
    # Before nvidia/cuda: Google's and Azure's images are built on it and carry its ENV too.
    other = other_image(env, files)
    if other is not None:
        return image(other.kind, other.name, other.release, other.evidence)
    if _value(env, "DLC_CONTAINER_TYPE") or _value(env, "SAGEMAKER_TRAINING_MODULE"):
        name = "AWS Deep Learning Container" + (f" (CUDA {cuda})" if cuda else "")
        return image("aws-dlc", name)
    if require or _value(env, "NV_CUDA_CUDART_VERSION") or (cuda and "/NGC-DL-CONTAINER-LICENSE" in exists):
        evidence.append("nvidia/cuda ENV (CUDA_VERSION / NVIDIA_REQUIRE_CUDA)")
        name = "nvidia/cuda" + (f" {cuda}" if cuda else "")
        return image("nvidia-cuda", name)
    return None
