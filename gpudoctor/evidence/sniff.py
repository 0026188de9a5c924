"""Tell which evidence source a lone pasted file is, from its content.

A maintainer often gets one output pasted into an issue, saved under any name.
The markers are the outputs' own fixed strings.  The recognisers of a collect_env
report and of a TensorFlow log live here, in the evidence layer, so that sniffing
needs no parser; the facts parsers of those texts use these same markers.
"""

from __future__ import annotations

import re

_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nvidia-smi-q-x.xml", re.compile(r"<nvidia_smi_log\b")),
    ("proc-driver-nvidia-version.txt", re.compile(r"^\s*NVRM version:", re.MULTILINE)),
    ("nvcc-version.txt", re.compile(r"Cuda compilation tools|NVIDIA \(R\) Cuda compiler driver")),
    # topo -p2p before topo -m: both start with a "GPU0  X" row; only the P2P matrix has these cells and legend.
    (
        "nvidia-smi-topo-p2p-r.txt",
        re.compile(
            r"^\s*GPU0\s+X\s+(?:OK|CNS|GNS|TNS|NS|DR|DI|U)\b|"
            r"^\s*GNS\s+=\s+GPU not supported",
            re.MULTILINE,
        ),
    ),
    (
        "nvidia-smi-topo-m.txt",
        re.compile(
            r"^\s*GPU0\s.*(CPU Affinity|NUMA Affinity|\bX\b)|"
            r"Option -m is missing its value",
            re.MULTILINE,
        ),
    ),
    # nvlink -s before -L: both name each GPU as "GPU 0: <name> (UUID: ...)".
    ("nvidia-smi-nvlink-s.txt", re.compile(r"^\s*Link \d+: (?:\d+(?:\.\d+)? GB/s|<inactive>)", re.MULTILINE)),
    ("lspci.txt", re.compile(r"^\s*LnkSta:\s", re.MULTILINE)),
    (
        "nvidia-smi.txt",
        re.compile(
            r"NVIDIA-SMI|Failed to initialize NVML|No devices were found|"
            r"couldn't communicate with the NVIDIA driver"
        ),
    ),
    ("nvidia-smi-L.txt", re.compile(r"^GPU \d+: .*\(UUID: ", re.MULTILINE)),
    ("ldconfig-p.txt", re.compile(r"libs found in cache|^\s+\S+\.so[.\d]* \(", re.MULTILINE)),
    ("os-release", re.compile(r"^(PRETTY_NAME|VERSION_ID)=", re.MULTILINE)),
    # An lspci listing cut before its link lines (`lspci -s 29:00.0 -vvv`): a GPU's or accelerator's device line.
    (
        "lspci.txt",
        re.compile(
            r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] "
            r"(?:VGA compatible controller|3D controller|Display controller|Processing accelerators)( \[[0-9a-f]{4}\])?: ",
            re.MULTILINE,
        ),
    ),
    # Intel: xpu-smi discovery (its table header, boxed or borderless, or -j's top key); sycl-ls (old and new brackets).
    ("xpu-smi.txt", re.compile(r"^[ \t|]*Device ID[ \t|]+Device Information\b|\"device_list\"\s*:", re.MULTILINE)),
    (
        "sycl-ls.txt",
        re.compile(
            r"^\s*\[(?:ext_oneapi_)?(?:level_zero|opencl|cuda|hip|native_cpu):(?:gpu|cpu|acc|fpga)[:\]]", re.MULTILINE
        ),
    ),
    # AMD: amd-smi static (text: "GPU: 0" then its "ASIC:" block; JSON: its own keys), then amd-smi list.
    (
        "amd-smi.txt",
        re.compile(r'^GPU: \d+[ \t]*\r?\n[ \t]+ASIC:|"gpu_data"\s*:|"target_graphics_version"\s*:', re.MULTILINE),
    ),
    ("amd-smi-list.txt", re.compile(r"^GPU: \d+[ \t]*\r?\n[ \t]+BDF: ", re.MULTILINE)),
    (
        "rocm-smi.txt",
        re.compile(
            r'ROCm System Management Interface|^GPU\[\d+\][ \t]*:|"Card [Ss]eries"\s*:|"(?:GPU|Device) ID"\s*:',
            re.MULTILINE,
        ),
    ),
    ("rocminfo.txt", re.compile(r"ROCk module (?:version \S+ )?is (?:NOT )?loaded|^HSA Agents", re.MULTILINE)),
    # system_profiler SPDisplaysDataType: its text's title line, or the -json form's top key.
    ("system-profiler-displays.txt", re.compile(r'^\s*Graphics/Displays:\s*$|"SPDisplaysDataType"\s*:', re.MULTILINE)),
)


# A collect_env report (classic, or vLLM's sectioned one): its own key lines.
COLLECT_ENV_KEY = re.compile(r"^\s*CUDA used to build PyTorch\s*:", re.MULTILINE)
COLLECT_ENV_BANNER = "Collecting environment information"
COLLECT_ENV_TORCH_VERSION = re.compile(r"^\s*PyTorch version\s*:", re.MULTILINE)
# A TensorFlow log: strings no other source writes (a user's own prints about the GPU don't count).
TENSORFLOW_LOG_MARKER = re.compile(
    r"Could not load dynamic library '|Could not dlopen library '|Cannot dlopen some GPU libraries"
    r"|Loaded runtime CuDNN library|tensorflow/(?:core|stream_executor|compiler|tsl|python)/\S+\.(?:cc|py):\d+"
    r"|gpu_device\.cc:\d+\]|dso_loader\.cc:\d+\]|cudart_stub\.cc:\d+\]|^(?:WARNING|INFO|ERROR):tensorflow:"
    r"|This TensorFlow binary is optimized|Created device /job:localhost",
    re.MULTILINE,
)
_HEAD = 200_000


def is_collect_env(text: str) -> bool:
    """Whether a lone pasted text is a ``python -m torch.utils.collect_env`` report (classic or sectioned)."""
    head = text[:_HEAD]
    if COLLECT_ENV_KEY.search(head):
        return True
    return COLLECT_ENV_BANNER in head and COLLECT_ENV_TORCH_VERSION.search(head) is not None


def is_tensorflow_log(text: str) -> bool:
    """Whether a lone pasted text is a TensorFlow log (its own fixed strings, not a user's prints)."""
    return TENSORFLOW_LOG_MARKER.search(text[:_HEAD]) is not None


def guess_source_name(text: str) -> str | None:
    """The snapshot file name of the source ``text`` came from, or None when nothing in it says."""
    head = text[:_HEAD]
    # First: a collect_env report quotes other tools' words (nvidia-smi's GPU names, a topology table),
    # and a TensorFlow log is recognised by its own log format and fixed messages.
    if is_collect_env(head):
        return "torch-collect-env.txt"
    if is_tensorflow_log(head):
        return "tensorflow-log.txt"
    for name, marker in _MARKERS:
        if marker.search(head):
            return name
    return None
