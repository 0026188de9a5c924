"""Choosing the nvidia/cuda base image for a driver and the CUDA a framework build needs (the tags themselves
are ``docker_images``'): a release the driver runs natively before one it runs only through minor-version
compatibility, refused with ``KnowledgeRefused(reason, nearest)`` when none fits.  Pure; never raises on junk."""

from __future__ import annotations

from gpudoctor.kb.docker_images import (
    DEFAULT_OS_ORDER,
    REPOSITORY,
    CudaImage,
    _clean_os,
    _split_flavor,
    admits_driver_branch,
    os_tokens,
    published_images,
)
from gpudoctor.kb.driver_cuda import driver_runs_cuda, max_cuda_for_driver, min_driver_for_cuda
from gpudoctor.kb.errors import KnowledgeRefused
from gpudoctor.kb.versions import cuda_key as _version_key
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version

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
    elif admits_driver_branch(image.cuda, driver):
        branch = (parse_driver_version(driver) or (0,))[0]
        lead = (
            f"driver {driver} runs CUDA <= {limit} natively; CUDA {image.cuda} runs through minor-version "
            f"compatibility (prebuilt programs run; PTX built for it cannot be JIT-compiled), and the image's "
            f"NVIDIA_REQUIRE_CUDA admits R{branch} drivers of every GPU brand, so the container toolkit starts it; "
            f"a driver >= {min_driver_for_cuda(image.cuda) or '?'} gives full support"
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
