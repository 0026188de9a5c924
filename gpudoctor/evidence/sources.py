"""The catalogue of evidence sources and their snapshot file names.

The names are a public contract (README, "Snapshot files"): a snapshot written
by one version, or by hand, must be readable by the next.  Later capabilities
add sources here the same way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

from gpudoctor.evidence import scan_amd, scan_macos, scan_platform, scan_tpu, system_scan


@dataclass(frozen=True)
class Source:
    name: str
    kind: str  # "command", "file" or "json"
    description: str
    argv: tuple[str, ...] = ()
    path: str = ""
    # Read when ``path`` does not exist (os-release(5): /etc/os-release, else /usr/lib/os-release).
    fallback_path: str = ""
    scan: Callable[[], object] | None = None  # returns JSON-able data
    # Only worth running with a loaded kernel module: without one these can only
    # repeat the error the plain nvidia-smi already records.
    needs_driver: bool = False
    # A framework probe: runs in the *target* Python (chosen at run time), so it has no fixed argv.
    probe: str | None = None
    # Never collected live: only a person hands it in (a pasted report read by ``check --from``).
    live: bool = True
    # The sys.platform prefixes it is collected on ("linux", "darwin"); empty: everywhere. A source of another
    # platform is not collected at all (it says "not collected", never "failed"), so a Mac spends no time on
    # /proc and sysfs, and Linux none on system_profiler.
    platforms: tuple[str, ...] = ()


def _nvml_argv() -> tuple[str, ...]:
    """Run the NVML probe with ``-S``: skipping site start-up halves the probe's time.

    Without site, the probe's Python finds only what we hand it: the folders that
    hold gpudoctor and the ``pynvml`` module (located without importing it).
    """
    import importlib.util
    import os

    import gpudoctor

    paths = [os.path.dirname(os.path.dirname(os.path.abspath(gpudoctor.__file__)))]
    try:
        spec = importlib.util.find_spec("pynvml")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        paths.append(os.path.dirname(spec.origin))
    code = f"import sys; sys.path[:0] = {paths!r}; from gpudoctor.evidence.nvml_probe import main; sys.exit(main())"
    return (sys.executable, "-S", "-c", code)


SOURCES: tuple[Source, ...] = (
    Source(
        "nvidia-smi-q-x.xml", "command", "full GPU query as XML", argv=("nvidia-smi", "-q", "-x"), needs_driver=True
    ),
    Source("nvidia-smi.txt", "command", "the plain nvidia-smi table, or its error text", argv=("nvidia-smi",)),
    Source(
        "nvidia-smi-L.txt",
        "command",
        "GPU and MIG device list with UUIDs",
        argv=("nvidia-smi", "-L"),
        needs_driver=True,
    ),
    Source(
        "nvidia-smi-topo-m.txt",
        "command",
        "GPU/NIC/CPU topology matrix",
        argv=("nvidia-smi", "topo", "-m"),
        needs_driver=True,
    ),
    Source(
        "nvidia-smi-topo-p2p-r.txt",
        "command",
        "which GPU pairs can read each other's memory peer-to-peer",
        argv=("nvidia-smi", "topo", "-p2p", "r"),
        needs_driver=True,
    ),
    Source(
        "nvidia-smi-nvlink-s.txt",
        "command",
        "NVLink state and speed per link",
        argv=("nvidia-smi", "nvlink", "-s"),
        needs_driver=True,
    ),
    # NVSwitch systems need the fabric manager; LoadState tells "not installed" from "stopped".
    Source(
        "fabricmanager.txt",
        "command",
        "the nvidia-fabricmanager service's state",
        argv=("systemctl", "show", "nvidia-fabricmanager", "--property=LoadState,ActiveState,SubState"),
        needs_driver=True,
        platforms=("linux",),
    ),
    Source(
        "proc-driver-nvidia-version.txt",
        "file",
        "version of the loaded NVIDIA kernel module",
        path="/proc/driver/nvidia/version",
        platforms=("linux",),
    ),
    Source(
        "sys-module-nvidia-version.txt",
        "file",
        "version of the loaded NVIDIA kernel module (sysfs)",
        path="/sys/module/nvidia/version",
        platforms=("linux",),
    ),
    Source(
        "proc-modules.txt",
        "file",
        "loaded kernel modules (nvidia, nouveau, vfio)",
        path="/proc/modules",
        platforms=("linux",),
    ),
    Source(
        "proc-version.txt", "file", "kernel build string (tells WSL apart)", path="/proc/version", platforms=("linux",)
    ),
    Source("nvcc-version.txt", "command", "the nvcc first on PATH", argv=("nvcc", "--version")),
    Source("ldconfig-p.txt", "command", "the dynamic loader cache", argv=("ldconfig", "-p"), platforms=("linux",)),
    Source(
        "lspci.txt",
        "command",
        "PCI devices with IDs and bound kernel drivers",
        argv=("lspci", "-D", "-nn", "-k"),
        platforms=("linux",),
    ),
    Source(
        "os-release",
        "file",
        "the distribution",
        path="/etc/os-release",
        fallback_path="/usr/lib/os-release",
        platforms=("linux",),
    ),
    Source("uname.txt", "command", "kernel release and machine (no host name)", argv=("uname", "-srvm")),
    Source(
        "dmesg-nvidia.txt",
        "command",
        "kernel log lines from the NVIDIA driver (NVRM, Xid)",
        argv=("dmesg",),
        platforms=("linux",),
    ),
    Source("nvml.json", "json", "what NVML answered (run in a subprocess)", argv=_nvml_argv()),
    Source("env.json", "json", "GPU-related environment variables (allow-list)", scan=system_scan.scan_environment),
    Source("pci-devices.json", "json", "GPU and TPU functions on the PCI bus from sysfs", scan=system_scan.scan_pci),
    Source(
        "cpu-topology.json",
        "json",
        "the CPUs this process may use and each NUMA node's CPUs",
        scan=system_scan.scan_cpu_topology,
    ),
    Source("device-nodes.json", "json", "/dev/nvidia* nodes and their permissions", scan=system_scan.scan_device_nodes),
    Source(
        "cuda-toolkits.json",
        "json",
        "CUDA toolkit directories and their version files",
        scan=system_scan.scan_cuda_toolkits,
    ),
    Source("cudnn.json", "json", "cuDNN headers and libraries", scan=system_scan.scan_cudnn),
    Source("driver-libraries.json", "json", "libnvidia-ml and libcuda files", scan=system_scan.scan_driver_libraries),
    Source("container.json", "json", "container and WSL markers", scan=system_scan.scan_container),
    Source("python-packages.json", "json", "NVML Python bindings installed", scan=system_scan.scan_python_packages),
    Source("target-python.json", "json", "the Python the framework probes ran in, and why that one"),
    Source("framework-torch.json", "json", "PyTorch as the target Python sees it (probe)", probe="torch"),
    Source("framework-tensorflow.json", "json", "TensorFlow as the target Python sees it (probe)", probe="tensorflow"),
    Source("framework-jax.json", "json", "JAX as the target Python sees it (probe)", probe="jax"),
    Source("framework-cupy.json", "json", "CuPy as the target Python sees it (probe)", probe="cupy"),
    # AMD GPUs and ROCm: amd-smi preferred, rocm-smi for older stacks, the KFD topology read directly for no tool.
    Source("amd-smi.txt", "command", "AMD GPUs as amd-smi sees them", argv=("amd-smi", "static", "--json")),
    Source("amd-smi-list.txt", "command", "AMD GPU list with bus ids", argv=("amd-smi", "list")),
    Source("rocm-smi.txt", "command", "AMD GPUs as rocm-smi sees them", argv=("rocm-smi", "--showallinfo", "--json")),
    Source("rocminfo.txt", "command", "the ROCm runtime's agents (gfx targets)", argv=("rocminfo",)),
    Source(
        "kfd-topology.json",
        "json",
        "the KFD topology (AMD GPUs, XGMI links) from sysfs",
        scan=scan_amd.scan_kfd_topology,
        platforms=("linux",),
    ),
    Source(
        "rocm-install.json", "json", "ROCm installs under /opt", scan=scan_amd.scan_rocm_install, platforms=("linux",)
    ),
    Source(
        "accel-device-nodes.json",
        "json",
        "/dev/kfd, /dev/dri, /dev/accel* and /dev/vfio nodes, and this user's groups",
        scan=scan_amd.scan_accel_device_nodes,
        platforms=("linux",),
    ),
    # Intel GPUs
    Source("xpu-smi.txt", "command", "Intel GPUs as xpu-smi sees them", argv=("xpu-smi", "discovery", "-j")),
    Source("sycl-ls.txt", "command", "SYCL devices (Level Zero, OpenCL)", argv=("sycl-ls",)),
    # Apple
    Source(
        "system-profiler-displays.txt",
        "command",
        "the Mac's GPUs",
        argv=("system_profiler", "SPDisplaysDataType", "-json"),
        platforms=("darwin",),
    ),
    Source("macos.json", "json", "macOS version, chip, Rosetta", scan=scan_macos.scan_macos, platforms=("darwin",)),
    # Google TPU
    Source(
        "tpu-runtime.json",
        "json",
        "the libtpu lock file and TPU settings",
        scan=scan_tpu.scan_tpu_runtime,
        platforms=("linux",),
    ),
    # Collected only when asked for (smoke, check --smoke, collect --smoke): it runs real workloads.
    # Where it runs: cloud instance, notebook platform, container image (local files only).
    Source(
        "platform.json",
        "json",
        "DMI identity, cloud-init instance data, notebook and image markers",
        scan=scan_platform.scan_platform,
        platforms=("linux",),
    ),
    # Asked by the command itself, after the rest, and only with --cloud-metadata (never by plain collection).
    Source("cloud-metadata.json", "json", "the cloud's instance metadata service (--cloud-metadata)", live=False),
    Source("smoke.json", "json", "smoke workloads: matmul, CNN step, bandwidth, all-reduce (probe)", live=False),
    Source("torch-collect-env.txt", "file", "a pasted `python -m torch.utils.collect_env` report", live=False),
    Source("tensorflow-log.txt", "file", "a pasted TensorFlow log (its GPU library lines)", live=False),
    Source(
        "pasted-text.txt",
        "file",
        "anything else a person pasted (logs, tracebacks, several tools' outputs): scanned for known errors",
        live=False,
    ),
)

SOURCE_NAMES = tuple(s.name for s in SOURCES)
# What `gpudoctor topo` needs: the wiring, the GPUs' names and links, whether they are idle, the driver's version.
TOPOLOGY_SOURCES = tuple(
    s
    for s in SOURCES
    if s.name
    in (
        "nvml.json",
        "nvidia-smi-q-x.xml",
        "nvidia-smi.txt",
        "nvidia-smi-topo-m.txt",
        "nvidia-smi-topo-p2p-r.txt",
        "nvidia-smi-nvlink-s.txt",
        "fabricmanager.txt",
        "pci-devices.json",
        "lspci.txt",
        "cpu-topology.json",
        "proc-driver-nvidia-version.txt",
        "proc-modules.txt",
        # AMD: the KFD topology holds the GPUs and their XGMI links; amd-smi names them.
        "kfd-topology.json",
        "amd-smi.txt",
    )
)
PROBE_SOURCES = tuple(s for s in SOURCES if s.probe)
MANIFEST_NAME = "manifest.json"


def source_by_name(name: str) -> Source | None:
    for source in SOURCES:
        if source.name == name:
            return source
    return None
