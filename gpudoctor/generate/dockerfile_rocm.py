"""``gpudoctor dockerfile`` for AMD GPUs: a ROCm base image that exists and torch from the matching ROCm index.

Asked for with ``--vendor amd`` or ``--rocm VERSION``, or chosen when the machine has AMD GPUs and no NVIDIA ones
(``MachineTarget.gpu_vendor``).  Decisions, each written into the header:

- torch: the newest ROCm wheel variant not newer than the host's ROCm (``kb.rocm_wheels``) that also has a
  ``rocm/dev-ubuntu-<os>`` image of the same ROCm major.minor (``kb.rocm_images``), from the newest released torch
  that publishes it; AMD's PyTorch guide pairs a base image "with the correct user-space ROCm version" with the
  wheel from download.pytorch.org [ROCM_PT_INSTALL].
- TensorFlow and JAX on ROCm come from AMD's own wheels and images, which the knowledge base does not hold yet:
  refused in one line (exit 2) rather than guessed.
- The header carries the ``docker run`` device flags AMD documents [ROCM_DOCKER]: the container gets the GPUs as
  device nodes, not through a runtime hook.
- The preflight is the same as for CUDA images (``dockerfile_preflight``).
"""

from __future__ import annotations

import shlex
import string

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_fields import build_fields, comment_lines, load_template, tail_words
from gpudoctor.generate.dockerfile_preflight import (
    check_preflight_python,
    command_choice,
    preflight_block,
    source_choice,
)
from gpudoctor.generate.dockerfile_python import said
from gpudoctor.generate.model import Choice, DockerfileRequest, GeneratedFile, GenerationRefused
from gpudoctor.kb import rocm_images, rocm_wheels
from gpudoctor.kb.versions import major_minor, version_key

# The device flags every ROCm container needs [ROCM_DOCKER; ROCM_PT_INSTALL], and the render group by number: on
# newer udev /dev/kfd belongs to group render, whose number differs between the host and the image.
RUN_FLAGS = (
    "--device=/dev/kfd --device=/dev/dri --group-add video "
    '--group-add "$(getent group render | cut -d: -f3)" --ipc=host --shm-size 8G'
)
OPTIONAL_FLAGS = "--cap-add=SYS_PTRACE --security-opt seccomp=unconfined"


def wants_rocm(request: DockerfileRequest) -> bool:
    """A ROCm image: asked for (``--vendor amd``, ``--rocm``), or the machine has AMD GPUs and no NVIDIA ones."""
    if request.vendor == "nvidia":
        return False
    if request.vendor == "amd" or request.rocm:
        return True
    return not request.cpu and request.target.gpu_vendor == "amd"


def _host_rocm(request: DockerfileRequest) -> tuple[str | None, str]:
    if request.rocm:
        return request.rocm, f"--rocm {request.rocm}"
    if request.target.rocm_version:
        return request.target.rocm_version, f"from {request.target.source}"
    return None, "unknown: no ROCm found on the machine; the newest wheel index with an image is used"


def _oses(request: DockerfileRequest) -> tuple[str, ...]:
    oses = rocm_images.image_oses()
    if request.os is None:
        return oses
    token = str(request.os).strip().lower()
    if token not in oses:
        raise GenerationRefused(
            f"base OS {said(request.os)} has no rocm/dev image in the knowledge base ({', '.join(oses)})",
            f"--vendor amd --os {oses[0]}",
        )
    return (token,)


def _candidates(request: DockerfileRequest, host: str | None) -> list[tuple[str, str]]:
    """(torch release, variant) pairs a ROCm ``host`` can run, newest variant first, then newest torch."""
    wanted = request.framework_version
    ceiling = rocm_wheels.rocm_key(host) if host else None
    pairs = []
    for release in rocm_wheels.rocm_wheel_releases():
        if wanted is not None and release.torch != major_minor(wanted):
            continue
        if wanted is None and release.candidate:
            continue
        for variant in release.variants:
            if ceiling is None or rocm_wheels.variant_key(variant) <= ceiling:
                pairs.append((release.torch, variant))
    pairs.sort(key=lambda pair: (rocm_wheels.variant_key(pair[1]), version_key(pair[0])), reverse=True)
    return pairs


def _python_fits(torch: str, python: str) -> bool:
    from gpudoctor import kb

    release = kb.torch_release(torch)
    return release is None or release.supports_python(python) is not False


def _choose(request: DockerfileRequest, host: str | None) -> tuple[str, str, rocm_images.RocmImage, str]:
    """(torch release, variant, image, python) or GenerationRefused with the nearest request that works."""
    pairs = _candidates(request, host)
    if not pairs:
        if request.framework_version:
            raise GenerationRefused(
                f"torch {said(request.framework_version)} publishes no ROCm wheel "
                + (f"for ROCm {host} or older" if host else "in the knowledge base"),
                "--vendor amd --framework torch",
            )
        raise GenerationRefused(f"ROCm {host} is older than every ROCm torch wheel (rocm5.3 is the oldest)", "--cpu")
    for torch, variant in pairs:
        for os_token in _oses(request):
            image = rocm_images.image_for(variant.removeprefix("rocm"), os_token, host)
            python = rocm_images.os_python(os_token)
            if image is None or python is None or not _python_fits(torch, python):
                continue
            if request.python and request.python != python:
                continue
            return torch, variant, image, python
    if request.python:
        pythons = ", ".join(f"{o}: {rocm_images.os_python(o)}" for o in rocm_images.image_oses())
        raise GenerationRefused(
            f"no rocm/dev image in the knowledge base that fits has Python {said(request.python)} ({pythons})",
            "--vendor amd (the image's own Python)",
        )
    raise GenerationRefused(
        "no ROCm torch wheel has a rocm/dev image of its ROCm release in the knowledge base"
        + (f" for ROCm {host} or older" if host else ""),
        "--cpu",
    )


def rocm_dockerfile(request: DockerfileRequest) -> GeneratedFile:
    """The ROCm Dockerfile for ``request`` (already checked by ``generate_dockerfile``)."""
    if request.cpu:
        raise GenerationRefused("--cpu and an AMD GPU image are two different images: choose one", "--vendor amd")
    if request.framework != "torch":
        raise GenerationRefused(
            f"ROCm images: gpudoctor writes torch only; {request.framework} on ROCm comes from AMD's own wheels and "
            "images, which its knowledge base does not hold yet",
            "--vendor amd --framework torch",
        )
    host, host_why = _host_rocm(request)
    torch, variant, image, python = _choose(request, host)
    requirement = f"torch=={torch}.*"
    index = rocm_wheels.index_url(variant)
    pip_args = f"{shlex.quote(requirement)} --index-url {index}"
    variant_rocm = variant.removeprefix("rocm")
    newest = rocm_wheels.newest_variant_for(host, request.framework_version)
    torch_why = [
        f"torch {torch} {variant} is the newest ROCm wheel "
        + (f"not newer than ROCm {host}" if host else "the knowledge base knows")
        + f" that has a rocm/dev image of ROCm {major_minor(variant_rocm)}.x [P_TI]"
    ]
    if newest and newest[1] != variant:
        torch_why.append(f"the newer {newest[1]} wheel (torch {newest[0]}) has no rocm/dev image in the knowledge base")
    torch_why.append(f"torch {torch} supports Python {python}")
    torch_why += _coverage_notes(request.target.gfx_targets, variant)
    build = Build(
        framework="torch",
        pip_args=pip_args,
        constraint=requirement,
        extra_index=index,
        cuda=None,
        pip_libs=True,
        choice=Choice("torch", f"{requirement} {variant} from {index}", "; ".join(torch_why)),
    )
    image_why = (
        f"AMD's image with the user-space ROCm of the {variant} wheel [ROCM_PT_INSTALL], built and tagged by AMD's "
        f"build script [{image.sources[0].split('@')[0] if image.sources else 'ROCM_DOCKER_BUILD'}]; it holds ROCm "
        f"{image.rocm}, hipcc and python3"
    )
    if request.flavor == "devel":
        image_why += "; devel adds python3-dev for building extensions (hipcc is already in the image)"
    os_why = "asked with --os" if request.os else "the newest Ubuntu with a rocm/dev image that fits"
    check_preflight_python(request, python, f"{image.os}'s Python")
    preflight = command_choice(
        request,
        "gpudoctor check --require-gpu --format text",
        "a preflight: exit 0 only when the container sees a usable GPU (run with the device flags above)",
    )
    choices = (
        Choice("host ROCm", host or "unknown", host_why),
        Choice("base OS", image.os, os_why),
        Choice("base image", image.reference, image_why),
        build.choice,
        Choice("python", f"{python} ({image.os}'s python3)", "the base image's own python3, in a venv"),
        source_choice(request),
        preflight,
    )
    fields = build_fields(request, build, preflight.chosen, image.reference)
    fields["header"] = _header(request, choices, host)
    fields["preflight_block"] = preflight_block(request, python)
    packages = ["ca-certificates", "python3", "python3-venv"]
    if request.flavor == "devel":
        packages.append("python3-dev")
    fields["apt_packages"] = " ".join(packages)
    text = string.Template(load_template("Dockerfile.rocm.tmpl")).substitute(fields)
    return GeneratedFile(text=text, choices=choices, kind="dockerfile")


def _coverage_notes(gfx_targets: tuple[str, ...], variant: str) -> list[str]:
    """A sentence for each of the machine's GPU targets the wheel is known to carry no code for (kb.rocm_targets);
    nothing where that is unknown."""
    from gpudoctor.kb.rocm_targets import in_torch_wheels, override_for

    notes = []
    for gfx in gfx_targets:
        if in_torch_wheels(gfx, variant) is False:
            override = override_for(gfx)
            notes.append(
                f"the {variant} wheels carry no code for {gfx} (hipErrorNoBinaryForGpu at first use)"
                + (f"; the workaround people use is HSA_OVERRIDE_GFX_VERSION={override}" if override else "")
            )
    return notes


def _regenerate(request: DockerfileRequest, host: str | None) -> str:
    words = ["gpudoctor", "dockerfile", "--vendor", "amd"]
    source = request.target.source or ""
    if source.startswith("snapshot "):
        words += ["--from", source[len("snapshot ") :]]
    if host:
        words += ["--rocm", host]
    framework = request.framework + (f"=={request.framework_version}" if request.framework_version else "")
    words += ["--framework", framework, "--flavor", request.flavor]
    if request.os:
        words += ["--os", request.os]
    words += tail_words(request)
    return " ".join(shlex.quote(word) for word in words)


def _header(request: DockerfileRequest, choices: tuple[Choice, ...], host: str | None) -> str:
    from gpudoctor import __version__
    from gpudoctor.generate.inputs import comment_safe

    dates = sorted({rocm_wheels.as_of(), rocm_images.as_of()})
    lines = [
        f"# A torch on AMD GPUs (ROCm) image, written by gpudoctor {__version__} from its knowledge base "
        f"(as of {', '.join(dates)}).",
        f"# Regenerate: {_regenerate(request, host)}",
        "# Build: docker build -t my-image .",
        f"# Run:   docker run --rm {RUN_FLAGS} my-image",
        "#   /dev/kfd is the compute interface of all GPUs and /dev/dri holds one render node per GPU (pass single",
        "#   /dev/dri/renderD<N> nodes instead to limit the GPUs); the groups let the non-root user open them (on newer",
        "#   systems /dev/kfd belongs to group render, whose number the getent finds on the host); --ipc=host and",
        "#   --shm-size 8G give the data loaders shared memory. The host needs the amdgpu driver (amdgpu-dkms).",
        f"#   Optional: {OPTIONAL_FLAGS}",
        "#   (AMD's PyTorch image docs run with these: seccomp=unconfined enables memory mapping, recommended for",
        "#   HPC; SYS_PTRACE lets debuggers and profilers attach).",
        "#",
        "# What was chosen and why:",
    ]
    target = request.target
    if target.amd_gpu_names or target.gfx_targets:
        names = ", ".join(target.amd_gpu_names) or "AMD GPUs"
        gfx = f" ({', '.join(target.gfx_targets)})" if target.gfx_targets else ""
        lines += comment_lines(f"- GPUs: {names}{gfx}", "# ", "#     ")
    for choice in choices:
        lines += comment_lines(f"- {choice.what}: {choice.chosen}", "# ", "#     ")
        lines += comment_lines(choice.why, "#     ", "#     ")
    return "\n".join(comment_safe(line.rstrip(), 1000) for line in lines)
