"""The install script's shell fragments (``dockerfiles/install/``, placeholders ``@@NAME@@``): loading and filling
them, and the driver step filled from the fix catalogue's route for the distro, floor and GPUs.  What the script
does at run time (the container guard, a dry run's "would") lives in the fragments themselves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from gpudoctor.generate import distros as D
from gpudoctor.generate.model import Choice, GenerationRefused
from gpudoctor.kb import fix_catalogue
from gpudoctor.kb.driver_branches import DriverNeeds

_PLACEHOLDER = re.compile(r"@@([A-Z_]+)@@")


def template_dir() -> Path:
    """dockerfiles/install: from the installed gpudoctor_dockerfiles package, else the source tree."""
    try:
        from importlib.resources import files

        folder = files("gpudoctor_dockerfiles") / "install"
        if folder.is_dir():
            return Path(str(folder))
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parents[2] / "dockerfiles" / "install"


def fragment(name: str, **values: str) -> str:
    text = (template_dir() / name).read_text(encoding="utf-8")

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template {name}: no value for @@{key}@@")
        return values[key]

    return _PLACEHOLDER.sub(fill, text)


def shell_quote(value: str) -> str:
    return shlex.quote(value)


def venv_default(path: str) -> str:
    """'~/x' -> "${HOME}"/x (the tilde does not expand inside ${VAR:-...}); other paths shell-quoted."""
    if path == "~":
        return '"${HOME}"'
    if path.startswith("~/"):
        return '"${HOME}"/' + shell_quote(path[2:])
    return shell_quote(path)


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words only (a script header's comments)."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def shell_words(packages: tuple[str, ...]) -> str:
    """Package names as shell words; a ``$(uname -r)`` inside stays live in double quotes."""
    return " ".join(f'"{word}"' if "$(" in word else shell_quote(word) for word in packages)


def driver_fragment(
    distro: D.Distro, route: fix_catalogue.DriverRoute, needs: DriverNeeds, need: str | None
) -> tuple[str, Choice]:
    """The driver step: the fix catalogue's route for this distro and the GPUs' needs, in its shell fragment (its
    driver_done, in driver-common.sh, skips it inside a container: a script made elsewhere and run in one)."""
    why = "; ".join(needs.reasons) if needs.reasons else ""
    if need is None:
        why = "no framework or toolkit floor" + (f"; {why}" if why else "")
    headers, packages = shell_words(route.headers), " ".join(route.packages)
    flavour = "open modules" if needs.open_modules else "proprietary modules"
    if route.route == "debian":
        text = fragment("driver-debian.sh", DRIVER_SOURCE=route.source, HEADERS=headers, DRIVER_PACKAGE=packages)
        return text, Choice(
            "driver",
            f"Debian's nvidia-driver (R{D.DEBIAN12_DRIVER_BRANCH}, DKMS)",
            f"{why}; Debian 12 ships branch {D.DEBIAN12_DRIVER_BRANCH} and keeps it for the release: no newer "
            "branch is needed here [DEB12_DRIVER]",
        )
    if route.route == "nvidia-apt":
        text = fragment("driver-nvidia-apt.sh", DRIVER_SOURCE=route.source, HEADERS=headers, DRIVER_PACKAGE=packages)
        return text, Choice(
            "driver",
            f"{packages} from NVIDIA's {distro.repo} repository (branch R{needs.branch}, {flavour})",
            f"{why}; {needs.pin_why}; the package name pins the branch [DRV_GUIDE] [APT_BRANCHES]",
        )
    if route.route == "nvidia-dnf":
        text = fragment(
            "driver-nvidia-dnf.sh",
            DRIVER_SOURCE=route.source,
            HEADERS=headers,
            DRIVER_PACKAGE=packages,
            STREAM=route.stream or "",
            EPEL=epel_body(distro),
        )
        return text, Choice(
            "driver",
            f"{packages} (dnf module nvidia-driver:{route.stream}) from NVIDIA's {distro.repo} repository "
            f"(branch R{needs.branch}, {flavour})",
            f"{why}; {needs.pin_why}; the module stream pins the branch [DRV_GUIDE] [DNF_STREAMS]",
        )
    manual = " ".join(" ".join(step.words) for step in route.steps if step.kind == fix_catalogue.MANUAL)
    raise GenerationRefused(f"no driver step for these GPUs: {manual}", nearest="--no-driver")


# A container shares the host's kernel: the driver, its kernel headers and the reboot belong to the host, which
# then hands the GPUs to the container (the NVIDIA Container Toolkit, docker run --gpus all) [CTK_GUIDE].
HOST_STEPS = (
    "on the host: install the NVIDIA driver (gpudoctor install-script there), then the NVIDIA Container Toolkit "
    "(gpudoctor install-script --container-toolkit), and start this container with --gpus all "
    "(or the nvidia runtime)"
)


def container_driver_step(runtime: str) -> tuple[str, Choice]:
    """The driver step inside a container (known when the script is made): nothing to install, what to do on the
    host instead."""
    where = "a container of an unknown kind" if runtime == "unknown" else f"a {runtime} container"
    text = fragment("driver-container.sh", WHERE=where, HOST_STEPS=shell_quote(HOST_STEPS))
    return text, Choice("driver", f"none (inside {where})", HOST_STEPS + " [CTK_GUIDE]")


def epel_body(distro: D.Distro) -> str:
    """The body of the script's enable_epel: the catalogue's EPEL steps, or the subscription step RHEL leaves to
    its user."""
    steps = fix_catalogue.epel_steps(distro)
    if not steps:
        return "  return 0"
    lines = ["  if pkg_installed epel-release; then", "    return 0", "  fi"]
    manual = [step for step in steps if step.kind == fix_catalogue.MANUAL]
    if manual:
        enable = " ".join(steps[0].words).replace("$", "\\$")
        lines.append(
            f'  skip driver "DKMS needs EPEL: enable CodeReady Builder ({enable}) and install epel-release per '
            f'{fix_catalogue.EPEL_GUIDE}, then run this again"'
        )
        lines.append("  return 1")
        return "\n".join(lines)
    for step in steps:
        if step.kind == fix_catalogue.INSTALL:
            lines.append(f"  pkg_install {shell_words(step.words)}")
        else:
            lines.append(f"  as_root {' '.join(step.words)}")
    return "\n".join(lines)
