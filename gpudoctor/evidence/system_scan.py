"""Read the machine's files into JSON-able evidence records.

Each ``scan_*`` function reads files only (no commands) and returns plain data:
what exists, what it says.  Interpretation happens later, in ``gpudoctor.facts``.
Every function takes ``root`` so the same code reads a chroot or a container's
file system.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import sys
from collections.abc import Mapping

NVIDIA_PCI_VENDOR = "0x10de"
# What the PCI scan keeps besides every NVIDIA function (GPUs, NVSwitches): the display and processing-accelerator
# functions of the other accelerator vendors (AMD, Intel), and every function of Google's (TPUs; which of them
# are TPUs, and not its virtual NIC, is decided by gpudoctor.kb.accelerator_pci). A superset, kept small.
_ACCELERATOR_VENDORS = ("0x1002", "0x8086")
_ACCELERATOR_CLASSES = ("0x03", "0x12")
_GOOGLE_PCI_VENDOR = "0x1ae0"

# Environment variables that shape GPU behaviour.  An allow-list, never a dump:
# a snapshot is meant to be shared and must not carry secrets.
ENV_ALLOW = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDA_MODULE_LOADING",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_DISABLE",
    "CUDNN_PATH",
    "CUDNN_HOME",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "NVIDIA_DISABLE_REQUIRE",
    "NVIDIA_MIG_CONFIG_DEVICES",
    "NVIDIA_MIG_MONITOR_DEVICES",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PATH",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "VIRTUAL_ENV",
    "TORCH_CUDA_ARCH_LIST",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TF_CPP_MIN_LOG_LEVEL",
    "TF_FORCE_GPU_ALLOW_GROWTH",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "JAX_PLATFORMS",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_SOCKET_IFNAME",
    "OMP_NUM_THREADS",
    "container",
    "WSL_DISTRO_NAME",
    # AMD ROCm
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION",
    "ROCM_PATH",
    "HIP_PATH",
    "PYTORCH_ROCM_ARCH",
    # Intel
    "ZE_AFFINITY_MASK",
    "ONEAPI_DEVICE_SELECTOR",
    "SYCL_DEVICE_FILTER",
    # Apple
    "PYTORCH_ENABLE_MPS_FALLBACK",
    # Google TPU
    "TPU_VISIBLE_DEVICES",
    "TPU_ACCELERATOR_TYPE",
    "ALLOW_MULTIPLE_LIBTPU_LOAD",
    "PJRT_DEVICE",
)
# Only the presence of these is recorded (their values can name hosts or hold tokens).
ENV_PRESENCE_ONLY = (
    "KUBERNETES_SERVICE_HOST",
    "WSL_INTEROP",
    "SLURM_JOB_ID",
    "SINGULARITY_CONTAINER",
    "APPTAINER_CONTAINER",
)

_LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib/x86_64-linux-gnu/nvidia/current",
    "/usr/lib/wsl/lib",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
)


def _read(path: str, limit: int = 200_000) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return None


def _join(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/")) if root not in ("", "/") else path


def _keep_pci_function(path: str, vendor: str) -> bool:
    if vendor in (NVIDIA_PCI_VENDOR, _GOOGLE_PCI_VENDOR):
        return True
    if vendor not in _ACCELERATOR_VENDORS:
        return False
    return (_read(os.path.join(path, "class")) or "").strip().lower().startswith(_ACCELERATOR_CLASSES)


def scan_pci(root: str = "/") -> dict[str, object]:
    """Accelerator functions on the PCI bus (every NVIDIA one; AMD, Intel and Google GPUs/TPUs), from sysfs:
    works with no driver loaded."""
    base = _join(root, "/sys/bus/pci/devices")
    devices: list[dict[str, object]] = []
    try:
        addresses = sorted(os.listdir(base))
    except OSError as exc:
        return {"readable": False, "error": str(exc), "scanned": 0, "devices": []}
    for address in addresses:
        path = os.path.join(base, address)
        vendor = (_read(os.path.join(path, "vendor")) or "").strip().lower()
        if not _keep_pci_function(path, vendor):
            continue
        record: dict[str, object] = {"address": address, "vendor": vendor}
        for attribute in (
            "device",
            "class",
            "subsystem_vendor",
            "subsystem_device",
            "numa_node",
            "local_cpulist",
            "current_link_speed",
            "current_link_width",
            "max_link_speed",
            "max_link_width",
        ):
            value = _read(os.path.join(path, attribute))
            record[attribute] = value.strip() if value is not None else None
        driver_link = os.path.join(path, "driver")
        record["driver"] = os.path.basename(os.readlink(driver_link)) if os.path.islink(driver_link) else None
        devices.append(record)
    dmi = {
        key: (_read(_join(root, f"/sys/class/dmi/id/{key}")) or "").strip() or None
        for key in ("sys_vendor", "product_name")
    }
    return {"readable": True, "scanned": len(addresses), "devices": devices, "dmi": dmi}


def scan_cpu_topology(root: str = "/") -> dict[str, object]:
    """The CPUs this process may run on, and each NUMA node's CPUs.

    A GPU fed from the far socket's CPUs loses host-to-device bandwidth; comparing the process's
    affinity (taskset, numactl, a Slurm or container cgroup) with the GPU's NUMA node tells.
    """
    try:
        allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    except OSError:
        allowed = None
    nodes: dict[str, str] = {}
    for path in sorted(glob.glob(_join(root, "/sys/devices/system/node/node[0-9]*"))):
        cpus = _read(os.path.join(path, "cpulist"))
        if cpus is not None:
            nodes[os.path.basename(path)[len("node") :]] = cpus.strip()
    cgroup = None
    for name in ("/sys/fs/cgroup/cpuset.cpus.effective", "/sys/fs/cgroup/cpuset/cpuset.effective_cpus"):
        text = _read(_join(root, name))
        if text is not None:
            cgroup = text.strip()
            break
    return {"process_cpus": allowed, "cpu_count": os.cpu_count(), "numa_nodes": nodes, "cgroup_cpuset": cgroup}


def scan_device_nodes(root: str = "/") -> dict[str, object]:
    """``/dev/nvidia*`` nodes: type, mode and whether this user may open them."""
    nodes: dict[str, object] = {}
    patterns = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dxg")
    for pattern in patterns:
        for path in sorted(glob.glob(_join(root, pattern))):
            try:
                info = os.stat(path)
            except OSError as exc:
                nodes[path] = {"error": str(exc)}
                continue
            nodes[path] = {
                "char_device": stat.S_ISCHR(info.st_mode),
                "directory": stat.S_ISDIR(info.st_mode),
                "mode": oct(stat.S_IMODE(info.st_mode)),
                "uid": info.st_uid,
                "gid": info.st_gid,
                "major": os.major(info.st_rdev) if stat.S_ISCHR(info.st_mode) else None,
                "minor": os.minor(info.st_rdev) if stat.S_ISCHR(info.st_mode) else None,
                "readable": os.access(path, os.R_OK),
                "writable": os.access(path, os.W_OK),
            }
    return {"nodes": nodes, "uid": os.getuid(), "groups": sorted(os.getgroups())}


def _toolkit_record(path: str) -> dict[str, object]:
    real = os.path.realpath(path)
    record: dict[str, object] = {
        "path": path,
        "realpath": real,
        "version.json": _read(os.path.join(real, "version.json")),
        "version.txt": _read(os.path.join(real, "version.txt")),
        "nvcc": os.path.isfile(os.path.join(real, "bin", "nvcc")),
        "dist_info": sorted(os.path.basename(p) for p in glob.glob(os.path.join(real, "dist-info", "*.dist-info"))),
        "cudart": sorted(
            {
                os.path.basename(p)
                for p in glob.glob(os.path.join(real, "lib*", "libcudart.so*"))
                + glob.glob(os.path.join(real, "targets", "*", "lib", "libcudart.so*"))
            }
        ),
    }
    return record


def scan_cuda_toolkits(root: str = "/", environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """Every CUDA toolkit directory we can find, with its version files as they are."""
    env = os.environ if environ is None else environ
    candidates: list[str] = []
    for pattern in (
        "/usr/local/cuda",
        "/usr/local/cuda-*",
        "/opt/cuda",
        "/opt/cuda-*",
        "/usr/lib/cuda",
        "/usr/lib/nvidia-cuda-toolkit",
    ):
        candidates.extend(sorted(glob.glob(_join(root, pattern))))
    for variable in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        value = env.get(variable)
        if value:
            candidates.append(value)
    seen: set[str] = set()
    toolkits: list[dict[str, object]] = []
    links: dict[str, str] = {}
    for path in candidates:
        if not os.path.isdir(path):
            continue
        if os.path.islink(path):
            links[path] = os.path.realpath(path)
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        toolkits.append(_toolkit_record(path))
    return {"toolkits": toolkits, "links": links}


_CUDNN_HEADER_GLOBS = (
    "/usr/include/cudnn_version.h",
    "/usr/include/cudnn_version_v*.h",
    "/usr/include/cudnn.h",
    "/usr/include/*-linux-gnu/cudnn_version*.h",
    "/usr/local/cuda*/include/cudnn_version.h",
    "/usr/local/cuda*/include/cudnn.h",
    "/opt/cudnn*/include/cudnn_version.h",
)
_CUDNN_LIB_GLOBS = tuple(f"{d}/libcudnn*.so*" for d in _LIB_DIRS) + (
    "/usr/local/cuda*/lib64/libcudnn*.so*",
    "/usr/local/cuda*/lib/libcudnn*.so*",
    "/usr/local/cuda*/targets/*/lib/libcudnn*.so*",
    "/opt/cudnn*/lib*/libcudnn*.so*",
)
_DEFINE_LINE = re.compile(r"^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\b.*$", re.MULTILINE)


def scan_cudnn(root: str = "/") -> dict[str, object]:
    """cuDNN headers (only their version lines) and library files in the usual places."""
    headers: dict[str, str] = {}
    for pattern in _CUDNN_HEADER_GLOBS:
        for path in sorted(glob.glob(_join(root, pattern))):
            text = _read(path, limit=400_000)
            if text is not None:
                headers[path] = "\n".join(m.group(0) for m in _DEFINE_LINE.finditer(text))
    libraries: set[str] = set()
    for pattern in _CUDNN_LIB_GLOBS:
        libraries.update(glob.glob(_join(root, pattern)))
    return {"headers": headers, "libraries": sorted(libraries)}


def scan_driver_libraries(root: str = "/", environ: Mapping[str, str] | None = None) -> dict[str, list[dict[str, str]]]:
    """Where libnvidia-ml and libcuda live and which versioned file each name resolves to."""
    env = os.environ if environ is None else environ
    dirs = list(_LIB_DIRS) + [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    found: dict[str, list[dict[str, str]]] = {"libnvidia-ml": [], "libcuda": []}
    seen: set[str] = set()
    for directory in dirs:
        for stem in found:
            for path in sorted(glob.glob(os.path.join(_join(root, directory), f"{stem}.so*"))):
                if path in seen:
                    continue
                seen.add(path)
                found[stem].append({"path": path, "realpath": os.path.realpath(path)})
    return found


def scan_environment(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """GPU-related environment variables from the allow-list; presence only for the sensitive ones."""
    env = os.environ if environ is None else environ
    from gpudoctor.evidence import markers_image, markers_notebook

    allowed = ENV_ALLOW + markers_notebook.ENV_VALUES + markers_image.ENV_VALUES
    presence = ENV_PRESENCE_ONLY + markers_notebook.ENV_PRESENCE + markers_image.ENV_PRESENCE
    values = {name: env[name] for name in allowed if name in env}
    present = sorted(name for name in presence if name in env)
    # Whether each loader-path entry exists can only be seen here, on the machine itself.
    missing = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d and not os.path.isdir(d)]
    return {"variables": values, "present": present, "missing_library_dirs": missing}


def scan_container(root: str = "/") -> dict[str, object]:
    """Markers that say we run inside a container or WSL."""
    cgroup = _read(_join(root, "/proc/1/cgroup"), limit=4000)
    wsl_dir = _join(root, "/usr/lib/wsl/lib")
    try:
        wsl_files = sorted(os.listdir(wsl_dir))
    except OSError:
        wsl_files = None
    return {
        "dockerenv": os.path.exists(_join(root, "/.dockerenv")),
        "containerenv": os.path.exists(_join(root, "/run/.containerenv")),
        "cgroup": cgroup,
        "kubernetes_serviceaccount": os.path.isdir(_join(root, "/var/run/secrets/kubernetes.io")),
        "wsl_lib_files": wsl_files,
    }


def scan_python_packages() -> dict[str, object]:
    """The NVML bindings of the Python running gpudoctor, and which file ``import pynvml`` would load.

    Found without importing pynvml: importing a broken legacy copy is the very
    failure this evidence is there to diagnose.
    """
    import importlib.util

    from gpudoctor.distributions import find_distribution

    distributions: dict[str, object] = {}
    for name in ("nvidia-ml-py", "pynvml", "nvidia-ml-py3"):
        dist = find_distribution(name)
        if dist is None:
            continue
        files = dist.files()
        distributions[name] = {
            "version": dist.version,
            "provides_pynvml_module": any(f == "pynvml.py" or f.startswith("pynvml/") for f in files),
        }
    try:
        spec = importlib.util.find_spec("pynvml")
    except (ImportError, ValueError):
        spec = None
    return {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "distributions": distributions,
        "pynvml_module_file": spec.origin if spec else None,
    }
