"""The nvidia/cuda images: which tags exist, and which one a driver can run.

``docker_cuda.json`` holds one row per exact CUDA release of the images (OS tokens, flavor tokens
such as ``cudnn-runtime``, the cuDNN token of that release, and whether NVIDIA's tag list / Docker
Hub names them: ``"published"``, or only secondary copies: ``"secondary"``).  Only published
tags are ever chosen: a Dockerfile whose ``FROM`` tag does not exist fails on its first line.

``choose_cuda_image`` picks the base image for a driver and the CUDA a framework build needs,
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

from gpudoctor.kb.driver_cuda import driver_runs_cuda, max_cuda_for_driver, min_driver_for_cuda
from gpudoctor.kb.errors import KnowledgeRefused
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


# --------------------------------------------------------------------------- choosing


def _refuse(reason: str, nearest: str | None = None) -> KnowledgeRefused:
    return KnowledgeRefused(reason, nearest)


def _describe(image: CudaImage) -> str:
    return image.tag


def _os_rank(os: str) -> int:
    return DEFAULT_OS_ORDER.index(os) if os in DEFAULT_OS_ORDER else len(DEFAULT_OS_ORDER)


def _pick_os(images: list[CudaImage], os: str | None) -> list[CudaImage]:
    """The images on the asked OS, else on the preferred default OS of each release."""
    if os is not None:
        return [image for image in images if image.os == os]
    best: dict[str, CudaImage] = {}
    for image in images:
        if _os_rank(image.os) >= len(DEFAULT_OS_ORDER):
            continue
        current = best.get(image.cuda)
        if current is None or _os_rank(image.os) < _os_rank(current.os):
            best[image.cuda] = image
    return sorted(best.values(), key=lambda image: _version_key(image.cuda), reverse=True)


def _runs(driver: str | None, image: CudaImage) -> tuple[int, str]:
    """How the driver runs the image: (0 natively / within its CUDA minor, 1 minor-version compat only,
    2 not at all) and the verdict's status."""
    if driver is None:
        return 0, "unknown"
    verdict = driver_runs_cuda(driver, image.cuda)
    limit = max_cuda_for_driver(driver)
    limit_key = parse_cuda_version(limit) if limit else None
    within = limit_key is not None and _version_key(image.cuda)[:2] <= limit_key[:2]
    if verdict.status == "native":
        return 0, "native"
    if verdict.status == "minor_version_compat":
        return (0 if within else 1), "minor_version_compat"
    return 2, verdict.status


def _best(images: list[CudaImage], driver: str | None) -> tuple[CudaImage, int, str] | None:
    ranked = [(image, *_runs(driver, image)) for image in images]
    for tier in (0, 1):
        here = [entry for entry in ranked if entry[1] == tier]
        if here:
            return max(here, key=lambda entry: _version_key(entry[0].cuda))
    return None


def _why(image: CudaImage, driver: str | None, tier: int, status: str, asked: str | None, os_asked: bool) -> str:
    limit = max_cuda_for_driver(driver) if driver else None
    what = f"CUDA {asked}.x build" if asked else ("newest CUDA this driver runs" if driver else "newest CUDA")
    if driver is None:
        lead = (
            f"no driver given: {image.cuda} is the newest published release for the {what}; "
            f"the host needs a driver >= {min_driver_for_cuda(image.cuda) or '?'}"
        )
    elif tier == 0 and status == "native":
        lead = (
            f"driver {driver} runs CUDA <= {limit} natively; {image.cuda} is the newest published release "
            f"for the {what}"
        )
    elif tier == 0:
        lead = (
            f"driver {driver} runs CUDA {limit}; {image.cuda} asks for {min_driver_for_cuda(image.cuda) or '?'} "
            f"for full support and runs on this driver through minor-version compatibility"
        )
    else:
        lead = (
            f"driver {driver} runs CUDA <= {limit} natively; CUDA {image.cuda} runs only through minor-version "
            f"compatibility: fine for running prebuilt programs (runtime), but PTX built for it cannot be "
            f"JIT-compiled and the image's NVIDIA_REQUIRE_CUDA check refuses to start on GPUs without a brand "
            f"exception unless NVIDIA_DISABLE_REQUIRE=1; upgrade the driver to >= "
            f"{min_driver_for_cuda(image.cuda) or '?'} for full support"
        )
    where = f"{image.os} as asked" if os_asked else f"{image.os} (newest Ubuntu with this image)"
    tail = "; CUDA 11 images are past NVIDIA's end of life and due to be deleted" if image.eol else ""
    return f"{lead}; {where}{tail}"


def choose_cuda_image(
    *, driver_version: str | None, cuda: str | None, flavor: str = "runtime", cudnn: bool = False, os: str | None = None
) -> CudaImage:
    """The published nvidia/cuda image for a driver and the CUDA a framework build needs.

    ``cuda``: "12.8" (any 12.8.x: the newest published update), "12.8.1" (that one) or None (the
    newest CUDA the driver runs).  ``driver_version`` None: no driver known, the newest published
    release.  ``os`` None: ubuntu24.04, else ubuntu22.04 (older Ubuntu last).  The result's
    ``why`` says what was chosen and why, ``compat`` how the driver runs it.  Raises
    ``KnowledgeRefused`` when no published image fits, with the nearest that does.
    """
    split = _split_flavor(flavor, cudnn)
    if split is None:
        raise _refuse(f"unknown image flavor {str(flavor)[:40]!r} (known: base, runtime, devel)", "runtime")
    name, with_cudnn = split
    if with_cudnn and name == "base":
        raise _refuse("there is no cuDNN variant of the base flavor", "cudnn-runtime")
    driver: str | None = None
    if driver_version is not None:
        if parse_driver_version(driver_version) is None:
            raise _refuse(f"{str(driver_version)[:40]!r} is not a driver version like 550.54.15")
        driver = str(driver_version).strip()
    wanted: tuple[int, int, int | None] | None = None
    if cuda is not None:
        wanted = parse_cuda_version(cuda)
        if wanted is None:
            raise _refuse(f"{str(cuda)[:40]!r} is not a CUDA version like 12.8 or 12.8.1")
    os_token: str | None = None
    if os is not None:
        os_token = _clean_os(os)
        if os_token is None or os_token not in os_tokens():
            known = _os_for(published_images(), wanted)
            raise _refuse(f"unknown base OS {str(os)[:40]!r}", ", ".join(known) or None)

    kind = [image for image in published_images() if image.flavor == name and image.cudnn == with_cudnn]
    label = ("cudnn-" if with_cudnn else "") + name
    asked = None if wanted is None else f"{wanted[0]}.{wanted[1]}" + (f".{wanted[2]}" if wanted[2] is not None else "")
    same_cuda = [image for image in kind if _matches(image, wanted)]
    if wanted is not None and not same_cuda:
        raise _refuse(
            f"no published {REPOSITORY} {label} image for CUDA {asked}", _nearest(kind, driver, os_token, wanted)
        )
    candidates = _pick_os(same_cuda, os_token)
    if not candidates:
        here = _os_for(published_images(), wanted, kind=(name, with_cudnn))
        what = f"CUDA {asked}" if asked else "any CUDA"
        raise _refuse(
            f"no published {REPOSITORY} {label} image for {what} on {os_token or 'Ubuntu'}",
            ", ".join(here) or _nearest(kind, driver, None, wanted),
        )
    best = _best(candidates, driver)
    if best is None:
        newest = candidates[0]
        needs = min_driver_for_cuda(newest.cuda) or "?"
        nearest = _nearest(kind, driver, os_token, None)
        upgrade = f"or upgrade the driver to >= {needs}"
        raise _refuse(
            f"driver {driver} is too old for CUDA {asked or newest.cuda} ({newest.tag})",
            f"{nearest} {upgrade}" if nearest else upgrade,
        )
    image, tier, status = best
    compat = None if driver is None else ("native" if status == "native" else "minor_version_compat")
    return CudaImage(
        cuda=image.cuda,
        os=image.os,
        flavor=image.flavor,
        cudnn=image.cudnn,
        tag=image.tag,
        confidence=image.confidence,
        sources=image.sources,
        eol=image.eol,
        why=_why(image, driver, tier, status, asked, os_token is not None),
        compat=compat,
    )


def _matches(image: CudaImage, wanted: tuple[int, int, int | None] | None) -> bool:
    if wanted is None:
        return True
    key = _version_key(image.cuda)
    return key[:2] == wanted[:2] and (wanted[2] is None or key[2] == wanted[2])


def _os_for(
    images: list[CudaImage], wanted: tuple[int, int, int | None] | None, kind: tuple[str, bool] | None = None
) -> list[str]:
    """The OS tokens of the images for that CUDA (all CUDA when None), default Ubuntu first."""
    found = {
        image.os
        for image in images
        if _matches(image, wanted) and (kind is None or (image.flavor, image.cudnn) == kind)
    }
    return sorted(found, key=lambda os: (_os_rank(os), os))


def _nearest(
    kind: list[CudaImage], driver: str | None, os: str | None, wanted: tuple[int, int, int | None] | None
) -> str | None:
    """The nearest published image of the same flavor the driver runs: on the asked OS first, then
    on the default OS; with ``wanted``, the newest release not newer than it, else the oldest newer one."""
    for where in [os, None] if os is not None else [None]:
        pool = _pick_os(kind, where)
        runnable = [image for image in pool if _runs(driver, image)[0] < 2]
        if not runnable:
            continue
        if wanted is not None:
            older = [image for image in runnable if _version_key(image.cuda)[:2] <= wanted[:2]]
            if older:
                return _describe(max(older, key=lambda image: _version_key(image.cuda)))
            return _describe(min(runnable, key=lambda image: _version_key(image.cuda)))
        best = _best(runnable, driver)
        if best is not None:
            return _describe(best[0])
    return None
