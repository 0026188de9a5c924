"""The nvidia/cuda images: which tags exist, and which one a driver can run.

``docker_cuda.json`` holds one row per exact CUDA release of the images (OS tokens, flavor tokens
such as ``cudnn-runtime``, the cuDNN token of that release, and whether NVIDIA's tag list / Docker
Hub names them: ``"published"``, or only secondary copies: ``"secondary"``).  Only published
tags are ever chosen: a Dockerfile whose ``FROM`` tag does not exist fails on its first line.

``docker_choice.choose_cuda_image`` picks the base image for a driver and the CUDA a framework build needs,
preferring a release the driver runs natively (nvidia-smi's "CUDA Version" >= the image's
major.minor, so the container toolkit's ``NVIDIA_REQUIRE_CUDA`` check passes) over one it runs only
through minor-version compatibility.  It refuses with ``KnowledgeRefused(reason, nearest)``.
Everything here is pure and never raises on junk (only that refusal).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.versions import cuda_key as _version_key
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version

DOCKER_FILE = "docker_cuda.json"
REPOSITORY = "nvidia/cuda"
FLAVORS = ("base", "runtime", "devel")
# Base OS when none is asked: the newest Ubuntu LTS that has the image, then older ones.
DEFAULT_OS_ORDER = ("ubuntu24.04", "ubuntu22.04", "ubuntu20.04", "ubuntu18.04")
# Registry spellings of the same repository (the images are mirrored on NGC).
_PREFIXES = ("docker.io/nvidia/cuda:", "nvcr.io/nvidia/cuda:", "nvidia/cuda:")
_TAG_RE = re.compile(r"(\d+\.\d+\.\d+)-(?:(cudnn\d?)-)?(base|runtime|devel)-([a-z]+\d+(?:\.\d+)?)")
_OS_RE = re.compile(r"[a-z]+\d+(?:\.\d+)?")
# Driver branches an image's NVIDIA_REQUIRE_CUDA admits for every GPU brand although they run an older CUDA than
# the image's (brand=tesla/geforce/quadro/...,driver>=470,driver<471): the container toolkit starts the image on
# them, and its CUDA runs there through minor-version compatibility.  Read in NVIDIA's image sources
# dist/11.8.0/ubuntu2004/base/Dockerfile and dist/11.8.0/ubuntu2204/base/Dockerfile (gitlab.com/nvidia/
# container-images/cuda), through the verbatim copy at https://github.com/taehun-kmu/FMCL-Docker/blob/
# 098adf056da4010d361af31de8c9b62ae80adc7d/dist/11.8.0/ubuntu2204/base/Dockerfile; the runtime and devel images
# build FROM base and keep its value.  Only releases read there are listed.
REQUIRE_CUDA_BRANCHES: dict[str, tuple[int, ...]] = {"11.8.0": (470,)}


@dataclass(frozen=True)
class CudaImage:
    """One nvidia/cuda image: ``flavor`` is base/runtime/devel, ``cudnn`` whether cuDNN is in it."""

    cuda: str  # "12.8.1"
    os: str  # "ubuntu24.04"
    flavor: str  # "runtime"
    cudnn: bool
    tag: str  # "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"
    confidence: str  # "published" or "secondary"
    sources: tuple[str, ...] = ()
    eol: bool = False  # past NVIDIA's end of life (CUDA 11): the tag is due to be deleted
    why: str = ""  # set by choose_cuda_image: one line for the Dockerfile header
    compat: str | None = None  # set by choose_cuda_image: "native" or "minor_version_compat"


# --------------------------------------------------------------------------- data


def _tags_of_row(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(os, flavor token, short tag) for every published tag of a row."""
    version = row.get("cuda")
    os_list = as_list(row.get("os"))
    flavors = as_list(row.get("flavors"))
    by_os = as_dict(row.get("flavors_by_os"))
    out = []
    for os in os_list:
        here = by_os.get(os, flavors)
        for flavor in here if isinstance(here, list) else []:
            out.append((str(os), str(flavor), f"{version}-{flavor}-{os}"))
    return out


def _image_from_tag(short: str, confidence: str, sources: tuple[str, ...], eol: bool) -> CudaImage | None:
    match = _TAG_RE.fullmatch(short)
    if not match:
        return None
    cuda, token, flavor, os = match.groups()
    return CudaImage(
        cuda=cuda,
        os=os,
        flavor=flavor,
        cudnn=token is not None,
        tag=f"{REPOSITORY}:{short}",
        confidence=confidence,
        sources=sources,
        eol=eol,
    )


@functools.lru_cache(maxsize=None)
def _all_images() -> tuple[CudaImage, ...]:
    """Every image the data names, published and secondary, newest CUDA first."""
    images: list[CudaImage] = []
    for row in _load(DOCKER_FILE).get("rows", []):
        if not isinstance(row, dict):
            continue
        confidence = "published" if row.get("confidence") == "published" else "secondary"
        sources = tuple(str(s) for s in row.get("sources") or ())
        eol = bool(row.get("eol"))
        for _os, _flavor, short in _tags_of_row(row):
            image = _image_from_tag(short, confidence, sources, eol)
            if image is not None:
                images.append(image)
        seen = as_dict(row.get("also_seen"))
        seen_sources = tuple(str(s) for s in seen.get("sources") or ())
        for short in seen.get("tags") or ():
            image = _image_from_tag(str(short), "secondary", seen_sources, eol)
            if image is not None:
                images.append(image)
    images.sort(key=lambda image: _version_key(image.cuda), reverse=True)
    return tuple(images)


@functools.lru_cache(maxsize=None)
def _published_tags() -> frozenset[str]:
    return frozenset(image.tag for image in _all_images() if image.confidence == "published")


@functools.lru_cache(maxsize=None)
def _cudnn_tokens() -> dict[tuple[int, int, int], str]:
    tokens = {}
    for row in _load(DOCKER_FILE).get("rows", []):
        if isinstance(row, dict) and isinstance(row.get("cudnn"), str):
            tokens[_version_key(str(row.get("cuda")))] = row["cudnn"]
    return tokens


def published_images() -> list[CudaImage]:
    """Every image NVIDIA's tag list or Docker Hub names, newest CUDA first."""
    return [image for image in _all_images() if image.confidence == "published"]


def os_tokens() -> list[str]:
    """Every base-OS token any image uses ("ubuntu24.04", "ubi9", "amzn2023", ...), sorted."""
    return sorted({image.os for image in _all_images()})


def is_published(tag: object) -> bool:
    """Whether ``tag`` ("nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04", or without the repository)
    is one NVIDIA publishes.  Secondary-only tags and anything else give ``False``."""
    if not isinstance(tag, str):
        return False
    text = tag.strip()
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return f"{REPOSITORY}:{text}" in _published_tags()


def admits_driver_branch(cuda: object, driver_version: object) -> bool:
    """Whether the images of CUDA release ``cuda`` ("11.8.0") start on ``driver_version``'s branch through an
    NVIDIA_REQUIRE_CUDA brand exception (``REQUIRE_CUDA_BRANCHES``); False for anything else or junk."""
    driver = parse_driver_version(driver_version)
    return driver is not None and driver[0] in REQUIRE_CUDA_BRANCHES.get(str(cuda).strip(), ())


# --------------------------------------------------------------------------- tags


def _cudnn_token(cuda: tuple[int, int, int]) -> str:
    """The cuDNN word in tags of a release: the data's, else NVIDIA's naming rule (cudnn8 up to
    12.2, cudnn9 for 12.3, plain cudnn from 12.4)."""
    known = _cudnn_tokens().get(cuda)
    if known:
        return known
    if cuda[:2] >= (12, 4):
        return "cudnn"
    return "cudnn9" if cuda[:2] == (12, 3) else "cudnn8"


def _clean_os(os: object) -> str | None:
    if not isinstance(os, str):
        return None
    text = os.strip().lower().replace(" ", "").replace("-", "").replace(":", "")
    return text if _OS_RE.fullmatch(text) else None


def _split_flavor(flavor: object, cudnn: object) -> tuple[str, bool] | None:
    """("cudnn-runtime", False) -> ("runtime", True); junk -> None."""
    if not isinstance(flavor, str):
        return None
    text = flavor.strip().lower()
    match = re.fullmatch(r"(?:cudnn\d?-)?(base|runtime|devel)", text)
    if not match:
        return None
    return match.group(1), bool(cudnn is True or text.startswith("cudnn"))


def image_tag(cuda: str, flavor: str, os: str, cudnn: bool = False) -> str | None:
    """``("12.8.1", "runtime", "ubuntu24.04", True)`` -> ``"nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04"``,
    with the cuDNN word of that release (cudnn8 / cudnn9 / cudnn).  It formats; whether the tag
    exists is ``is_published``'s question.  ``None`` for junk (no exact x.y.z CUDA, an unknown
    flavor, cuDNN asked on ``base``, an OS that is not a token like ubuntu24.04)."""
    parsed = parse_cuda_version(cuda)
    split = _split_flavor(flavor, cudnn)
    os_token = _clean_os(os)
    if parsed is None or parsed[2] is None or split is None or os_token is None:
        return None
    name, with_cudnn = split
    if with_cudnn and name == "base":
        return None
    version = (parsed[0], parsed[1], parsed[2])
    word = f"{_cudnn_token(version)}-{name}" if with_cudnn else name
    return f"{REPOSITORY}:{version[0]}.{version[1]}.{version[2]}-{word}-{os_token}"
