"""``gpudoctor install-script``: a bash script that sets up the driver, CUDA, cuDNN, the container toolkit and a
framework venv on one distro, every step skipped when already done.

The script is assembled from the shell fragments in ``dockerfiles/install/`` (placeholders ``@@NAME@@``, filled
with shell-quoted values), in a fixed order, so the same request always gives the same text.  The choices (which
driver route, which framework build from which index) come from the knowledge base, the same lookups the
Dockerfile generator uses; the per-distro facts come from ``gpudoctor.generate.distros``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from gpudoctor.generate import distros as D
from gpudoctor.generate.model import Choice, GeneratedFile, GenerationRefused, InstallScriptRequest

_PLACEHOLDER = re.compile(r"@@([A-Z_]+)@@")
_IMPORTS = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


def _template_dir() -> Path:
    """dockerfiles/install: from the installed gpudoctor_dockerfiles package, else the source tree."""
    try:
        from importlib.resources import files

        folder = files("gpudoctor_dockerfiles") / "install"
        if folder.is_dir():
            return Path(str(folder))
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "dockerfiles" / "install"


def _fragment(name: str, **values: str) -> str:
    text = (_template_dir() / name).read_text(encoding="utf-8")

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template {name}: no value for @@{key}@@")
        return values[key]

    return _PLACEHOLDER.sub(fill, text)


def _q(value: str) -> str:
    return shlex.quote(value)


def _major(version: str | None) -> int | None:
    match = re.match(r"\s*(\d+)", version or "")
    return int(match.group(1)) if match else None


def _driver_key(version: str | None) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version or ""))


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


class _Framework:
    """The framework build the venv gets, and the driver it needs."""

    def __init__(
        self,
        label: str,
        requirement: str,
        index_url: str,
        import_name: str,
        floor: str | None,
        cuda_major: int | None,
        why: str,
    ):
        self.label, self.requirement, self.index_url, self.import_name = label, requirement, index_url, import_name
        self.floor, self.cuda_major, self.why = floor, cuda_major, why


def _choose_framework(request: InstallScriptRequest, python: str, os_name: str) -> _Framework | None:
    from gpudoctor import kb

    name = request.framework
    if name is None:
        return None
    if name not in _IMPORTS:
        raise GenerationRefused(f"unknown framework {name!r}: choose torch, tensorflow or jax", nearest="torch")
    driver = request.target.driver_version
    ccs = request.target.compute_capabilities
    if name == "torch":
        choice = kb.choose_torch_wheel(
            driver_version=driver,
            compute_capabilities=ccs,
            python_version=python,
            os=os_name,
            torch_version=request.framework_version,
        )
        if choice.status != "ok" or not choice.requirement:
            raise GenerationRefused(
                "no PyTorch build fits: " + "; ".join(choice.reasons[:2]),
                nearest=f"--for-driver {choice.upgrade_driver_to}" if choice.upgrade_driver_to else None,
            )
        if request.framework_version and choice.torch != _release(request.framework_version):
            raise GenerationRefused(
                f"torch {request.framework_version} has no build that fits this machine",
                nearest=f"--framework torch=={choice.torch}",
            )
        variant = kb.torch_variant(choice.torch, choice.variant)
        cuda = variant.cuda if variant else None
        return _Framework(
            f"torch {choice.torch} {choice.variant}",
            choice.requirement,
            choice.index_url or "",
            "torch",
            kb.wheel_driver_floor(cuda, os_name),
            _major(cuda),
            "; ".join(choice.reasons[:3]),
        )
    if name == "tensorflow":
        tf = kb.choose_tensorflow(
            driver_version=driver, python_version=python, os=os_name, tf_version=request.framework_version
        )
        if tf.status != "ok" or not tf.requirement or not tf.version:
            raise GenerationRefused(
                "no TensorFlow build fits: " + "; ".join(tf.reasons[:2]),
                nearest=f"--for-driver {tf.upgrade_driver_to}" if tf.upgrade_driver_to else None,
            )
        if request.framework_version and not tf.version.startswith(_release(request.framework_version)):
            raise GenerationRefused(
                f"TensorFlow {request.framework_version} does not fit this machine",
                nearest=f"--framework tensorflow=={tf.version}",
            )
        release = kb.tf_release(tf.version)
        floor = (
            release.linux_driver_mvc_floor
            if release and os_name == "linux"
            else (kb.wheel_driver_floor(release.cuda, os_name) if release else None)
        )
        return _Framework(
            f"TensorFlow {tf.version}",
            tf.requirement,
            "",
            "tensorflow",
            floor,
            _major(release.cuda if release else None),
            "; ".join(tf.reasons[:3]),
        )
    # JAX: the pinned release and extra for the driver that will run it; with no driver known, the one the newest
    # floor gives (the driver step installs at least that).
    from gpudoctor.kb.frameworks import jax_extras
    from gpudoctor.kb.jax_releases import choose_jax, jax_releases

    assumed = driver or _newest_floor()
    jax = choose_jax(
        driver_version=assumed,
        python_version=python,
        os=os_name,
        compute_capabilities=ccs,
        jax_version=request.framework_version,
    )
    if jax.upgrade_driver_to and request.driver and os_name == "linux":
        # The loaded driver is too old for any JAX CUDA build, but the driver step upgrades it to this build's floor.
        assumed = _newest_floor()
        jax = choose_jax(
            driver_version=assumed,
            python_version=python,
            os=os_name,
            compute_capabilities=ccs,
            jax_version=request.framework_version,
        )
    if jax.status != "ok" or not jax.requirement or not jax.extra:
        newest = choose_jax(driver_version=assumed, python_version=python, os=os_name, compute_capabilities=ccs)
        if request.framework_version and newest.version:
            nearest = f"--framework jax=={newest.version}"
        elif jax.upgrade_driver_to:
            nearest = f"--for-driver {jax.upgrade_driver_to}"
        elif jax.python_note:  # no release has wheels for this Python: the oldest that gets the newest JAX
            nearest = f"--python {jax_releases()[0].python_min}"
        else:
            nearest = "--framework torch"
        raise GenerationRefused("no JAX build fits: " + "; ".join(jax.reasons[:2]), nearest=nearest)
    row = next((e for e in jax_extras() if e.extra == jax.extra), None)
    why = "; ".join(jax.reasons[:2])
    if jax.python_note:  # the distro's Python holds JAX back: say so, and how to get the newer release
        why += f". {jax.python_note} (--python X.Y makes the venv with another Python)"
    return _Framework(
        f"JAX {jax.version} ({jax.extra})",
        jax.requirement,
        "",
        "jax",
        row.linux_driver_min if row else None,
        row.cuda_major if row else None,
        why,
    )


def _release(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _newest_floor() -> str:
    """The highest minor-version-compatibility floor the knowledge base lists (CUDA 13.x: 580.65.06)."""
    from gpudoctor.kb.torch_wheels import wheel_driver_floor

    floors = [f for f in (wheel_driver_floor(f"{major}.0") for major in range(11, 20)) if f]
    return max(floors, key=_driver_key)


def _toolkit(request: InstallScriptRequest) -> tuple[str, str | None] | None:
    from gpudoctor import kb

    if not request.cuda_toolkit:
        return None
    match = re.fullmatch(r"\s*(\d{1,2})\.(\d{1,2})(?:\.\d+)?\s*", request.cuda_toolkit)
    if not match:
        raise GenerationRefused(f"CUDA toolkit {request.cuda_toolkit[:20]!r} must look like 12.8")
    version = f"{int(match.group(1))}.{int(match.group(2))}"
    need = kb.min_driver_for_cuda(version, "linux")
    if need is None and kb.wheel_driver_floor(version) is None:
        raise GenerationRefused(f"CUDA {version} is not in the knowledge base", nearest="--cuda-toolkit 12.8")
    return version, need or kb.wheel_driver_floor(version)


def _header(
    distro: D.Distro,
    wsl: bool,
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
        "# Choices:",
    ]
    for choice in choices:
        lines.append(f"#   {choice.what}: {choice.chosen}")
        lines.extend(f"#     {part}" for part in _wrap(choice.why, 108))
    lines.append(f"# Knowledge base: as of {as_of}. Sources:")
    own = ("CUDA_REPO",) if wsl else distro.sources  # inside WSL no driver source applies
    used = sorted({*own, *sources, *(("WSL_GUIDE",) if wsl else ())})
    for key in used:
        lines.extend(f"#   {part}" for part in _wrap(f"[{key}] {D.SOURCES[key]}", 112))
    lines.append(f"# Regenerate: {_regenerate(request, distro, wsl)}")
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


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
    framework = request.framework or "none"
    parts.append(
        f"--framework {framework}"
        + (f"=={request.framework_version}" if request.framework_version and request.framework else "")
    )
    if request.python:
        parts.append(f"--python {request.python}")
    if request.venv != "~/.venvs/gpu":
        parts.append(f"--venv {shlex.quote(request.venv)}")
    return " ".join(parts)


def _venv_default(path: str) -> str:
    """'~/x' -> "${HOME}"/x (the tilde does not expand inside ${VAR:-...}); other paths shell-quoted."""
    if path == "~":
        return '"${HOME}"'
    if path.startswith("~/"):
        return '"${HOME}"/' + _q(path[2:])
    return _q(path)


def _driver_fragment(distro: D.Distro, wsl: bool, need: str | None, ccs: tuple[str, ...]) -> tuple[str, Choice]:
    if wsl:
        return _fragment("driver-wsl.sh"), Choice("driver", "none (WSL)", D.SOURCES["WSL_GUIDE"])
    # Open kernel modules need Turing (7.5) or newer; older GPUs get the proprietary flavour.
    old_gpu = any(_driver_key(cc) < (7, 5) for cc in ccs if _driver_key(cc))
    why_need = f"at least {need}" if need else "no framework or toolkit floor: the distro's default"
    if distro.driver_default == "debian" and (need is None or (_major(need) or 0) <= D.DEBIAN12_DRIVER_BRANCH):
        package = "nvidia-driver firmware-misc-nonfree"
        text = _fragment(
            "driver-debian.sh", DRIVER_SOURCE="DEB12_DRIVER", HEADERS=distro.headers, DRIVER_PACKAGE=package
        )
        return text, Choice(
            "driver",
            f"Debian's nvidia-driver (R{D.DEBIAN12_DRIVER_BRANCH}, DKMS)",
            f"{why_need}; Debian 12 ships branch {D.DEBIAN12_DRIVER_BRANCH} [DEB12_DRIVER]",
        )
    if distro.driver_default == "ubuntu-drivers" and need is None:
        text = _fragment("driver-ubuntu-drivers.sh", DRIVER_SOURCE="ubuntu-drivers-common", HEADERS=distro.headers)
        return text, Choice("driver", "ubuntu-drivers install", why_need)
    if distro.family == "apt":
        package = "cuda-drivers" if old_gpu else "nvidia-open"
        text = _fragment(
            "driver-nvidia-apt.sh", DRIVER_SOURCE="DRV_GUIDE", HEADERS=distro.headers, DRIVER_PACKAGE=package
        )
        flavour = "proprietary modules for a pre-Turing GPU" if old_gpu else "open kernel modules"
        return text, Choice(
            "driver",
            f"{package} from NVIDIA's {distro.repo} repository",
            f"{why_need}; NVIDIA's current driver meets it; {flavour} [DRV_GUIDE]",
        )
    stream, package = ("latest-dkms", "cuda-drivers") if old_gpu else ("open-dkms", "nvidia-open")
    text = _fragment(
        "driver-nvidia-dnf.sh",
        DRIVER_SOURCE="DRV_GUIDE",
        HEADERS=distro.headers,
        DRIVER_PACKAGE=package,
        STREAM=stream,
        EPEL=_epel(distro),
    )
    return text, Choice(
        "driver",
        f"{package} (dnf module nvidia-driver:{stream}) from NVIDIA's {distro.repo} repository",
        f"{why_need}; NVIDIA's current driver meets it [DRV_GUIDE]",
    )


def _epel(distro: D.Distro) -> str:
    """DKMS comes from EPEL on RHEL-likes: Rocky/Alma ship epel-release; on RHEL it is a subscription step."""
    if distro.epel is None:
        return "  return 0"
    crb = "crb" if distro.version_id == "9" else "powertools"
    if distro.epel == "rhel":
        return (
            "  if pkg_installed epel-release; then\n    return 0\n  fi\n"
            '  skip driver "DKMS needs EPEL: enable CodeReady Builder (subscription-manager repos --enable '
            f"codeready-builder-for-rhel-{distro.version_id}-\\$(arch)-rpms) and install epel-release per "
            'https://docs.fedoraproject.org/en-US/epel/, then run this again"\n  return 1'
        )
    return (
        "  if pkg_installed epel-release; then\n    return 0\n  fi\n"
        f"  pkg_install epel-release dnf-plugins-core\n  as_root dnf config-manager --set-enabled {crb}"
    )


def generate_install_script(request: InstallScriptRequest) -> GeneratedFile:
    """The install script for ``request``, or GenerationRefused saying why not and what would work."""
    from gpudoctor.kb.loading import _load

    distro, wsl = _distro(request)
    os_name = "wsl" if wsl else "linux"
    python = request.python or distro.python_version
    python_bin = f"python{request.python}" if request.python else distro.python
    python_packages = (
        ((f"python{request.python}-venv",) if distro.family == "apt" else (f"python{request.python}",))
        if request.python
        else distro.python_packages
    )
    framework = _choose_framework(request, python, os_name)
    toolkit = _toolkit(request)
    choices: list[Choice] = [
        Choice(
            "distro",
            f"{'WSL2 ' if wsl else ''}{distro.name}",
            "--distro" if request.distro else "this machine's /etc/os-release",
        )
    ]

    floors = [
        (framework.floor, f"{framework.label} needs it") if framework and framework.floor else None,
        (toolkit[1], f"CUDA {toolkit[0]} needs it") if toolkit and toolkit[1] else None,
    ]
    floors = [f for f in floors if f]
    need, need_why = max(floors, key=lambda f: _driver_key(f[0])) if floors else (None, "")

    steps: list[str] = []
    body: list[str] = [_fragment("pm-apt.sh" if distro.family == "apt" else "pm-dnf.sh")]
    needs_repo = (request.driver and not wsl and distro.driver_default == "nvidia-repo") or toolkit or request.cudnn
    if request.driver and not wsl and distro.family == "apt" and distro.driver_default != "nvidia-repo":
        needs_repo = needs_repo or (
            need is not None
            and not (distro.driver_default == "debian" and (_major(need) or 0) <= D.DEBIAN12_DRIVER_BRANCH)
        )
    if needs_repo:
        if distro.family == "apt":
            body.append(
                _fragment(
                    "repo-apt.sh",
                    KEY_SOURCE="KEY_ROTATION",
                    REPO=distro.repo,
                    CUDA_REPO_BASE=f"{D.CUDA_REPO_BASE}/{distro.repo}",
                    CUDA_KEY=D.CUDA_APT_FINGERPRINT,
                )
            )
        else:
            body.append(
                _fragment(
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
        text, choice = _driver_fragment(distro, wsl, need, request.target.compute_capabilities)
        if not wsl:
            body.append(
                _fragment(
                    "driver-common.sh",
                    DRIVER_MIN=_q(need or ""),
                    DRIVER_WHY=f"{need} ({need_why})" if need else "none (no framework or toolkit asked for one)",
                )
            )
        body.append(text)
        choices.append(choice)
    if toolkit:
        steps.append("toolkit")
        package = f"cuda-toolkit-{toolkit[0].replace('.', '-')}"
        body.append(_fragment("toolkit.sh", TOOLKIT=toolkit[0], TOOLKIT_PACKAGE=package))
        choices.append(Choice("CUDA toolkit", package, f"asked for; the driver needs >= {toolkit[1]} [CUDA_REPO]"))
    if request.cudnn:
        major = _major(toolkit[0]) if toolkit else (framework.cuda_major if framework else None)
        if major is None or major not in (11, 12, 13):
            raise GenerationRefused(
                "cuDNN needs a CUDA major to match: none known from the request", nearest="--cuda-toolkit 12.8 --cudnn"
            )
        steps.append("cudnn")
        package = f"cudnn9-cuda-{major}"
        body.append(_fragment("cudnn.sh", CUDNN_MAJOR=str(major), CUDNN_PACKAGE=package))
        choices.append(
            Choice(
                "cuDNN",
                package,
                f"cuDNN 9 for CUDA {major}.x "
                f"({'the toolkit' if toolkit else framework.label if framework else ''})"
                " [CUDNN_GUIDE]",
            )
        )
    if request.container_toolkit:
        steps.append("container")
        if distro.family == "apt":
            line = f"deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] {D.CTK_APT_LINE}"
            body.append(
                _fragment(
                    "container-apt.sh",
                    KEY_SOURCE="CTK_KEY",
                    CTK_KEY_URL=D.CTK_KEY_URL,
                    CTK_KEY=D.CTK_FINGERPRINT,
                    CTK_APT_LINE=_q(line),
                )
            )
        else:
            body.append(
                _fragment(
                    "container-dnf.sh",
                    KEY_SOURCE="CTK_KEY",
                    CTK_KEY_URL=D.CTK_KEY_URL,
                    CTK_KEY=D.CTK_FINGERPRINT,
                    CTK_RPM_REPO=D.CTK_RPM_REPO,
                )
            )
        body.append(_fragment("container.sh"))
        choices.append(Choice("container toolkit", "nvidia-container-toolkit", "asked for [CTK_GUIDE]"))
    if framework:
        steps.append("python")
        body.append(
            _fragment(
                "python.sh",
                FRAMEWORK_LABEL=framework.label,
                PYTHON=_q(python_bin),
                REQUIREMENT=_q(framework.requirement),
                INDEX_URL=_q(framework.index_url),
                IMPORT=framework.import_name,
                PYTHON_PACKAGES=" ".join(python_packages),
            )
        )
        index = framework.index_url or "PyPI"
        choices.append(Choice(framework.import_name, f"{framework.requirement} from {index}", framework.why))
    if not steps:
        raise GenerationRefused("nothing to install: every step is off", nearest="--framework torch")

    as_of = str(_load("driver_cuda.json").get("as_of") or "unknown")
    common = _fragment(
        "common.sh",
        TARGET_NAME=_q(("WSL2 " if wsl else "") + distro.name),
        OS_IDS=_q(" ".join(distro.os_ids)),
        OS_VERSION=_q(distro.version_id),
        STEPS=_q(" ".join(steps)),
        VENV=_venv_default(request.venv),
    )
    repo_sources = ("KEY_ROTATION",) if distro.family == "apt" else ("KEY_ROTATION", "RPM_KEY")
    sources = (
        *(repo_sources if needs_repo else ()),
        *(("CTK_GUIDE", "CTK_KEY") if request.container_toolkit else ()),
        *(("CUDNN_GUIDE",) if request.cudnn else ()),
    )
    text = _header(distro, wsl, request, choices, steps, as_of, sources) + common + "".join(body) + _fragment("main.sh")
    return GeneratedFile(text=text, choices=tuple(choices), kind="install-script")


__all__ = ["generate_install_script"]
