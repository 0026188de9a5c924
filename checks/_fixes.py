"""Fix-its shared by several checks: the exact commands, matched to the distribution."""

from __future__ import annotations

from gpudoctor.api import Fix


def _family(os_release) -> str:
    if os_release is None:
        return "unknown"
    ids = {(os_release.id or "").lower(), *(i.lower() for i in os_release.id_like)}
    if "ubuntu" in ids:
        return "ubuntu"
    if "debian" in ids:
        return "debian"
    if ids & {"rhel", "centos", "fedora", "rocky", "almalinux"}:
        return "rhel"
    if "amzn" in ids:
        return "amzn"
    return "unknown"


# The generator writes the same steps for this distro as a script: idempotent, with --dry-run and key checks.
INSTALL_SCRIPT_HINT = (
    "# or let gpudoctor write them for this distro: gpudoctor install-script -o install-gpu.sh "
    "&& bash install-gpu.sh --dry-run"
)
CONTAINER_TOOLKIT_HINT = (
    "# on the host: gpudoctor install-script --no-driver --framework none --container-toolkit "
    "-o install-ctk.sh && bash install-ctk.sh --dry-run"
)


def install_driver(os_release) -> Fix:
    family = _family(os_release)
    if family == "ubuntu":
        commands = ("sudo apt-get update", "sudo ubuntu-drivers install", "sudo reboot")
    elif family == "debian":
        commands = (
            "sudo sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "
            "/etc/apt/sources.list.d/debian.sources",
            "sudo apt-get update",
            "sudo apt-get install -y linux-headers-$(uname -r) nvidia-driver",
            "sudo reboot",
        )
    elif family in ("rhel", "amzn"):
        commands = (
            "sudo dnf install -y kernel-devel-$(uname -r) kernel-headers-$(uname -r)",
            "sudo dnf module install -y nvidia-driver:latest-dkms",
            "sudo reboot",
        )
    else:
        commands = ("# install your distribution's NVIDIA driver package, then reboot",)
    commands += (INSTALL_SCRIPT_HINT,)
    return Fix(
        "Install the NVIDIA driver from your distribution, then reboot.",
        commands,
        needs_root=True,
        url="https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/",
    )


def load_kernel_module() -> Fix:
    return Fix(
        "Load the NVIDIA kernel module. If that fails, rebuild it for the running kernel "
        "(a kernel upgrade without matching headers is the usual cause) and check Secure Boot.",
        (
            "sudo modprobe nvidia",
            "dkms status",
            "sudo apt-get install -y linux-headers-$(uname -r)  # or: sudo dnf install kernel-devel-$(uname -r)",
            "sudo dkms autoinstall",
            "mokutil --sb-state",
        ),
        needs_root=True,
    )


def reboot_for_mismatch() -> Fix:
    return Fix(
        "The driver was upgraded while the old kernel module stayed loaded. Reboot; or, with no GPU process "
        "running, reload the modules. Then hold the driver packages so unattended upgrades can't do it again.",
        (
            "sudo reboot",
            "# or, without a reboot:  sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia",
            "sudo apt-mark hold $(dpkg -l | awk '/^ii +(libnvidia|nvidia)-/ {print $2}')  # Debian/Ubuntu",
        ),
        needs_root=True,
    )


def blacklist_nouveau(os_release) -> Fix:
    regenerate = "sudo dracut --force" if _family(os_release) in ("rhel", "amzn") else "sudo update-initramfs -u"
    return Fix(
        "Stop nouveau from claiming the GPU, then reboot so the NVIDIA driver can bind.",
        (
            "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | "
            "sudo tee /etc/modprobe.d/blacklist-nouveau.conf",
            regenerate,
            "sudo reboot",
        ),
        needs_root=True,
    )
