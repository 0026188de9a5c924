"""``gpudoctor install-script``: a bash script that sets up the driver, CUDA, cuDNN, the container toolkit and a
framework venv on one distro, every step skipped when already done.

The script is assembled from the shell fragments in ``dockerfiles/install/`` (placeholders ``@@NAME@@``, filled
with shell-quoted values), in a fixed order, so the same request always gives the same text.  The choices (which
driver route, which framework build from which index) come from the knowledge base, the same lookups the
Dockerfile generator uses; the per-distro facts come from ``gpudoctor.kb.distros`` and the driver step (headers,
packages, module stream, EPEL) from the fix catalogue ``gpudoctor.kb.fix_catalogue``, the same steps the checks'
fixes print.  The driver branch and kernel-module flavour come from the GPUs present (``driver_branches.driver_needs``)
and are pinned in the package name or module stream; inside a container (known when the script is made, or found
when it runs) the driver step installs nothing and says what to do on the host.
"""

from __future__ import annotations

import re

from gpudoctor.generate import distros as D
from gpudoctor.generate.inputs import comment_safe, safe_request
from gpudoctor.generate.install_fragments import (
    HOST_STEPS,
    container_driver_step,
    driver_fragment,
    fragment,
    shell_quote,
    venv_default,
    wrap_words,
)
from gpudoctor.generate.install_framework import choose_framework, choose_toolkit, framework_words
from gpudoctor.generate.model import Choice, GeneratedFile, GenerationRefused, InstallScriptRequest
from gpudoctor.kb import fix_catalogue
from gpudoctor.kb.driver_branches import driver_needs
from gpudoctor.kb.versions import major, version_key


def _distro(request: InstallScriptRequest) -> tuple[D.Distro, bool]:
    target = request.target
    token = request.distro or D.distro_token(target.distro_id, target.distro_version)
    known = ", ".join(D.known_distros())
    if token is None:
        seen = " ".join(filter(None, (target.distro_id, target.distro_version))) or "unknown"
        raise GenerationRefused(
            f"this machine's distro ({seen}) is not one the install script supports ({known}, or wsl-<one of those>)",
            nearest="--distro ubuntu24.04",
        )
    found = D.lookup(token)
    if found is None:
        raise GenerationRefused(
            f"unknown distro {str(token)[:40]!r}: choose one of {known}, or wsl-<one of those>",
            nearest="--distro ubuntu24.04",
        )
    distro, wsl = found
    return distro, wsl or target.wsl


def _header(
    distro: D.Distro,
    wsl: bool,
    container: str | None,
    request: InstallScriptRequest,
    choices: list[Choice],
    steps: list[str],
    as_of: str,
    sources: tuple[str, ...],
) -> str:
    target = request.target
    lines = [
        "#!/usr/bin/env bash",
        f"# Install script for {'WSL2 ' if wsl else ''}{distro.name}, written by gpudoctor install-script.",
        "#",
        f"# Steps: {' '.join(steps)}. Each one checks first and is skipped when already done; run it again any time.",
        "#   --dry-run prints every command without running it; --yes runs unattended; --only STEP runs one step;",
        "#   --help lists the options. sudo is used only when not root. Nothing downloaded is piped into a shell,",
        "#   and every repository key is checked against the fingerprint NVIDIA publishes before it is trusted.",
        "#",
        f"# Machine: {target.source}; driver {target.driver_version or 'unknown'}; "
        f"GPUs {', '.join(target.gpu_names) or 'unknown'}"
        + (f" (compute capability {', '.join(target.compute_capabilities)})" if target.compute_capabilities else ""),
    ]
    if container:
        where = "a container of an unknown kind" if container == "unknown" else f"a {container} container"
        text = (
            f"Container: made inside {where}, which shares the host's kernel: this script installs no driver, "
            f"kernel headers or reboot here. Instead, {HOST_STEPS}."
        )
        lines += [f"# {part}" if i == 0 else f"#   {part}" for i, part in enumerate(wrap_words(text, 110))]
    lines.append("# Choices:")
    for choice in choices:
        lines.append(f"#   {choice.what}: {choice.chosen}")
        lines.extend(f"#     {part}" for part in wrap_words(choice.why, 108))
    lines.append(f"# Knowledge base: as of {as_of}. Sources:")
    own = ("CUDA_REPO",) if wsl else distro.sources  # inside WSL no driver source applies
    cited = {key for choice in choices for key in _CITED.findall(f"{choice.chosen} {choice.why}")}
    used = sorted({*own, *sources, *(("WSL_GUIDE",) if wsl else ()), *(cited & _kb_sources().keys())})
    for key in used:
        lines.extend(f"#   {part}" for part in wrap_words(f"[{key}] {D.SOURCES.get(key) or _kb_sources()[key]}", 112))
    lines.append(f"# Regenerate: {_regenerate(request, distro, wsl)}")
    # Every value was checked at the boundary (inputs.safe_request); no line of the header can end early anyway.
    return "\n".join(comment_safe(line, 1000) for line in lines) + "\n"


_CITED = re.compile(r"\[([A-Z][A-Z0-9_]{1,20})\]")


def _kb_sources() -> dict[str, str]:
    """The knowledge base's driver/CUDA sources ([ARCH], [BRANCH], [KMOD], ...) the choices cite: title and URL."""
    from gpudoctor.kb.loading import _driver_data

    out = {}
    for key, source in (_driver_data().get("sources") or {}).items():
        if isinstance(source, dict) and key not in D.SOURCES:
            out[str(key)] = f"{source.get('title', '')} ({source.get('url', '')})"
    return out


def _regenerate(request: InstallScriptRequest, distro: D.Distro, wsl: bool) -> str:
    parts = ["gpudoctor install-script", f"--distro {'wsl-' if wsl else ''}{distro.token}"]
    if request.target.driver_version:
        parts.append(f"--for-driver {request.target.driver_version}")
    if not request.driver:
        parts.append("--no-driver")
    if request.cuda_toolkit:
        parts.append(f"--cuda-toolkit {request.cuda_toolkit}")
    if request.cudnn:
        parts.append("--cudnn")
    if request.container_toolkit:
        parts.append("--container-toolkit")
    parts += framework_words(request)
    return " ".join(parts)


def generate_install_script(request: InstallScriptRequest) -> GeneratedFile:
    """The install script for ``request``, or GenerationRefused saying why not and what would work."""
    from gpudoctor.kb.loading import _load

    request = safe_request(request)
    from gpudoctor.generate.install_rocm import rocm_install_script, wants_rocm_script

    if wants_rocm_script(request):
        return rocm_install_script(request)
    distro, wsl = _distro(request)
    container = None if wsl else request.target.container  # WSL has its own guard
    os_name = "wsl" if wsl else "linux"
    python = request.python or distro.python_version
    python_bin = f"python{request.python}" if request.python else distro.python
    python_packages = (
        ((f"python{request.python}-venv",) if distro.family == "apt" else (f"python{request.python}",))
        if request.python
        else distro.python_packages
    )
    framework = choose_framework(request, python, os_name)
    toolkit = choose_toolkit(request)
    choices: list[Choice] = [
        Choice(
            "distro",
            f"{'WSL2 ' if wsl else ''}{distro.name}",
            "--distro" if request.distro else "this machine's /etc/os-release",
        )
    ]

    floors: list[tuple[str, str]] = []
    if framework and framework.floor:
        floors.append((framework.floor, f"{framework.label} needs it"))
    if toolkit and toolkit[1]:
        floors.append((toolkit[1], f"CUDA {toolkit[0]} needs it"))
    need: str | None
    need, need_why = max(floors, key=lambda f: version_key(f[0])) if floors else (None, "")

    steps: list[str] = []
    body: list[str] = [fragment("pm-apt.sh" if distro.family == "apt" else "pm-dnf.sh")]
    route, needs = None, None
    if request.driver and not wsl and not container:
        target = request.target
        needs = driver_needs(target.compute_capabilities, need, need_why)
        if needs.problem:
            raise GenerationRefused(f"no NVIDIA driver fits these GPUs: {needs.problem}", nearest="--no-driver")
        route = fix_catalogue.driver_route(distro, needs)
    driver_repo = route is not None and fix_catalogue.uses_nvidia_repository(route)
    needs_repo = driver_repo or toolkit or request.cudnn
    if needs_repo:
        if distro.family == "apt":
            body.append(
                fragment(
                    "repo-apt.sh",
                    KEY_SOURCE="KEY_ROTATION",
                    REPO=distro.repo,
                    CUDA_REPO_BASE=f"{D.CUDA_REPO_BASE}/{distro.repo}",
                    CUDA_KEY=D.CUDA_APT_FINGERPRINT,
                )
            )
        else:
            body.append(
                fragment(
                    "repo-dnf.sh",
                    KEY_SOURCE="RPM_KEY",
                    REPO=distro.repo,
                    CUDA_REPO_BASE=f"{D.CUDA_REPO_BASE}/{distro.repo}",
                    CUDA_KEY=D.CUDA_RPM_FINGERPRINT,
                    CUDA_KEY_ID=D.CUDA_RPM_KEY_ID,
                )
            )
    if request.driver:
        steps.append("driver")
        if wsl:
            text, choice = fragment("driver-wsl.sh"), Choice("driver", "none (WSL)", D.SOURCES["WSL_GUIDE"])
        elif container:
            text, choice = container_driver_step(container)
        else:
            assert route is not None and needs is not None
            text, choice = driver_fragment(distro, route, needs, need)
            body.append(
                fragment(
                    "driver-common.sh",
                    DRIVER_MIN=shell_quote(need or ""),
                    DRIVER_WHY=f"{need} ({need_why})" if need else "none (no framework or toolkit asked for one)",
                    HOST_STEPS=shell_quote(HOST_STEPS),
                )
            )
        body.append(text)
        choices.append(choice)
    if toolkit:
        steps.append("toolkit")
        package = f"cuda-toolkit-{toolkit[0].replace('.', '-')}"
        body.append(fragment("toolkit.sh", TOOLKIT=toolkit[0], TOOLKIT_PACKAGE=package))
        choices.append(Choice("CUDA toolkit", package, f"{toolkit[2]} [CUDA_REPO]"))
    if request.cudnn:
        cuda_major = major(toolkit[0]) if toolkit else (framework.cuda_major if framework else None)
        if cuda_major is None or cuda_major not in (11, 12, 13):
            raise GenerationRefused(
                "cuDNN needs a CUDA major to match: none known from the request", nearest="--cuda-toolkit 12.8 --cudnn"
            )
        steps.append("cudnn")
        package = f"cudnn9-cuda-{cuda_major}"
        body.append(fragment("cudnn.sh", CUDNN_MAJOR=str(cuda_major), CUDNN_PACKAGE=package))
        choices.append(
            Choice(
                "cuDNN",
                package,
                f"cuDNN 9 for CUDA {cuda_major}.x "
                f"({'the toolkit' if toolkit else framework.label if framework else ''})"
                " [CUDNN_GUIDE]",
            )
        )
    if request.container_toolkit:
        steps.append("container")
        if distro.family == "apt":
            line = f"deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] {D.CTK_APT_LINE}"
            body.append(
                fragment(
                    "container-apt.sh",
                    KEY_SOURCE="CTK_KEY",
                    CTK_KEY_URL=D.CTK_KEY_URL,
                    CTK_KEY=D.CTK_FINGERPRINT,
                    CTK_APT_LINE=shell_quote(line),
                )
            )
        else:
            body.append(
                fragment(
                    "container-dnf.sh",
                    KEY_SOURCE="CTK_KEY",
                    CTK_KEY_URL=D.CTK_KEY_URL,
                    CTK_KEY=D.CTK_FINGERPRINT,
                    # NVIDIA's .repo file sits beside the per-architecture folders its baseurl names.
                    CTK_RPM_BASEURL=D.CTK_RPM_REPO.rsplit("/", 1)[0] + "/$basearch",
                )
            )
        body.append(fragment("container.sh"))
        choices.append(Choice("container toolkit", "nvidia-container-toolkit", "asked for [CTK_GUIDE]"))
    if framework:
        steps.append("python")
        body.append(
            fragment(
                "python.sh",
                FRAMEWORK_LABEL=framework.label,
                PYTHON=shell_quote(python_bin),
                REQUIREMENT=shell_quote(framework.requirement),
                INDEX_URL=shell_quote(framework.index_url),
                IMPORT=framework.import_name,
                PYTHON_PACKAGES=" ".join(python_packages),
            )
        )
        index = framework.index_url or "PyPI"
        choices.append(Choice(framework.import_name, f"{framework.requirement} from {index}", framework.why))
    if not steps:
        raise GenerationRefused("nothing to install: every step is off", nearest="--framework torch")

    as_of = str(_load("driver_cuda.json").get("as_of") or "unknown")
    common = fragment(
        "common.sh",
        TARGET_NAME=shell_quote(("WSL2 " if wsl else "") + distro.name),
        OS_IDS=shell_quote(" ".join(distro.os_ids)),
        OS_VERSION=shell_quote(distro.version_id),
        STEPS=shell_quote(" ".join(steps)),
        VENV=venv_default(request.venv),
        WHAT="NVIDIA GPU software",
    )
    repo_sources = ("KEY_ROTATION",) if distro.family == "apt" else ("KEY_ROTATION", "RPM_KEY")
    sources = (
        *(repo_sources if needs_repo else ()),
        *(("CTK_GUIDE", "CTK_KEY") if request.container_toolkit else ()),
        *(("CUDNN_GUIDE",) if request.cudnn else ()),
    )
    if route is not None and route.route in ("nvidia-apt", "nvidia-dnf"):
        sources = (*sources, "DNF_STREAMS" if route.route == "nvidia-dnf" else "APT_BRANCHES")
    if container:
        sources = (*sources, "CTK_GUIDE")
    header = _header(distro, wsl, container, request, choices, steps, as_of, sources)
    text = header + common + "".join(body) + fragment("main.sh", REBOOT_WHAT="the NVIDIA kernel driver")
    return GeneratedFile(text=text, choices=tuple(choices), kind="install-script")


__all__ = ["generate_install_script"]
