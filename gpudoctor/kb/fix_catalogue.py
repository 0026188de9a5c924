"""The fix catalogue: per situation and per distro, the exact commands that fix it.

One home for "how do I install the driver / headers / load the module / blacklist nouveau here": the checks' fixes
(``gpudoctor_checks._fixes``) print these steps as commands to type, and the install-script generator runs the same
steps from its shell fragments.  A route is a tuple of ``Step`` values (what to do, not how a shell spells it), so
both readers render it their own way and a test can prove they say the same.

Where the two used to disagree, the generator's route won, because it follows its sources (``distros.SOURCES``):
Ubuntu installs the kernel headers and ``ubuntu-drivers-common`` before ``ubuntu-drivers install``; Debian 12 adds
``firmware-misc-nonfree`` [DEB12_DRIVER] and enables contrib/non-free in a list file of its own (the old in-place
``sed`` of ``debian.sources`` only worked on an untouched deb822 file); the RHEL family sets up NVIDIA's CUDA
repository and EPEL first (``dnf module install nvidia-driver:latest-dkms`` alone failed without the repository).

The branch is pinned, chosen from the GPUs present by ``driver_branches.driver_needs``: a legacy GPU's last branch
(Pascal: R580, proprietary modules), at least the first branch of the newest GPUs (Blackwell: R570, open modules
only), otherwise NVIDIA's newest Long Term Support Branch.  An unpinned ``cuda-drivers`` or ``latest-dkms`` would
move a Pascal GPU onto a branch that no longer drives it [DRV_GUIDE, DNF_STREAMS, APT_BRANCHES].
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.kb.distros import CUDA_REPO_BASE, DEBIAN12_DRIVER_BRANCH, DISTROS, Distro, distro_token, family_of
from gpudoctor.kb.driver_branches import LEGACY_BRANCH_ARCHITECTURES, LEGACY_GPU_URL, DriverNeeds, driver_needs

# Step kinds: what to do.  Each reader spells them for its medium (a command to type, a script line).
INSTALL = "install"  # install these packages with the distro's package manager
ROOT = "root"  # run these words as root
CUDA_REPO = "cuda-repo"  # set up NVIDIA's CUDA network repository (words: the repository URL folder)
DEBIAN_NONFREE = "debian-nonfree"  # enable Debian's contrib / non-free components (words: the list file lines)
MANUAL = "manual"  # a step only a person can do (words: what to do, one sentence)
REBOOT = "reboot"  # reboot so the new kernel module is the one loaded

DEBIAN_NONFREE_LIST = "/etc/apt/sources.list.d/debian-nonfree.list"
DEBIAN_NONFREE_LINES = (
    "deb https://deb.debian.org/debian bookworm contrib non-free non-free-firmware",
    "deb https://deb.debian.org/debian bookworm-updates contrib non-free non-free-firmware",
    "deb https://security.debian.org/debian-security bookworm-security contrib non-free non-free-firmware",
)
CUDA_KEYRING_DEB = "cuda-keyring_1.1-1_all.deb"  # CUDA_REPO
EPEL_GUIDE = "https://docs.fedoraproject.org/en-US/epel/"
DRIVER_GUIDE_URL = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/"

HEADERS = {
    "apt": ("linux-headers-$(uname -r)",),
    "dnf": ("kernel-devel-$(uname -r)", "kernel-headers-$(uname -r)"),
}
INITRAMFS = {"apt": ("update-initramfs", "-u"), "dnf": ("dracut", "--force")}
NOUVEAU_BLACKLIST_FILE = "/etc/modprobe.d/blacklist-nouveau.conf"
NOUVEAU_BLACKLIST_LINES = ("blacklist nouveau", "options nouveau modeset=0")
NVIDIA_MODULES_UNLOAD_ORDER = ("nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia")


@dataclass(frozen=True)
class Step:
    kind: str  # one of the step kinds above
    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class DriverRoute:
    """How the NVIDIA driver gets onto one distro: the route's name, its packages and the steps in order."""

    route: str  # "ubuntu-drivers", "debian", "nvidia-apt", "nvidia-dnf", "generic"
    family: str  # "apt", "dnf" or "" (unknown)
    headers: tuple[str, ...]
    packages: tuple[str, ...]  # the driver packages themselves
    stream: str | None  # the dnf module stream ("open-dkms", "latest-dkms")
    source: str  # the SOURCES key the route follows
    steps: tuple[Step, ...]


def debian_branch_suffices(floor_major: int | None) -> bool:
    """Debian 12's own driver branch (R535) meets the floor (none counts as met)."""
    return floor_major is None or floor_major <= DEBIAN12_DRIVER_BRANCH


def epel_steps(distro: Distro) -> tuple[Step, ...]:
    """DKMS comes from EPEL on RHEL-likes: Rocky/Alma ship epel-release; on RHEL it is a subscription step."""
    if distro.epel is None:
        return ()
    if distro.epel == "rhel":
        crb = f"codeready-builder-for-rhel-{distro.version_id}-$(arch)-rpms"
        return (
            Step(ROOT, ("subscription-manager", "repos", "--enable", crb)),
            Step(MANUAL, (f"then install epel-release per {EPEL_GUIDE}",)),
        )
    crb = "crb" if distro.version_id == "9" else "powertools"
    return (
        Step(INSTALL, ("epel-release", "dnf-plugins-core")),
        Step(ROOT, ("dnf", "config-manager", "--set-enabled", crb)),
    )


def driver_route(distro: Distro, needs: DriverNeeds | None = None) -> DriverRoute:
    """The driver route for ``distro`` and what the GPUs need (``driver_needs``; none: no GPU known): Debian's own
    packaged branch when it fits, else NVIDIA's repository with the branch pinned in the package name (apt:
    ``nvidia-open-580`` / proprietary ``cuda-drivers-580``) or the module stream (dnf: ``nvidia-driver:580-open`` +
    ``nvidia-open`` / proprietary ``nvidia-driver:580-dkms`` + ``cuda-drivers``) [DRV_GUIDE, DNF_STREAMS]."""
    needs = needs or driver_needs(())
    headers = distro.headers
    repo = Step(CUDA_REPO, (f"{CUDA_REPO_BASE}/{distro.repo}",))
    if needs.branch is None or needs.branch in LEGACY_BRANCH_ARCHITECTURES:
        return _manual_route(distro.family, needs)
    if distro.driver_default == "debian" and _debian_fits(needs):
        packages = ("nvidia-driver", "firmware-misc-nonfree")
        steps: tuple[Step, ...] = (
            Step(DEBIAN_NONFREE, DEBIAN_NONFREE_LINES),
            Step(INSTALL, headers),
            Step(INSTALL, packages),
        )
        return DriverRoute("debian", "apt", headers, packages, None, "DEB12_DRIVER", (*steps, Step(REBOOT)))
    if distro.family == "apt":
        package = f"nvidia-open-{needs.branch}" if needs.open_modules else f"cuda-drivers-{needs.branch}"
        steps = (Step(INSTALL, headers), repo, Step(INSTALL, (package,)), Step(REBOOT))
        return DriverRoute("nvidia-apt", "apt", headers, (package,), None, "DRV_GUIDE", steps)
    stream, package = dnf_stream(needs)
    steps = (
        *epel_steps(distro),
        Step(INSTALL, headers),
        repo,
        Step(ROOT, ("dnf", "module", "enable", "-y", f"nvidia-driver:{stream}")),
        Step(INSTALL, (package,)),
        Step(REBOOT),
    )
    return DriverRoute("nvidia-dnf", "dnf", headers, (package,), stream, "DRV_GUIDE", steps)


def dnf_stream(needs: DriverNeeds) -> tuple[str, str]:
    """The pinned module stream and the package for it: ``("580-open", "nvidia-open")`` for the open modules,
    ``("580-dkms", "cuda-drivers")`` for the proprietary ones [DRV_GUIDE, DNF_STREAMS]."""
    if needs.open_modules:
        return f"{needs.branch}-open", "nvidia-open"
    return f"{needs.branch}-dkms", "cuda-drivers"


def _debian_fits(needs: DriverNeeds) -> bool:
    """Debian 12's own R535 meets the floor and every GPU still runs on it."""
    return debian_branch_suffices(needs.floor) and (needs.cap is None or needs.cap >= DEBIAN12_DRIVER_BRANCH)


def _manual_route(family: str, needs: DriverNeeds) -> DriverRoute:
    """No packaged route: no branch fits every GPU, or the GPUs need a legacy branch NVIDIA's repositories do not
    carry as a pinned package here (R470 for Kepler: the distribution's own legacy packages, LEGACY_GPU_URL)."""
    if needs.problem:
        what = needs.problem
    else:
        what = f"the GPUs need the legacy R{needs.branch} driver: install it as {LEGACY_GPU_URL} describes"
    return DriverRoute("manual", family, (), (), None, "DRV_GUIDE", (Step(MANUAL, (what,)),))


def _ubuntu_drivers(headers: tuple[str, ...]) -> DriverRoute:
    steps = (
        Step(INSTALL, (*headers, "ubuntu-drivers-common")),
        Step(ROOT, ("ubuntu-drivers", "install")),
        Step(REBOOT),
    )
    return DriverRoute("ubuntu-drivers", "apt", headers, (), None, "ubuntu-drivers-common", steps)


def uses_nvidia_repository(route: DriverRoute) -> bool:
    return any(step.kind == CUDA_REPO for step in route.steps)


def driver_route_for_os(
    os_id: str | None, id_like: tuple[str, ...], version_id: str | None, compute_capabilities: tuple[str, ...] = ()
) -> DriverRoute:
    """The route (no software floor) for an os-release and the GPUs' compute capabilities (none known: a Turing or
    newer GPU); a release the catalogue does not know gets its family's route without the release-specific
    repository."""
    needs = driver_needs(compute_capabilities)
    token = distro_token(os_id, version_id)
    if token is not None:
        return driver_route(DISTROS[token], needs)
    if needs.branch is None or needs.branch in LEGACY_BRANCH_ARCHITECTURES:
        return _manual_route(family_of(os_id, id_like), needs)
    family = family_of(os_id, id_like)
    if family == "ubuntu":
        return _ubuntu_drivers(HEADERS["apt"])
    if family == "debian":
        packages = ("nvidia-driver", "firmware-misc-nonfree")
        manual = Step(MANUAL, ("enable the contrib, non-free and non-free-firmware components in your apt sources",))
        steps: tuple[Step, ...] = (manual, Step(INSTALL, HEADERS["apt"]), Step(INSTALL, packages), Step(REBOOT))
        return DriverRoute("debian", "apt", HEADERS["apt"], packages, None, "DEB12_DRIVER", steps)
    if family in ("rhel", "amzn"):
        manual = Step(MANUAL, (f"add NVIDIA's CUDA repository for this release from {CUDA_REPO_BASE}/",))
        stream, package = dnf_stream(needs)
        steps = (
            Step(INSTALL, HEADERS["dnf"]),
            manual,
            Step(ROOT, ("dnf", "module", "enable", "-y", f"nvidia-driver:{stream}")),
            Step(INSTALL, (package,)),
            Step(REBOOT),
        )
        return DriverRoute("nvidia-dnf", "dnf", HEADERS["dnf"], (package,), stream, "DRV_GUIDE", steps)
    steps = (Step(MANUAL, ("install your distribution's NVIDIA driver package, then reboot",)),)
    return DriverRoute("generic", "", (), (), None, "DRV_GUIDE", steps)


# --------------------------------------------------------------------------- other situations


def load_module_commands() -> tuple[str, ...]:
    """Load the module; else rebuild it for the running kernel (headers first) and look at Secure Boot."""
    apt = f"sudo apt-get install -y {' '.join(HEADERS['apt'])}"
    dnf = f"sudo dnf install {HEADERS['dnf'][0]}"
    return ("sudo modprobe nvidia", "dkms status", f"{apt}  # or: {dnf}", "sudo dkms autoinstall", "mokutil --sb-state")


def mismatch_commands() -> tuple[str, ...]:
    """After a driver upgrade under a loaded module: reboot (or reload the modules), then hold the packages."""
    unload = " ".join(NVIDIA_MODULES_UNLOAD_ORDER)
    return (
        "sudo reboot",
        f"# or, without a reboot:  sudo rmmod {unload} && sudo modprobe nvidia",
        "sudo apt-mark hold $(dpkg -l | awk '/^ii +(libnvidia|nvidia)-/ {print $2}')  # Debian/Ubuntu",
    )


def blacklist_nouveau_commands(os_id: str | None, id_like: tuple[str, ...]) -> tuple[str, ...]:
    """Blacklist nouveau, regenerate the initramfs (dracut on the RHEL family) and reboot."""
    package_manager = "dnf" if family_of(os_id, id_like) in ("rhel", "amzn") else "apt"
    lines = "\\n".join(NOUVEAU_BLACKLIST_LINES)
    return (
        f"printf '{lines}\\n' | sudo tee {NOUVEAU_BLACKLIST_FILE}",
        "sudo " + " ".join(INITRAMFS[package_manager]),
        "sudo reboot",
    )


# NVIDIA's archive of every driver branch, with the kernels each legacy branch still builds for.
DRIVER_ARCHIVE_URL = "https://www.nvidia.com/en-us/drivers/unix/"

# The install command of a legacy driver branch per family: Ubuntu's restricted archive, Debian non-free,
# RPM Fusion non-free (Fedora and the EL rebuilds).  A new distribution release may have dropped the oldest
# branches: DRIVER_ARCHIVE_URL is the way out then, and families not listed get only that.
LEGACY_BRANCH_COMMANDS: dict[tuple[str, str], str] = {
    ("ubuntu", "470"): "sudo apt-get install nvidia-driver-470",
    ("ubuntu", "390"): "sudo apt-get install nvidia-driver-390",
    ("debian", "470"): "sudo apt-get install nvidia-tesla-470-driver",
    ("debian", "390"): "sudo apt-get install nvidia-legacy-390xx-driver",
    ("rhel", "470"): "sudo dnf install akmod-nvidia-470xx  # from RPM Fusion non-free",
    ("rhel", "390"): "sudo dnf install akmod-nvidia-390xx  # from RPM Fusion non-free",
}


def legacy_branch_commands(os_id: str | None, id_like: tuple[str, ...], branch: str) -> tuple[str, ...]:
    """Install the legacy branch that still supports a GPU the current branch dropped, then reboot."""
    command = LEGACY_BRANCH_COMMANDS.get((family_of(os_id, id_like), branch))
    return (*((command,) if command else ()), "sudo reboot")


def proprietary_module_commands(os_id: str | None, id_like: tuple[str, ...], branch: str | None) -> tuple[str, ...]:
    """Replace the open kernel module by the proprietary one of the same branch (a GPU without a GSP)."""
    number = branch or "<branch>"
    if family_of(os_id, id_like) == "ubuntu":
        command = f"sudo apt-get install nvidia-driver-{number}  # replaces nvidia-driver-{number}-open"
    else:
        # NVIDIA's installer; drivers before 560 choose the proprietary module with -m=kernel instead.
        command = "sudo sh NVIDIA-Linux-<arch>-<version>.run --kernel-module-type=proprietary"
    return (command, "sudo reboot")


# A GPU whose adapter failed to initialise: the NVRM lines before the failure name the cause; then reset.
INIT_FAILURE_COMMANDS = (
    "sudo dmesg | grep -B5 -A2 -E 'RmInitAdapter|rm_init_adapter|Xid'",
    "sudo nvidia-smi -r",
    "sudo reboot",
)


def typed_commands(route: DriverRoute) -> tuple[str, ...]:
    """The route as commands a person types: ``sudo`` where root is needed, the package lists refreshed first."""
    commands: list[str] = []
    stale = True  # apt's package lists are refreshed before the first install and after a new source
    for step in route.steps:
        words = " ".join(step.words)
        if step.kind == INSTALL:
            if route.family == "apt":
                if stale:
                    commands.append("sudo apt-get update")
                    stale = False
                commands.append(f"sudo apt-get install -y {words}")
            else:
                commands.append(f"sudo dnf install -y {words}")
        elif step.kind == ROOT:
            commands.append(f"sudo {words}")
        elif step.kind == REBOOT:
            commands.append("sudo reboot")
        elif step.kind == MANUAL:
            commands.append(f"# {words}")
        elif step.kind == DEBIAN_NONFREE:
            quoted = " ".join(f"'{line}'" for line in step.words)
            commands.append(f"printf '%s\\n' {quoted} | sudo tee {DEBIAN_NONFREE_LIST}")
            stale = True
        elif step.kind == CUDA_REPO:
            folder = f"{step.words[0]}/x86_64"
            if route.family == "apt":
                commands.append(f"curl -fsSLO {folder}/{CUDA_KEYRING_DEB}")
                commands.append(f"sudo dpkg -i {CUDA_KEYRING_DEB}")
            else:
                repo = step.words[0].rsplit("/", 1)[-1]
                commands.append(f"sudo dnf config-manager --add-repo {folder}/cuda-{repo}.repo")
            stale = True
    return tuple(commands)
