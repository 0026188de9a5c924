"""Per-distro facts: package manager, NVIDIA repository path, driver route, kernel headers, the Python that makes a
venv, and the repository keys with the fingerprints NVIDIA publishes.  Read by the fix catalogue (and through it by
the checks' fixes) and by the install-script generator.

Every fact names its source (a key of ``SOURCES``).  A distro is named by a token ("ubuntu24.04", "debian12",
"rhel9", "rocky8", "alma9", "amzn2023"), optionally prefixed "wsl-"; ``distro_token`` derives it from os-release.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCES = {
    "DRV_GUIDE": "NVIDIA Driver Installation Guide, Kernel Modules: open GPU kernel module installation table "
    "(https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ , r580-r620 editions): "
    "RHEL/Rocky/Alma 8-9 and Amazon Linux 2023 `dnf module enable nvidia-driver:open-dkms` + "
    "`dnf install nvidia-open`, a specific branch `dnf module enable nvidia-driver:580-open`; Ubuntu/Debian "
    "`apt install nvidia-open`; open modules need Turing (7.5)+, the proprietary ones are required for Maxwell, "
    "Pascal and Volta",
    "DNF_STREAMS": "NVIDIA/yum-packaging-dkms-nvidia README (https://github.com/NVIDIA/yum-packaging-dkms-nvidia): "
    "RHEL8 streams latest-dkms and XXX-dkms, open-kernel-module streams (515 and newer) open-dkms and XXX-open; "
    "'the XXX and XXX-dkms streams/flavors lock driver updates to the specified driver branch'. Driver Installation "
    "Guide, Kernel Modules, Table 5: 'dnf module enable nvidia-driver:580-open' + 'dnf install nvidia-open' installs "
    "a specific branch; Advanced Options (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/"
    "advanced-options.html): cuda-drivers is the proprietary flavour ('To switch from open to proprietary: dnf "
    "install --allowerasing cuda-drivers')",
    "APT_BRANCHES": "NVIDIA's CUDA apt repositories name a branch in the package: cuda-drivers-580 (proprietary; "
    "the Driver Installation Guide's 'Ubuntu 590 package renames' table lists cuda-drivers-580 among the original "
    "names, and the ubuntu2604 Packages index shows cuda-drivers 'Provides: cuda-drivers-595') and nvidia-open-580 "
    "(open modules; installed after cuda-keyring in public Ubuntu 24.04 and Debian 12 install notes)",
    "CUDA_REPO": "CUDA Installation Guide for Linux, network repository installation: cuda-keyring_1.1-1_all.deb "
    "(apt), cuda-<distro>.repo (dnf) under https://developer.download.nvidia.com/compute/cuda/repos/",
    "KEY_ROTATION": "NVIDIA/cuda-repo-management#4 'GPG signing key rotation for CUDA repositories' (2022-04-28): "
    "Debian-based repos sign with 3bf863cc, RPM-based with d42d0685; full apt fingerprint "
    "EB693B3035CD5710E231E123A4B469963BF863CC (cudatools@nvidia.com, also pinned by "
    "NVIDIA/ansible-collection-dpu-ops#3 'A4B469963BF863CC - cudatools')",
    "RPM_KEY": "NVIDIA/cuda-repo-management SIGNATURES.md (https://github.com/NVIDIA/cuda-repo-management/blob/main/"
    "SIGNATURES.md): the rhel8 repository metadata verified with, and dnf's 'Importing GPG key "
    "0xD42D0685' prompt showing, fingerprint 610C 7B14 E068 A878 070D A4E9 9CD0 A493 D42D 0685 "
    "(cudatools <cudatools@nvidia.com>); the same file gives the apt key as EB693B30...3BF863CC. "
    "Red Hat's Conforma release policies allow NVIDIA CUDA RPMs by the long key id 9cd0a493d42d0685",
    "CTK_GUIDE": "Installing the NVIDIA Container Toolkit (https://docs.nvidia.com/datacenter/cloud-native/"
    "container-toolkit/latest/install-guide.html): key https://nvidia.github.io/libnvidia-container/"
    "gpgkey, apt list stable/deb/$(ARCH), dnf repo stable/rpm/nvidia-container-toolkit.repo, "
    "`nvidia-ctk runtime configure --runtime=docker`",
    "CTK_KEY": "libnvidia-container signing key C95B321B61E88C1809C4F759DDCAE044F796ECB0 (key id DDCAE044F796ECB0, "
    "the NO_PUBKEY apt names for nvidia.github.io/libnvidia-container; pinned the same way in several "
    "public install scripts)",
    "CUDNN_GUIDE": "cuDNN installation guide (Linux, package manager): `cudnn9-cuda-12` / `cudnn9-cuda-13` "
    "meta packages from the CUDA network repository",
    "DEB12_DRIVER": "packages.debian.org bookworm: nvidia-driver / nvidia-open-kernel-dkms 535.x in non-free / "
    "contrib (535.247.01-1~deb12u1, 535.261.03); Debian wiki NvidiaGraphicsDrivers: "
    "linux-headers + nvidia-driver firmware-misc-nonfree",
    "WSL_GUIDE": "CUDA on WSL User Guide: the Windows driver provides /usr/lib/wsl/lib/libcuda.so; "
    "no Linux display driver may be installed inside WSL",
}

CUDA_APT_FINGERPRINT = "EB693B3035CD5710E231E123A4B469963BF863CC"
# The RPM repositories' key is the file <key id>.pub in each repository folder (RPM_KEY).
CUDA_RPM_KEY_ID = "D42D0685"
CUDA_RPM_FINGERPRINT = "610C7B14E068A878070DA4E99CD0A493D42D0685"
CTK_FINGERPRINT = "C95B321B61E88C1809C4F759DDCAE044F796ECB0"
CUDA_REPO_BASE = "https://developer.download.nvidia.com/compute/cuda/repos"
CTK_KEY_URL = "https://nvidia.github.io/libnvidia-container/gpgkey"
CTK_APT_LINE = "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /"
CTK_RPM_REPO = "https://nvidia.github.io/libnvidia-container/stable/rpm/nvidia-container-toolkit.repo"
DEBIAN12_DRIVER_BRANCH = 535  # DEB12_DRIVER


@dataclass(frozen=True)
class Distro:
    token: str  # "ubuntu24.04"
    name: str  # "Ubuntu 24.04"
    family: str  # "apt" or "dnf"
    os_ids: tuple[str, ...]  # os-release ID values the OS guard accepts
    version_id: str  # os-release VERSION_ID (or its major for RHEL-likes) the guard accepts
    repo: str  # NVIDIA's CUDA repository folder: "ubuntu2404"
    driver_default: str  # "ubuntu-drivers", "debian", "nvidia-repo"
    python: str  # the interpreter that makes the venv: "python3", "python3.11"
    python_version: str  # its version, for the framework choice
    python_packages: tuple[str, ...]  # what provides it with venv support
    headers: tuple[str, ...]  # kernel header packages for DKMS (may use $(uname -r))
    epel: str | None = None  # how EPEL (DKMS) is enabled: "rocky"/"alma" (distro package), "rhel" (user step)
    sources: tuple[str, ...] = ("DRV_GUIDE", "CUDA_REPO")


def _ubuntu(version: str, python: str) -> Distro:
    return Distro(
        f"ubuntu{version}",
        f"Ubuntu {version}",
        "apt",
        ("ubuntu",),
        version,
        "ubuntu" + version.replace(".", ""),
        "ubuntu-drivers",
        "python3",
        python,
        ("python3-venv",),
        ("linux-headers-$(uname -r)",),
    )


def _el(prefix: str, name: str, os_id: str, major: str) -> Distro:
    python, python_version, packages = (
        ("python3.11", "3.11", ("python3.11",)) if major == "8" else ("python3", "3.9", ("python3",))
    )
    return Distro(
        f"{prefix}{major}",
        f"{name} {major}",
        "dnf",
        (os_id,),
        major,
        f"rhel{major}",
        "nvidia-repo",
        python,
        python_version,
        packages,
        ("kernel-devel-$(uname -r)", "kernel-headers-$(uname -r)"),
        epel=prefix,
    )


DISTROS: dict[str, Distro] = {
    d.token: d
    for d in (
        _ubuntu("20.04", "3.8"),
        _ubuntu("22.04", "3.10"),
        _ubuntu("24.04", "3.12"),
        Distro(
            "debian12",
            "Debian 12",
            "apt",
            ("debian",),
            "12",
            "debian12",
            "debian",
            "python3",
            "3.11",
            ("python3-venv",),
            ("linux-headers-$(uname -r)",),
            sources=("DEB12_DRIVER", "CUDA_REPO"),
        ),
        _el("rhel", "Red Hat Enterprise Linux", "rhel", "8"),
        _el("rhel", "Red Hat Enterprise Linux", "rhel", "9"),
        _el("rocky", "Rocky Linux", "rocky", "8"),
        _el("rocky", "Rocky Linux", "rocky", "9"),
        _el("alma", "AlmaLinux", "almalinux", "8"),
        _el("alma", "AlmaLinux", "almalinux", "9"),
        Distro(
            "amzn2023",
            "Amazon Linux 2023",
            "dnf",
            ("amzn",),
            "2023",
            "amzn2023",
            "nvidia-repo",
            "python3",
            "3.9",
            ("python3",),
            ("kernel-devel-$(uname -r)", "kernel-headers-$(uname -r)"),
        ),
    )
}

_ALIASES = {
    "almalinux8": "alma8",
    "almalinux9": "alma9",
    "amazonlinux2023": "amzn2023",
    "al2023": "amzn2023",
    "debian12.0": "debian12",
    "bookworm": "debian12",
    "noble": "ubuntu24.04",
    "jammy": "ubuntu22.04",
    "focal": "ubuntu20.04",
}
_OS_ID_PREFIX = {
    "ubuntu": "ubuntu",
    "debian": "debian",
    "rhel": "rhel",
    "rocky": "rocky",
    "almalinux": "alma",
    "amzn": "amzn",
}


def known_distros() -> tuple[str, ...]:
    return tuple(DISTROS)


def lookup(token: str | None) -> tuple[Distro, bool] | None:
    """("wsl-ubuntu24.04") -> (the Ubuntu 24.04 facts, wsl=True); None when unknown."""
    if not isinstance(token, str):
        return None
    text = token.strip().lower()
    wsl = text.startswith("wsl-")
    if wsl:
        text = text[4:]
    text = _ALIASES.get(text, text)
    distro = DISTROS.get(text)
    return (distro, wsl) if distro else None


def distro_token(os_id: str | None, version_id: str | None) -> str | None:
    """os-release ID and VERSION_ID -> a token ("rocky", "9.4" -> "rocky9"; "ubuntu", "24.04" -> "ubuntu24.04")."""
    if not os_id or not version_id:
        return None
    prefix = _OS_ID_PREFIX.get(os_id.strip().lower())
    if prefix is None:
        return None
    version = version_id.strip()
    if prefix in ("rhel", "rocky", "alma", "debian"):
        version = version.split(".", 1)[0]
    token = f"{prefix}{version}"
    return token if token in DISTROS else None


def family_of(os_id: str | None, id_like: tuple[str, ...] = ()) -> str:
    """The distribution family whose commands fit: "ubuntu", "debian", "rhel", "amzn" or "unknown".

    ID_LIKE counts too, so a derivative (Linux Mint, Pop!_OS, CentOS Stream) gets its parent's commands.
    """
    ids = {(os_id or "").strip().lower(), *(i.strip().lower() for i in id_like)}
    if "ubuntu" in ids:
        return "ubuntu"
    if "debian" in ids:
        return "debian"
    if ids & {"rhel", "centos", "fedora", "rocky", "almalinux"}:
        return "rhel"
    if "amzn" in ids:
        return "amzn"
    return "unknown"
