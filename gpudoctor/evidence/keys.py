"""The typed name of every evidence source.

A source's value is the file name it has in a snapshot, a public contract (README, "Snapshot files").
Everything after the evidence layer names a source through this enum, never through a string literal:
checks cite the evidence behind a finding as ``EvidenceKey.NVIDIA_SMI``, and a typo is a type error
instead of a finding that silently cites nothing.
"""

from __future__ import annotations

import enum


class EvidenceKey(str, enum.Enum):
    """One evidence source; behaves exactly as its snapshot file name wherever a string is expected."""

    NVIDIA_SMI_XML = "nvidia-smi-q-x.xml"
    NVIDIA_SMI = "nvidia-smi.txt"
    NVIDIA_SMI_LIST = "nvidia-smi-L.txt"
    NVIDIA_SMI_TOPO = "nvidia-smi-topo-m.txt"
    NVIDIA_SMI_P2P = "nvidia-smi-topo-p2p-r.txt"
    NVIDIA_SMI_NVLINK = "nvidia-smi-nvlink-s.txt"
    FABRIC_MANAGER = "fabricmanager.txt"
    PROC_DRIVER_VERSION = "proc-driver-nvidia-version.txt"
    SYS_MODULE_VERSION = "sys-module-nvidia-version.txt"
    PROC_MODULES = "proc-modules.txt"
    PROC_VERSION = "proc-version.txt"
    NVCC = "nvcc-version.txt"
    LDCONFIG = "ldconfig-p.txt"
    LSPCI = "lspci.txt"
    OS_RELEASE = "os-release"
    UNAME = "uname.txt"
    KERNEL_LOG = "dmesg-nvidia.txt"
    NVML = "nvml.json"
    ENV = "env.json"
    PCI_DEVICES = "pci-devices.json"
    CPU_TOPOLOGY = "cpu-topology.json"
    DEVICE_NODES = "device-nodes.json"
    CUDA_TOOLKITS = "cuda-toolkits.json"
    CUDNN = "cudnn.json"
    DRIVER_LIBRARIES = "driver-libraries.json"
    CONTAINER = "container.json"
    PYTHON_PACKAGES = "python-packages.json"
    TARGET_PYTHON = "target-python.json"
    FRAMEWORK_TORCH = "framework-torch.json"
    FRAMEWORK_TENSORFLOW = "framework-tensorflow.json"
    FRAMEWORK_JAX = "framework-jax.json"
    FRAMEWORK_CUPY = "framework-cupy.json"
    SMOKE = "smoke.json"
    TORCH_COLLECT_ENV = "torch-collect-env.txt"
    TENSORFLOW_LOG = "tensorflow-log.txt"
    PASTE = "pasted-text.txt"
    # AMD GPUs and ROCm
    AMD_SMI = "amd-smi.txt"  # `amd-smi static --json` (a pasted text `amd-smi static` too)
    AMD_SMI_LIST = "amd-smi-list.txt"
    ROCM_SMI = "rocm-smi.txt"  # `rocm-smi --showallinfo --json` (pasted concise / -a text too)
    ROCMINFO = "rocminfo.txt"
    KFD_TOPOLOGY = "kfd-topology.json"
    ROCM_INSTALL = "rocm-install.json"
    ACCEL_DEVICE_NODES = "accel-device-nodes.json"  # /dev/kfd, /dev/dri/*, /dev/accel*, /dev/vfio/*, groups
    # Intel GPUs
    XPU_SMI = "xpu-smi.txt"  # `xpu-smi discovery -j` (a pasted table too)
    SYCL_LS = "sycl-ls.txt"
    # Apple
    MAC_DISPLAYS = "system-profiler-displays.txt"  # `system_profiler SPDisplaysDataType -json` (or its text)
    MACOS = "macos.json"  # macOS version, chip, whether this process runs under Rosetta
    # Google TPU
    TPU_RUNTIME = "tpu-runtime.json"  # the libtpu lock file, TPU environment
    # Where the machine runs: cloud instance (DMI, cloud-init), notebook platform, container image
    PLATFORM = "platform.json"  # DMI identity, cloud-init's instance data, notebook and image marker files
    CLOUD_METADATA = "cloud-metadata.json"  # the cloud's instance metadata service: only with --cloud-metadata

    # A str subclass that prints, formats and hashes as its value, so it can key the evidence dict,
    # appear in JSON and join into text exactly like the file name it stands for.
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, format_spec: str) -> str:
        return str(self.value).__format__(format_spec)

    __hash__ = str.__hash__


# The snapshot's own index of what was collected and how each source answered (not a source itself).
MANIFEST = "manifest.json"


def framework_key(framework: str) -> EvidenceKey:
    """The probe record of one framework ("torch", "tensorflow", "jax", "cupy")."""
    return EvidenceKey(f"framework-{framework}.json")
