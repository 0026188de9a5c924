"""``gpudoctor install-script`` for AMD GPUs: the ROCm stack on the distros AMD's docs list.

Asked for with ``--vendor amd`` or ``--rocm VERSION``, or chosen when the machine has AMD GPUs and no NVIDIA ones.
Steps (each checks first, so a second run skips what is done):

- ``driver``: the kernel headers and ``amdgpu-dkms`` (never in WSL or a container: the host's driver serves it);
- ``rocm``: the ``rocm`` packages, the ``render`` and ``video`` groups, and a check with ``rocminfo``;
- ``python``: a venv with torch from the ROCm wheel index that matches the ROCm release (``kb.rocm_wheels``).

Route: AMD's package-manager ("native") install [ROCM_NATIVE]: the signing key is downloaded, checked against its
full fingerprint (``kb.rocm_install``) and only then trusted, so apt/dnf check every package against it.  AMD's
``amdgpu-install`` package does the same through a package that is itself downloaded without a signature this
script could check; its URL is named in the header for reference, never fetched.  SLES is left out: AMD's SLES
steps install that package with ``--no-gpg-checks``.
"""

from __future__ import annotations

from gpudoctor.generate import distros as D
from gpudoctor.generate.inputs import comment_safe
from gpudoctor.generate.install_fragments import epel_body, fragment, shell_quote, shell_words, venv_default, wrap_words
from gpudoctor.generate.install_framework import framework_words
from gpudoctor.generate.model import Choice, GeneratedFile, GenerationRefused, InstallScriptRequest
from gpudoctor.kb import rocm_install, rocm_wheels

ROCM_DISTROS = ("ubuntu22.04", "ubuntu24.04", "rhel8", "rhel9", "rocky8", "rocky9", "alma8", "alma9")
HOST_STEPS = (
    "on the host: install amdgpu-dkms (gpudoctor install-script --vendor amd there) and start this container with "
    '--device=/dev/kfd --device=/dev/dri --group-add video --group-add "$(getent group render | cut -d: -f3)"'
)


def wants_rocm_script(request: InstallScriptRequest) -> bool:
    if request.vendor == "nvidia":
        return False
    if request.vendor == "amd" or request.rocm:
        return True
    return request.target.gpu_vendor == "amd"


def _distro(request: InstallScriptRequest) -> D.Distro:
    target = request.target
    token = request.distro or D.distro_token(target.distro_id, target.distro_version)
    supported = ", ".join(ROCM_DISTROS)
    found = D.lookup(token) if token else None
    if found is None or found[1] or found[0].token not in ROCM_DISTROS or target.wsl:
        seen = token or " ".join(filter(None, (target.distro_id, target.distro_version))) or "unknown"
        raise GenerationRefused(
            f"the ROCm install script covers the distros AMD's ROCm docs list: {supported} (not {comment_safe(seen, 40)}"
            "; SLES is left out: AMD's steps skip its package signature check)",
            "--vendor amd --distro ubuntu24.04",
        )
    return found[0]


def _release(request: InstallScriptRequest) -> rocm_install.RocmRelease:
    release = rocm_install.rocm_release(request.rocm)
    if release is None:
        known = ", ".join(r.rocm for r in rocm_install.rocm_releases())
        raise GenerationRefused(
            f"ROCm {comment_safe(request.rocm, 20)} is not one the knowledge base has install steps for ({known})",
            f"--rocm {rocm_install.rocm_releases()[0].rocm}" if rocm_install.rocm_releases() else None,
        )
    return release


def _rhel_point(distro: D.Distro, release: rocm_install.RocmRelease, request: InstallScriptRequest) -> tuple[str, str]:
    """(the RHEL point release AMD's amdgpu repository path names, why): the machine's when AMD lists it."""
    seen = request.target.distro_version or ""
    points = [p for p in release.rhel if p.split(".", 1)[0] == distro.version_id]
    if not points:
        raise GenerationRefused(f"AMD's ROCm {release.rocm} docs list no RHEL {distro.version_id} release", None)
    if seen in points:
        return seen, f"this machine's {distro.version_id}.x release"
    return points[0], (
        f"the newest RHEL {distro.version_id} point release AMD lists for ROCm {release.rocm} "
        f"({', '.join(points)}); the amdgpu repository path names it"
    )


def _python_choice(
    request: InstallScriptRequest, distro: D.Distro, release: rocm_install.RocmRelease
) -> tuple[str, str, str, Choice] | None:
    """(requirement, index URL, python binary, choice) of the venv's torch, or None without a framework."""
    from gpudoctor import kb

    if request.framework is None:
        return None
    if request.framework != "torch":
        raise GenerationRefused(
            f"ROCm install scripts install torch only; {request.framework} on ROCm comes from AMD's own wheels, "
            "which the knowledge base does not hold yet",
            "--vendor amd --framework torch",
        )
    chosen = rocm_wheels.newest_variant_for(release.rocm, request.framework_version)
    if chosen is None:
        raise GenerationRefused(
            f"torch {comment_safe(request.framework_version, 20)} publishes no ROCm wheel for ROCm {release.rocm} "
            "or older",
            "--vendor amd --framework torch",
        )
    torch, variant = chosen
    python = request.python or distro.python_version
    known = kb.torch_release(torch)
    if known is not None and known.supports_python(python) is False:
        raise GenerationRefused(
            f"torch {torch} has no wheels for {distro.name}'s Python {python} ({known.python_min}-{known.python_max})",
            "--framework none",
        )
    requirement = f"torch=={torch}.*"
    index = rocm_wheels.index_url(variant)
    why = (
        f"torch {torch} {variant} is the newest ROCm wheel not newer than ROCm {release.rocm} [P_TI]; "
        f"its wheel brings its own ROCm libraries; Python {python}"
    )
    binary = f"python{request.python}" if request.python else distro.python
    return requirement, index, binary, Choice("torch", f"{requirement} from {index}", why)


def rocm_install_script(request: InstallScriptRequest) -> GeneratedFile:
    """The ROCm install script for ``request`` (already made safe), or GenerationRefused."""
    for flag, asked in (
        ("--cuda-toolkit", request.cuda_toolkit),
        ("--cudnn", request.cudnn),
        ("--container-toolkit", request.container_toolkit),
    ):
        if asked:
            raise GenerationRefused(f"{flag} is NVIDIA's; a ROCm install script has no such step", "--vendor amd")
    distro = _distro(request)
    release = _release(request)
    container = request.target.container
    key_url, fingerprint = rocm_install.signing_key()
    if len(fingerprint) != 40:
        raise GenerationRefused("the knowledge base has no full fingerprint for AMD's signing key", None)
    choices = [
        Choice(
            "distro",
            distro.name,
            ("--distro" if request.distro else "this machine's /etc/os-release")
            + (
                ""
                if distro.family == "apt" or distro.token.startswith("rhel")
                else "; RHEL-compatible: AMD's docs list RHEL"
            ),
        ),
        Choice(
            "ROCm",
            release.rocm,
            ("--rocm" if request.rocm else "the newest release the knowledge base has install steps for")
            + " [ROCM_INST_CONF]",
        ),
    ]
    steps: list[str] = []
    body = [fragment("pm-apt.sh" if distro.family == "apt" else "pm-dnf.sh")]
    body.append(_repo_fragment(distro, release, request, key_url, fingerprint, choices))
    if request.driver:
        steps.append("driver")
        if container:
            where = "a container of an unknown kind" if container == "unknown" else f"a {container} container"
            body.append(fragment("driver-container.sh", WHERE=where, HOST_STEPS=shell_quote(HOST_STEPS)))
            choices.append(Choice("driver", f"none (inside {where})", HOST_STEPS))
        else:
            body.append(_driver_fragment(distro, release))
            choices.append(
                Choice(
                    "driver",
                    f"amdgpu-dkms and the kernel headers ({' '.join(distro_headers(distro))})",
                    "AMD's kernel driver, built by DKMS for the running kernel; skipped in WSL and in containers "
                    "[ROCM_NATIVE] [ROCM_PREREQ]",
                )
            )
    steps.append("rocm")
    body.append(fragment("rocm-stack.sh", ROCM=release.rocm, STACK_SOURCE="ROCM_NATIVE; ROCM_PREREQ; ROCM_POST"))
    choices.append(
        Choice(
            "ROCm stack",
            "rocm, groups render and video, rocminfo",
            "AMD's rocm meta package; usermod -a -G render,video for the user who ran the script [ROCM_PREREQ]; "
            "verified with rocminfo [ROCM_POST]",
        )
    )
    python = _python_choice(request, distro, release)
    if python:
        requirement, index, binary, choice = python
        steps.append("python")
        packages = (
            ((f"python{request.python}-venv",) if distro.family == "apt" else (f"python{request.python}",))
            if request.python
            else distro.python_packages
        )
        body.append(
            fragment(
                "python.sh",
                FRAMEWORK_LABEL=f"{requirement} (ROCm build)",
                PYTHON=shell_quote(binary),
                REQUIREMENT=shell_quote(requirement),
                INDEX_URL=shell_quote(index),
                IMPORT="torch",
                PYTHON_PACKAGES=" ".join(packages),
            )
        )
        choices.append(choice)
    common = fragment(
        "common.sh",
        TARGET_NAME=shell_quote(distro.name),
        OS_IDS=shell_quote(" ".join(distro.os_ids)),
        OS_VERSION=shell_quote(distro.version_id),
        STEPS=shell_quote(" ".join(steps)),
        VENV=venv_default(request.venv),
        WHAT=f"AMD ROCm {release.rocm}",
    )
    header = _header(distro, release, request, choices, steps, container)
    text = header + common + "".join(body) + fragment("main.sh", REBOOT_WHAT="the amdgpu kernel driver")
    return GeneratedFile(text=text, choices=tuple(choices), kind="install-script")


def distro_headers(distro: D.Distro) -> tuple[str, ...]:
    """The kernel packages AMD's prerequisites name for DKMS [ROCM_PREREQ]."""
    if distro.family == "apt":
        return ("linux-headers-$(uname -r)", "linux-modules-extra-$(uname -r)")
    return ("kernel-headers-$(uname -r)", "kernel-devel-$(uname -r)")


def _driver_fragment(distro: D.Distro, release: rocm_install.RocmRelease) -> str:
    if distro.family == "apt":
        epel_function, epel_call = "", ""
    else:
        epel_function = f"\nenable_epel() {{\n{epel_body(distro)}\n}}\n"
        epel_call = "  enable_epel || return 0\n"
    return fragment(
        "rocm-driver.sh",
        DRIVER_SOURCE="ROCM_NATIVE; ROCM_PREREQ",
        HOST_STEPS=shell_quote(HOST_STEPS),
        ROCM=release.rocm,
        HEADERS=shell_words(distro_headers(distro)),
        EPEL_FUNCTION=epel_function,
        EPEL_CALL=epel_call,
    )


def _repo_fragment(
    distro: D.Distro,
    release: rocm_install.RocmRelease,
    request: InstallScriptRequest,
    key_url: str,
    fingerprint: str,
    choices: list[Choice],
) -> str:
    fields = {"repo_version": release.repo_version}
    key_source = "ROCM_NATIVE; ROCM_KEY_854; ROCM_KEY_5268"
    if distro.family == "apt":
        codename = release.ubuntu.get(distro.version_id)
        if codename is None:
            raise GenerationRefused(
                f"AMD's ROCm {release.rocm} docs do not list {distro.name}",
                f"--vendor amd --distro ubuntu{sorted(release.ubuntu)[-1]}" if release.ubuntu else None,
            )
        amdgpu = rocm_install.template("apt_amdgpu").format(codename=codename, **fields)
        rocm = rocm_install.template("apt_rocm").format(codename=codename, **fields)
        installer = rocm_install.amdgpu_install_url(release, "ubuntu", distro.version_id)
        choices.append(
            Choice("repositories", f"{amdgpu.split('] ', 1)[1]}; {rocm.split('] ', 1)[1]}", _route_why(installer))
        )
        return fragment(
            "rocm-repo-apt.sh",
            ROCM=release.rocm,
            KEY_SOURCE=key_source,
            KEY_URL=shell_quote(key_url),
            KEY_FINGERPRINT=fingerprint,
            AMDGPU_LINE=shell_quote(amdgpu),
            ROCM_LINE=shell_quote(rocm),
        )
    point, point_why = _rhel_point(distro, release, request)
    major = distro.version_id
    amdgpu_url = rocm_install.template("dnf_amdgpu").format(os_version=point, **fields)
    rocm_url = rocm_install.template("dnf_rocm").format(os_major=major, **fields)
    key = "gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-rocm"
    amdgpu_lines = ["[amdgpu]", "name=amdgpu", f"baseurl={amdgpu_url}", "enabled=1", "priority=50", "gpgcheck=1", key]
    rocm_lines = [
        f"[ROCm-{release.repo_version}]",
        f"name=ROCm{release.repo_version}",
        f"baseurl={rocm_url}",
        "enabled=1",
        "priority=50",
        "gpgcheck=1",
        key,
    ]
    installer = rocm_install.amdgpu_install_url(release, "rhel", point)
    choices.append(
        Choice("repositories", f"{amdgpu_url}; {rocm_url}", f"RHEL {point}: {point_why}; {_route_why(installer)}")
    )
    return fragment(
        "rocm-repo-dnf.sh",
        ROCM=release.rocm,
        KEY_SOURCE=key_source,
        KEY_URL=shell_quote(key_url),
        KEY_FINGERPRINT=fingerprint,
        AMDGPU_REPO=" ".join(shell_quote(line) for line in amdgpu_lines),
        ROCM_REPO=" ".join(shell_quote(line) for line in rocm_lines),
    )


def _route_why(installer: str | None) -> str:
    text = (
        "AMD's package-manager install: repo.radeon.com's key is checked against its full fingerprint before it is "
        "trusted, then apt/dnf check every package against it [ROCM_NATIVE]"
    )
    if installer:
        text += (
            f". AMD's amdgpu-install package ({installer}) sets up the same repositories but is itself downloaded "
            "without a signature this script could check, so it is not used [ROCM_AMDGPU_INSTALL]"
        )
    return text


def _regenerate(request: InstallScriptRequest, distro: D.Distro, release: rocm_install.RocmRelease) -> str:
    parts = ["gpudoctor install-script --vendor amd", f"--rocm {release.rocm}", f"--distro {distro.token}"]
    if not request.driver:
        parts.append("--no-driver")
    parts += framework_words(request)
    return " ".join(parts)


def _header(
    distro: D.Distro,
    release: rocm_install.RocmRelease,
    request: InstallScriptRequest,
    choices: list[Choice],
    steps: list[str],
    container: str | None,
) -> str:
    target = request.target
    gpus = ", ".join(target.amd_gpu_names) or "unknown"
    gfx = f" ({', '.join(target.gfx_targets)})" if target.gfx_targets else ""
    lines = [
        "#!/usr/bin/env bash",
        f"# Install script for AMD ROCm {release.rocm} on {distro.name}, written by gpudoctor install-script.",
        "#",
        f"# Steps: {' '.join(steps)}. Each one checks first and is skipped when already done; run it again any time.",
        "#   --dry-run prints every command without running it; --yes runs unattended; --only STEP runs one step;",
        "#   --help lists the options. sudo is used only when not root. Nothing downloaded is piped into a shell,",
        "#   and AMD's repository key is checked against its full fingerprint before it is trusted.",
        "#",
        f"# Machine: {target.source}; ROCm installed: {target.rocm_version or 'unknown'}; AMD GPUs: {gpus}{gfx}",
    ]
    if container:
        where = "a container of an unknown kind" if container == "unknown" else f"a {container} container"
        text = f"Container: made inside {where}, which shares the host's kernel: no driver step here. Instead, {HOST_STEPS}."
        lines += [f"# {part}" if i == 0 else f"#   {part}" for i, part in enumerate(wrap_words(text, 110))]
    lines.append("# Choices:")
    for choice in choices:
        lines.append(f"#   {choice.what}: {choice.chosen}")
        lines.extend(f"#     {part}" for part in wrap_words(choice.why, 108))
    lines.append(f"# Knowledge base: as of {rocm_install.as_of()}. Sources:")
    known = {**rocm_install.sources()}
    known.setdefault("P_TI", "pytorch/test-infra generate_binary_build_matrix.py ROCM_ARCHES_DICT per release")
    for key in sorted(known):
        lines.extend(f"#   {part}" for part in wrap_words(f"[{key}] {known[key]}", 112))
    lines.append(f"# Regenerate: {_regenerate(request, distro, release)}")
    return "\n".join(comment_safe(line, 1000) for line in lines) + "\n"
