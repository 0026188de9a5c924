"""The CUDA base image of a generated Dockerfile: a tag NVIDIA publishes (``kb.docker_images``) whose CUDA fits both
the framework build and the host driver, with why; or the refusal naming another OS, driver or ``--cpu``."""

from __future__ import annotations

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_python import OS_ORDER
from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused
from gpudoctor.kb.docker_images import CudaImage
from gpudoctor.kb.versions import cuda_key


def choose_base_image(request: DockerfileRequest, build: Build, driver: str | None, os_token: str) -> Choice:
    from gpudoctor import kb
    from gpudoctor.kb.docker_images import is_published

    if build.cuda is None or _cuda_key(build.cuda) == (0, 0):
        raise GenerationRefused(f"the {build.framework} build has no CUDA version in the knowledge base", "--cpu")
    build_cuda = "%d.%d" % _cuda_key(build.cuda)
    driver_max = kb.max_cuda_for_driver(driver) if driver else None
    if driver and driver_max is None:
        raise GenerationRefused(f"driver {driver} is older than every CUDA release the knowledge base knows", "--cpu")
    if build.pip_libs:
        flavor, cudnn = ("devel" if request.flavor == "devel" else "base"), False
    else:
        flavor, cudnn = request.flavor, True
    top = build_cuda
    older_driver = bool(driver_max and _cuda_key(driver_max) < _cuda_key(build_cuda))
    if build.pip_libs and older_driver and driver_max:
        # The container toolkit checks the image's NVIDIA_REQUIRE_CUDA against the driver: an image newer than
        # the driver's CUDA does not start on most GPUs, while the wheel's own libraries still run (MVC).
        top = driver_max
        if _cuda_key(top)[0] != _cuda_key(build_cuda)[0]:
            raise GenerationRefused(
                f"driver {driver} runs CUDA {driver_max} at most, another major than the "
                f"{build.framework} build's CUDA {build_cuda}",
                "--cpu",
            )
    elif older_driver and _admitting_image(driver, build_cuda, build_cuda, flavor, cudnn, os_token) is None:
        need = kb.min_driver_for_cuda(build_cuda)
        raise GenerationRefused(
            f"{build.choice.chosen} needs CUDA {build_cuda} and cuDNN in the image, newer than "
            f"the CUDA {driver_max} driver {driver} runs",
            f"--for-driver {need}" if need else "--cpu",
        )
    image = _published_image(driver, top, flavor, cudnn, os_token, build.pip_libs)
    admitted = older_driver and (image is None or not build.pip_libs)
    if admitted and image is None:
        # NVIDIA deletes the images of CUDA releases whose driver branch reached its end of life (11.4.3 with
        # R470), but some newer images still admit that branch (kb.docker_images.REQUIRE_CUDA_BRANCHES).
        low = top if build.pip_libs else build_cuda
        image = _admitting_image(driver, build_cuda, low, flavor, cudnn, os_token)
    if image is None:
        label = ("cudnn-" if cudnn else "") + flavor
        span = f"CUDA {top}" if not build.pip_libs or top.endswith(".0") else f"CUDA {_cuda_key(top)[0]}.0-{top}"
        raise GenerationRefused(
            f"no published nvidia/cuda {label} image for {span} on {os_token}"
            + (f" that driver {driver} runs natively" if driver else ""),
            _nearest_image_request(request, driver, (top, build_cuda), flavor, cudnn, os_token, build.pip_libs),
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
    if admitted:
        why.append(
            f"no published {flavor} image of CUDA {top} or older on {os_token} is left (NVIDIA deletes them when "
            f"their driver branch ends), and this image is the newest that starts on driver {driver}"
        )
    elif build.pip_libs and image_cuda != build_cuda:
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


def _published_image(
    driver: str | None, top: str, flavor: str, cudnn: bool, os_token: str, step_down: bool
) -> CudaImage | None:
    """The kb's image for CUDA ``top`` (or, when the build brings its own libraries, the newest lower minor of the
    same major that has one) on ``os_token``; None when there is none."""
    from gpudoctor.kb.docker_choice import choose_cuda_image
    from gpudoctor.kb.errors import KnowledgeRefused

    major, minor = _cuda_key(top)
    for candidate in range(minor, -1 if step_down else minor - 1, -1):
        try:
            return choose_cuda_image(
                driver_version=driver, cuda=f"{major}.{candidate}", flavor=flavor, cudnn=cudnn, os=os_token
            )
        except KnowledgeRefused:
            continue
    return None


def _admitting_image(
    driver: str | None, high: str, low: str, flavor: str, cudnn: bool, os_token: str
) -> CudaImage | None:
    """The newest published image of CUDA ``low`` (exclusive, unless equal to ``high``) to ``high`` on
    ``os_token`` whose NVIDIA_REQUIRE_CUDA admits the driver's branch; None when there is none."""
    from gpudoctor.kb.docker_images import admits_driver_branch

    major, minor = _cuda_key(high)
    low_minor = _cuda_key(low)[1] if _cuda_key(low)[0] == major else -1
    stop = low_minor - 1 if low_minor == minor else low_minor
    for candidate in range(minor, stop, -1):
        image = _published_image(driver, f"{major}.{candidate}", flavor, cudnn, os_token, False)
        if image is not None and admits_driver_branch(image.cuda, driver):
            return image
    return None


def _nearest_image_request(
    request: DockerfileRequest,
    driver: str | None,
    cudas: tuple[str, str],
    flavor: str,
    cudnn: bool,
    os_token: str,
    step_down: bool,
) -> str:
    """Another base OS that has the image (``cudas``: the top CUDA the driver runs, the build's), else the driver
    whose CUDA has one here, else --cpu."""
    from gpudoctor import kb
    from gpudoctor.kb.docker_images import published_images

    top, build_cuda = cudas
    for other in OS_ORDER:
        if other == os_token:
            continue
        if (
            _published_image(driver, top, flavor, cudnn, other, step_down) is not None
            or _admitting_image(driver, build_cuda, top, flavor, cudnn, other) is not None
        ):
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
    key = cuda_key(text)
    return key[0], key[1]
