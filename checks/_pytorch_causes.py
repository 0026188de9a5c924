"""Why PyTorch could not initialise CUDA (TORCH005): CUDA's error text mapped to its cause and fix."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.api import Fix
from gpudoctor.facts.facts import Facts
from gpudoctor_checks import _fixes
from gpudoctor_checks._frameworks import driver_unknown, driver_usable


@dataclass(frozen=True)
class CudaInitCause:
    """What made CUDA unavailable: in words, its fix, and its id in the causes table (others that fit after)."""

    words: str
    fix: Fix | None
    cause: str
    other_causes: tuple[str, ...] = ()


def _no_driver(facts: Facts) -> CudaInitCause:
    if facts.driver.userspace_version:
        return CudaInitCause("the NVIDIA kernel module is not loaded", _fixes.load_kernel_module(), "driver-not-loaded")
    return CudaInitCause("no NVIDIA driver is installed", _fixes.install_driver_for(facts), "driver-not-installed")


def cuda_init_cause(facts: Facts, error: str | None) -> CudaInitCause:
    text = (error or "").lower()
    unknown = driver_unknown(facts)
    if not error and unknown is not None:
        # The GPU is there, and nvidia-smi gave the report no driver version: it is missing or not answering.
        return CudaInitCause(
            f"the report's nvidia-smi gave no driver version ({unknown.words()}): the NVIDIA driver is not "
            "installed or its kernel module is not loaded",
            Fix(
                "See whether a driver answers, on the machine the report came from; load or install it.",
                ("nvidia-smi", "lsmod | grep nvidia", "cat /proc/driver/nvidia/version"),
            ),
            "driver-not-loaded",
            ("driver-not-installed",),
        )
    if "found no nvidia driver" in text or (not error and not driver_usable(facts)):
        return _no_driver(facts)
    if "too old" in text or "insufficient" in text or "error 35" in text:
        return CudaInitCause(
            "the driver is older than torch's CUDA (see TORCH003)", None, "torch-cuda-too-new", ("driver-too-old",)
        )
    if "802" in text or "system not yet initialized" in text:
        return CudaInitCause(
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
            "fabric-manager",
        )
    if "804" in text or "forward compatibility" in text:
        return CudaInitCause(
            "CUDA forward-compatibility libraries (cuda-compat) are on the loader path, and this GPU doesn't "
            "support them",
            Fix(
                "Remove the compat directory from LD_LIBRARY_PATH, or upgrade the host driver.",
                ('export LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | tr : "\\n" | grep -v compat | paste -sd:)',),
            ),
            "cuda-forward-compat",
        )
    if "unknown error" in text or "error 999" in text:
        return CudaInitCause(
            "CUDA could not talk to the driver: usually nvidia_uvm is not loaded (often after suspend/resume) "
            "or, in a container, the device cgroup was reset",
            Fix(
                "Load nvidia_uvm (on the host), or restart the container; reboot if it persists.",
                ("sudo modprobe nvidia_uvm", "sudo nvidia-modprobe -u -c=0"),
                needs_root=True,
            ),
            "cuda-unknown-error",
            ("nvidia-uvm-not-loaded", "container-cgroup-devices"),
        )
    if "no cuda-capable device" in text or "error 100" in text:
        visible = facts.env.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return CudaInitCause(
                f"CUDA_VISIBLE_DEVICES={visible!r} hides every GPU (see ENV001)",
                Fix("Unset it or name existing GPUs.", ("unset CUDA_VISIBLE_DEVICES",)),
                "cuda-visible-devices",
            )
        return CudaInitCause(
            "CUDA sees no GPU: a container started without GPUs, or missing /dev/nvidia* nodes (see DEV001)",
            None,
            "cuda-unavailable",
            ("container-no-gpu-flag", "cuda-visible-devices"),
        )
    if "busy or unavailable" in text or "error 46" in text:
        return CudaInitCause(
            "the GPU is in an exclusive or prohibited compute mode and in use (see GPU002)",
            Fix("Set the default compute mode, or use a free GPU.", ("sudo nvidia-smi -c DEFAULT",), needs_root=True),
            "compute-mode-exclusive",
        )
    if not driver_usable(facts):
        return CudaInitCause(
            "the NVIDIA driver is not loaded (see DRV001)", _fixes.load_kernel_module(), "driver-not-loaded"
        )
    if not error:
        return CudaInitCause(
            "the driver is there, but the evidence does not show CUDA's own error",
            Fix(
                "Ask CUDA why, in the Python that runs torch.",
                ('python -c "import torch; torch.cuda.init()"', "nvidia-smi"),
            ),
            "cuda-unavailable",
        )
    return CudaInitCause("see the error text", None, "cuda-unavailable")
