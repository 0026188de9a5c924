"""The container image against the host driver: NGC framework containers and their banner, nvidia/cuda images.

The image comes from the container's own environment (``facts.platform.image``: NVIDIA_PYTORCH_VERSION,
CUDA_DRIVER_VERSION, CUDA_VERSION, the compat libraries in /usr/local/cuda/compat) and from its start-up banner
in any text of the evidence (``facts.platform.banner``: "This container was built for NVIDIA Driver Release ...
compatibility mode is UNAVAILABLE").  The knowledge base says which NGC release a driver runs
(``kb.ngc_containers``) and what minor-version compatibility allows (``kb.driver_cuda``).  A rocm/pytorch image is
judged against the host's AMD GPU Driver with AMD's user and kernel-space support matrix (``kb.rocm_driver_compat``).
"""

from __future__ import annotations

from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok, problem, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.platform_model import ContainerBanner, ContainerImage
from gpudoctor.kb.versions import release_tuple
from gpudoctor.results import Outcome
from gpudoctor_checks._cause_fixes import fix_for
from gpudoctor_checks._fixes import install_driver_for

_ROCM_MATRIX_URL = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/user-kernel-space-compat-matrix.html"
)
_FWD_COMPAT_URL = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"
_NGC_NOTES_URL = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/index.html"
# Banner / NVIDIA_PRODUCT_NAME words -> the nvcr.io/nvidia/<product> repository.
_PRODUCTS = {"pytorch": "pytorch", "tensorflow": "tensorflow", "nvidia tensorrt": "tensorrt", "tensorrt": "tensorrt"}


def _image_product(image: ContainerImage | None) -> str | None:
    """ "NGC PyTorch 23.10" -> "PyTorch" (the name identify_image gives an NGC image)."""
    if image is None or image.kind != "ngc" or not image.name.startswith("NGC "):
        return None
    words = image.name[4:]
    if image.release and words.endswith(" " + image.release):
        words = words[: -len(image.release) - 1]
    return words


def _product(image: ContainerImage | None, banner: ContainerBanner | None) -> str | None:
    for word in (banner.product if banner else None, _image_product(image)):
        if word and word.strip().lower() in _PRODUCTS:
            return _PRODUCTS[word.strip().lower()]
    if image is not None and "torch" in image.frameworks:
        return "pytorch"
    return None


def _host_driver(facts: Facts, banner: ContainerBanner | None) -> str | None:
    driver = facts.driver
    return driver.userspace_version or driver.kernel_version or (banner.detected_driver if banner else None)


def _older(host: str, wanted: str) -> bool:
    return release_tuple(host, 3) < release_tuple(wanted, 3)


def _datacenter(facts: Facts) -> bool | None:
    from gpudoctor import kb

    verdicts = [kb.is_datacenter_brand(gpu.brand, gpu.name) for gpu in facts.gpus]
    if any(v is False for v in verdicts):
        return False
    return True if verdicts and all(v is True for v in verdicts) else None


def _ngc(image: ContainerImage | None, banner: ContainerBanner | None) -> bool:
    """An NGC framework container (its environment, or its banner): an older NGC release can replace it."""
    return banner is not None or (image is not None and image.kind == "ngc")


def _image_words(image: ContainerImage | None, banner: ContainerBanner | None, release: str | None) -> str:
    if image is not None:
        return image.name
    product = banner.product if banner and banner.product else "NGC container"
    return f"{product} {release}" if release else product


def _fixes(facts: Facts, product: str | None, host: str | None, built_for: str | None, ngc: bool = True) -> Fix:
    """An older tag built for this driver (no root needed), or the driver the image wants.  The older tag is an NGC
    release only for an NGC image (or banner); another image (nvidia/cuda, a cloud's deep-learning container) gets
    the general advice: an image of a CUDA this driver runs."""
    from gpudoctor.kb.ngc_containers import newest_release_for_driver

    driver_fix = install_driver_for(facts)
    if not ngc:
        general = fix_for("container-cuda", facts)
        summary = general.summary if general else "Use an image of a CUDA the host driver runs, or upgrade the driver."
        steps = (*(general.commands if general else ()), "# or upgrade the host driver:", *driver_fix.commands)
        return Fix(summary, steps, url=driver_fix.url)
    repository = product or "pytorch"
    fitting = newest_release_for_driver(repository, host) if host else None
    wants = f" {built_for} or newer" if built_for else " the image was built for"
    commands: list[str] = []
    if fitting is not None:
        which = "" if product else " (the PyTorch container: the evidence does not name the image's product)"
        summary = (
            f"Use an older release built for this driver: {fitting.image}{which} (CUDA {fitting.cuda}, built for "
            f"driver {fitting.driver}{' per CUDA Table 3' if fitting.driver_derived else ''}); or install the "
            f"NVIDIA driver{wants} on the host and reboot."
        )
        commands.append(f"docker pull {fitting.image}")
    else:
        summary = f"Install the NVIDIA driver{wants} on the host and reboot (no release in the table fits this driver)."
    if commands:
        commands.append("# or upgrade the host driver:")
    commands.extend(driver_fix.commands)
    return Fix(summary, tuple(commands), needs_root=fitting is None, url=driver_fix.url or _NGC_NOTES_URL)


@check("PLAT020", area="platform", title="Container image fits the host driver")
def image_fits_driver(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the image this container runs (an NGC framework container from NVIDIA_PYTORCH_VERSION and
    CUDA_DRIVER_VERSION, an nvidia/cuda image from CUDA_VERSION) or the NGC banner in the evidence ("This
    container was built for NVIDIA Driver Release 545.23 or later, but version 525.85.12 was detected and
    compatibility mode is UNAVAILABLE"), against the host driver: new enough; older but run through forward
    compatibility (a data-center GPU, the image's /usr/local/cuda/compat libraries and a driver branch the
    release lists); older within the same CUDA major (minor-version compatibility); or too old.  A rocm/pytorch
    image (BUILD_ENVIRONMENT=pytorch-linux-<os>-rocm<ROCm>-py<Python>, else /opt/rocm/.info/version) against the
    host's AMD GPU Driver (amdgpu-dkms) with AMD's user and kernel-space support matrix, where the module version
    maps to a driver release.

    Why it matters: an image built for a newer driver either refuses CUDA outright (error 804 / "compatibility
    mode is UNAVAILABLE") or runs with limits (no PTX JIT of newer code, no features of the newer driver); a
    banner saying the driver was not detected means the container has no GPU at all.

    How to fix: use an older tag built for this driver (`nvcr.io/nvidia/pytorch:<YY.MM>-py3`, the newest release
    the knowledge base finds for the driver), or install the driver the image was built for on the host; a
    container started without GPUs needs `docker run --gpus all`.  For a ROCm image: an image whose ROCm the host
    driver supports, or `amdgpu-install --usecase=dkms` of a driver release that supports the image's ROCm.
    """
    platform = facts.platform
    image, banner = platform.image, platform.banner
    if image is None and banner is None:
        return not_applicable("no container image or NGC banner in the evidence")
    if image is not None and image.kind == "rocm":
        return _rocm_image_fits(facts, image)
    from gpudoctor.kb.ngc_containers import forward_compat_branch, ngc_release

    product = _product(image, banner)
    release = (image.release if image else None) or (banner.release if banner else None)
    row = ngc_release(product, release) if product and release else None
    host = _host_driver(facts, banner)
    built_for = ((banner.built_for_driver if banner else None) or (image.built_for_driver if image else None)) or (
        row.driver if row else None
    )
    cuda = (image.cuda_version if image else None) or (row.cuda if row else None)
    words = _image_words(image, banner, release)
    evidence = [Ev.PLATFORM, Ev.ENV] if image is not None else []
    if banner is not None:
        evidence.append(Ev.PASTE)
    data: dict[str, Any] = {"image": words, "release": release, "built_for_driver": built_for, "host_driver": host}

    def verdict(name: str) -> dict[str, Any]:
        return {**data, "verdict": name}

    if banner is not None and banner.no_gpu:
        return problem(
            f"{words}: the container's banner says the NVIDIA driver was not detected; it runs without a GPU",
            fix_for("container-gpus", facts),
            evidence,
            verdict("no-gpu"),
            cause="container-no-gpu-flag",
        )
    if banner is not None and banner.compat_mode == "enabled":
        return ok(
            f"{words} runs in CUDA forward-compatibility mode (driver {banner.built_for_driver or '?'} libraries on "
            f"kernel driver {banner.detected_driver or host or '?'})",
            verdict("forward-compat"),
            [
                Finding(
                    Severity.INFO, "forward compatibility is supported on data-center GPUs only", None, tuple(evidence)
                )
            ],
        )
    if banner is not None and banner.compat_mode == "unavailable":
        # This machine's driver when the evidence has it (the banner may come from a paste), else the banner's.
        found = host
        said = f"built for driver {built_for} or later" if built_for else "built for a newer driver"
        outcome = problem(
            f"{words} was {said}, but the host driver is {found or 'older'} and its compatibility mode is "
            "UNAVAILABLE: CUDA does not start in this container",
            _fixes(facts, product, found, built_for),
            evidence,
            verdict("unavailable"),
            cause="container-cuda-too-new",
        )
        if banner.quoted:
            finding = outcome.findings[0]
            outcome.findings[0] = Finding(
                finding.severity,
                finding.message,
                finding.fix,
                finding.evidence,
                cause=finding.cause,
                quote=banner.quoted,
            )
        return outcome
    if host is None:
        return not_applicable(f"{words}: the host driver version is not in the evidence", verdict("unknown"))
    if built_for is None and cuda is None:
        return not_applicable(f"{words}: neither the driver it was built for nor its CUDA is known", verdict("unknown"))
    if built_for is not None and not _older(host, built_for):
        return ok(f"{words} was built for driver {built_for}; the host's {host} is new enough", verdict("fits"))
    if built_for is None and cuda is not None:
        from gpudoctor import kb

        runs = kb.driver_runs_cuda(host, cuda)
        if runs.status == "native":
            return ok(f"{words} (CUDA {cuda}) runs natively on driver {host}", verdict("fits"))
        if runs.status == "unknown":
            return not_applicable(f"{words}: {runs.message}", verdict("unknown"))
    # The host driver is older than the image wants.
    if image is not None and image.compat_driver and _datacenter(facts):
        branch = forward_compat_branch(row, host) if row is not None else None
        if branch is not None:
            return ok(
                f"{words} wants driver {built_for or cuda}, the host has {host}: it runs in forward-compatibility "
                f"mode (a data-center GPU, libcuda {image.compat_driver} in the image, and the release lists R"
                f"{branch.split('.')[0]} from {branch})",
                verdict("forward-compat"),
                [
                    Finding(
                        Severity.INFO, "forward-compatibility mode: the image's CUDA runs on the older kernel driver"
                    )
                ],
            )
        if row is None or not row.datacenter_drivers:
            return warning(
                f"{words} wants a newer driver than the host's {host}; the image carries forward-compatibility "
                f"libraries (libcuda {image.compat_driver}) and the GPU is a data-center one, but whether this "
                "release supports the host's driver branch is not known",
                Fix("Check the release's 'Driver Requirements' for the host's branch.", url=_FWD_COMPAT_URL),
                evidence,
                verdict("forward-compat-unconfirmed"),
                cause="container-cuda-too-new",
            )
    if cuda is not None:
        from gpudoctor import kb

        runs = kb.driver_runs_cuda(host, cuda)
        if runs.status == "minor_version_compat":
            return warning(
                f"{words} (CUDA {cuda}) wants a newer driver than the host's {host}; it runs through minor-version "
                f"compatibility, with limits. {runs.message}",
                _fixes(facts, product, host, built_for or runs.needs_driver, _ngc(image, banner)),
                evidence,
                verdict("minor-version-compat"),
                cause="container-cuda-too-new",
            )
    return problem(
        f"{words} was built for driver {built_for or (cuda and f'CUDA {cuda}')}; the host's {host} is too old for it",
        _fixes(facts, product, host, built_for, _ngc(image, banner)),
        evidence,
        verdict("too-old"),
        cause="container-cuda-too-new",
    )


def _rocm_fix(image_rocm: str, supported: tuple[str, ...]) -> Fix:
    """An image whose ROCm the host driver supports (the knowledge base's rocm/dev images), or the driver of the
    image's ROCm release."""
    from gpudoctor.kb.rocm_driver_compat import drivers_for, major_minor
    from gpudoctor.kb.rocm_images import rocm_images

    fitting = next((i for i in rocm_images() if major_minor(i.rocm) in supported), None)
    drivers = drivers_for(image_rocm)
    want = (
        f"the AMD GPU Driver of a release that supports ROCm {image_rocm} ({', '.join(drivers)})"
        if drivers
        else (f"the AMD GPU Driver (amdgpu-dkms) of ROCm {image_rocm}")
    )
    commands: list[str] = []
    if fitting is not None:
        summary = (
            f"Use an image whose ROCm this driver supports ({', '.join(supported)}), e.g. {fitting.reference} with "
            f"the matching rocm/pytorch tag; or install {want} on the host and reboot."
        )
        commands += [f"docker pull {fitting.reference}", "# or, on the host, the kernel driver only:"]
    else:
        summary = f"Install {want} on the host and reboot."
    commands.append("sudo amdgpu-install --usecase=dkms")
    return Fix(summary, tuple(commands), needs_root=fitting is None, url=_ROCM_MATRIX_URL)


def _rocm_image_fits(facts: Facts, image: ContainerImage) -> Outcome:
    """A rocm/pytorch image against the host's amdgpu driver: AMD supports a driver release with the user space of a
    few releases around it (the matrix); the host's module version must first be mapped to its release."""
    from gpudoctor.kb.rocm_driver_compat import driver_row, kmd_release_of, major_minor

    rocm_full = image.release or facts.amd.rocm.version
    rocm = major_minor(rocm_full)
    driver = facts.amd.driver
    data: dict[str, Any] = {"image": image.name, "rocm": rocm_full, "host_driver": driver.version}
    words = image.name if image.release or not rocm_full else f"{image.name} (ROCm {rocm_full})"

    def verdict(name: str) -> dict[str, Any]:
        return {**data, "verdict": name}

    if rocm is None:
        return not_applicable(f"{words}: the image's ROCm version is not in the evidence", verdict("unknown"))
    if driver.version is None:
        return not_applicable(f"{words}: the host's amdgpu driver version is not in the evidence", verdict("unknown"))
    if driver.inbox:
        return not_applicable(
            f"{words} on the kernel's own amdgpu ({driver.version}): AMD's support matrix covers only the AMD GPU "
            "Driver (amdgpu-dkms) releases",
            verdict("inbox-driver"),
        )
    kmd = kmd_release_of(driver.version)
    row = driver_row(kmd)
    if row is None:
        return not_applicable(
            f"{words}: which AMD GPU Driver release amdgpu {driver.version} is, is not published, so AMD's support "
            "matrix cannot be applied",
            verdict("unknown-driver-release"),
        )
    data["driver_release"] = row.kmd
    if rocm in row.user_space:
        return ok(
            f"{words} is supported on the host's AMD GPU Driver {driver.version} (release {row.kmd}: ROCm "
            f"{', '.join(row.user_space)})",
            verdict("fits"),
        )
    return warning(
        f"{words} is not a supported combination with the host's AMD GPU Driver {driver.version} (release {row.kmd} "
        f"supports ROCm {', '.join(row.user_space)}): expect failures AMD does not test for",
        _rocm_fix(rocm, row.user_space),
        [Ev.PLATFORM, Ev.ENV],
        verdict("unsupported"),
    )
