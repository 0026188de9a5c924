"""The images ``container_image`` names beyond NVIDIA's: rocm/pytorch, Google Cloud Deep Learning Containers and
Azure Machine Learning environments, each from the ENV lines its own build sets (sources in
``gpudoctor.evidence.markers_image``).  Tolerant: junk values name nothing.

- rocm/pytorch: BUILD_ENVIRONMENT=pytorch-linux-<os>-rocm<ROCm>-py<Python> (its ROCm), else MAGMA_HOME under
  /opt/rocm with PYTORCH_ROCM_ARCH set.  The ROCm goes in ``release``; where the ENV does not say it, the check
  takes /opt/rocm/.info/version from ``facts.amd.rocm`` (read once there).
- Google Cloud: CONTAINER_URL in deeplearning-platform-release, or CONTAINER_NAME with DL_ANACONDA_HOME.
- Azure ML: AZUREML_CONDA_ENVIRONMENT_PATH (/azureml-envs/<environment>), AZUREML_ENVIRONMENT_IMAGE, or the base
  images' /IMAGE_INFORMATION.
deepo sets nothing of its own: it stays the nvidia/cuda image it is built on.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gpudoctor.facts.environment import EnvFacts

_ROCM_BUILD = re.compile(r"pytorch-linux-[a-z0-9.]{1,20}-rocm(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)-py[0-9.]{1,8}(?:-.*)?")
_SAFE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]{0,80}")  # a name fit to print: no spaces, quotes, escapes
_GCP_REGISTRY = "deeplearning-platform-release"
IMAGE_INFORMATION = "/IMAGE_INFORMATION"


class Kind(NamedTuple):
    kind: str  # "rocm", "gcp-dlc", "azureml"
    name: str
    release: str | None  # the ROCm of a rocm image
    evidence: tuple[str, ...]


def _text(env: EnvFacts, name: str) -> str | None:
    value = env.get(name)
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if value and len(value) <= 200 and value.isprintable() else None


def _safe(word: str | None) -> str | None:
    return word if word is not None and _SAFE_WORD.fullmatch(word) else None


def rocm_image(env: EnvFacts) -> Kind | None:
    build = _text(env, "BUILD_ENVIRONMENT")
    match = _ROCM_BUILD.fullmatch(build) if build else None
    if match:
        rocm = match.group(1)
        return Kind("rocm", f"rocm/pytorch (ROCm {rocm})", rocm, (f"BUILD_ENVIRONMENT names ROCm {rocm}",))
    magma = _text(env, "MAGMA_HOME")
    if magma is not None and magma.startswith("/opt/rocm") and _text(env, "PYTORCH_ROCM_ARCH"):
        return Kind("rocm", "rocm/pytorch", None, ("MAGMA_HOME under /opt/rocm and PYTORCH_ROCM_ARCH are set",))
    return None


def gcp_image(env: EnvFacts) -> Kind | None:
    url = _text(env, "CONTAINER_URL")
    name = _safe(_text(env, "CONTAINER_NAME"))
    from_registry = url is not None and _GCP_REGISTRY in url
    if not from_registry and not (name and _text(env, "DL_ANACONDA_HOME")):
        return None
    evidence = ["CONTAINER_URL is in deeplearning-platform-release" if from_registry else "DL_ANACONDA_HOME is set"]
    words = "Google Cloud Deep Learning Container" + (f" {name}" if name else "")
    return Kind("gcp-dlc", words, None, tuple(evidence))


def azureml_image(env: EnvFacts, files: dict[str, str]) -> Kind | None:
    path = _text(env, "AZUREML_CONDA_ENVIRONMENT_PATH")
    info = files.get(IMAGE_INFORMATION)
    image_info = info.split(",", 1)[0].strip() if isinstance(info, str) and "Materializaton Build" in info else None
    flagged = _text(env, "AZUREML_ENVIRONMENT_IMAGE")
    if not (path or image_info or flagged):
        return None
    environment = _safe(path.rstrip("/").rsplit("/", 1)[-1]) if path else None
    label = environment or _safe(image_info)
    evidence = [
        line
        for line, present in (
            ("AZUREML_CONDA_ENVIRONMENT_PATH is set", path),
            (f"{IMAGE_INFORMATION} names the image", image_info),
            ("AZUREML_ENVIRONMENT_IMAGE is set", flagged),
        )
        if present
    ]
    return Kind("azureml", "Azure ML environment" + (f" {label}" if label else ""), None, tuple(evidence))


def other_image(env: EnvFacts, files: dict[str, str]) -> Kind | None:
    """rocm/pytorch, a Google Cloud or an Azure ML image; None when the ENV names none of them."""
    return rocm_image(env) or gcp_image(env) or azureml_image(env, files)
