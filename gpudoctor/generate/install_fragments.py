"""The install script's shell fragments (``dockerfiles/install/``, placeholders ``@@NAME@@``): loading and filling
them, and the driver step filled from the fix catalogue's route for the distro, floor and GPUs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from gpudoctor.generate import distros as D
from gpudoctor.generate.model import Choice
from gpudoctor.kb import fix_catalogue
from gpudoctor.kb.versions import major, release_tuple

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


def shell_words(packages: tuple[str, ...]) -> str:
    """Package names as shell words; a ``$(uname -r)`` inside stays live in double quotes."""
    return " ".join(f'"{word}"' if "$(" in word else shell_quote(word) for word in packages)


def driver_fragment(distro: D.Distro, wsl: bool, need: str | None, ccs: tuple[str, ...]) -> tuple[str, Choice]:
    """The driver step: the fix catalogue's route for this distro and floor, in its shell fragment."""
    if wsl:
        return fragment("driver-wsl.sh"), Choice("driver", "none (WSL)", D.SOURCES["WSL_GUIDE"])
    # Open kernel modules need Turing (7.5) or newer; older GPUs get the proprietary flavour.
    old_gpu = any(key < (7, 5) for key in (release_tuple(cc) for cc in ccs) if key)
    why_need = f"at least {need}" if need else "no framework or toolkit floor: the distro's default"
    route = fix_catalogue.driver_route(distro, major(need), pre_turing=old_gpu)
    headers, packages = shell_words(route.headers), " ".join(route.packages)
    if route.route == "debian":
        text = fragment("driver-debian.sh", DRIVER_SOURCE=route.source, HEADERS=headers, DRIVER_PACKAGE=packages)
        return text, Choice(
            "driver",
            f"Debian's nvidia-driver (R{D.DEBIAN12_DRIVER_BRANCH}, DKMS)",
            f"{why_need}; Debian 12 ships branch {D.DEBIAN12_DRIVER_BRANCH} [DEB12_DRIVER]",
        )
    if route.route == "ubuntu-drivers":
        text = fragment("driver-ubuntu-drivers.sh", DRIVER_SOURCE=route.source, HEADERS=headers)
        return text, Choice("driver", "ubuntu-drivers install", why_need)
    if route.route == "nvidia-apt":
        text = fragment("driver-nvidia-apt.sh", DRIVER_SOURCE=route.source, HEADERS=headers, DRIVER_PACKAGE=packages)
        flavour = "proprietary modules for a pre-Turing GPU" if old_gpu else "open kernel modules"
        return text, Choice(
            "driver",
            f"{packages} from NVIDIA's {distro.repo} repository",
            f"{why_need}; NVIDIA's current driver meets it; {flavour} [DRV_GUIDE]",
        )
    text = fragment(
        "driver-nvidia-dnf.sh",
        DRIVER_SOURCE=route.source,
        HEADERS=headers,
        DRIVER_PACKAGE=packages,
        STREAM=route.stream or "",
        EPEL=_epel(distro),
    )
    return text, Choice(
        "driver",
        f"{packages} (dnf module nvidia-driver:{route.stream}) from NVIDIA's {distro.repo} repository",
        f"{why_need}; NVIDIA's current driver meets it [DRV_GUIDE]",
    )


def _epel(distro: D.Distro) -> str:
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
