"""Why PyTorch could not initialise CUDA (TORCH005): CUDA's error text mapped to its cause and fix."""

from __future__ import annotations

from gpudoctor.api import Fix
from gpudoctor.facts.facts import Facts
from gpudoctor_checks import _fixes
from gpudoctor_checks._frameworks import driver_unknown, driver_usable


def cuda_init_cause(facts: Facts, error: str | None) -> tuple[str, Fix | None]:
    text = (error or "").lower()
    unknown = driver_unknown(facts)
    if not error and unknown is not None:
        return (
            f"the report does not say which NVIDIA driver is installed ({unknown.words()}): look at nvidia-smi",
            Fix("See whether a driver answers, on the machine the report came from.", ("nvidia-smi",)),
        )
    if "found no nvidia driver" in text or (not error and not driver_usable(facts)):
        if facts.driver.userspace_version:
            return "the NVIDIA kernel module is not loaded", _fixes.load_kernel_module()
        return "no NVIDIA driver is installed", _fixes.install_driver(facts.os_release)
    if "too old" in text or "insufficient" in text or "error 35" in text:
        return "the driver is older than torch's CUDA (see TORCH003)", None
    if "802" in text or "system not yet initialized" in text:
        return (
            "an NVSwitch system needs the fabric manager running, at the driver's version",
            Fix(
                "Install and start nvidia-fabricmanager matching the driver branch.",
                (
                    "sudo apt-get install -y nvidia-fabricmanager-$(nvidia-smi --query-gpu=driver_version "
                    "--format=csv,noheader | head -1 | cut -d. -f1)",
                    "sudo systemctl enable --now nvidia-fabricmanager",
                ),
                needs_root=True,
            ),
        )
    if "804" in text or "forward compatibility" in text:
        return (
            "CUDA forward-compatibility libraries (cuda-compat) are on the loader path, and this GPU doesn't "
            "support them",
            Fix(
                "Remove the compat directory from LD_LIBRARY_PATH, or upgrade the host driver.",
                ('export LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | tr : "\\n" | grep -v compat | paste -sd:)',),
            ),
        )
    if "unknown error" in text or "error 999" in text:
        return (
            "CUDA could not talk to the driver: usually nvidia_uvm is not loaded (often after suspend/resume) "
            "or, in a container, the device cgroup was reset",
            Fix(
                "Load nvidia_uvm (on the host), or restart the container; reboot if it persists.",
                ("sudo modprobe nvidia_uvm", "sudo nvidia-modprobe -u -c=0"),
                needs_root=True,
            ),
        )
    if "no cuda-capable device" in text or "error 100" in text:
        visible = facts.env.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return (
                f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU (see ENV001)",
                Fix("Unset it or name existing GPUs.", ("unset CUDA_VISIBLE_DEVICES",)),
            )
        return ("CUDA sees no GPU: a container started without GPUs, or missing /dev/nvidia* nodes (see DEV001)", None)
    if "busy or unavailable" in text or "error 46" in text:
        return (
            "the GPU is in an exclusive or prohibited compute mode and in use (see GPU002)",
            Fix("Set the default compute mode, or use a free GPU.", ("sudo nvidia-smi -c DEFAULT",), needs_root=True),
        )
    if not driver_usable(facts):
        return "the NVIDIA driver is not loaded (see DRV001)", _fixes.load_kernel_module()
    return "see the error text", None
