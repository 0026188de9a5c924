"""TensorFlow's log: what it said about the GPU libraries it tried to load.

The text is either what the TensorFlow probe captured from the framework's fd 2
and logging, or a log a person pasted (``tensorflow-log.txt``).  Only lines that
TensorFlow itself wrote count: a line must have a TensorFlow log line's shape
(the C++ ``file.cc:123]`` location, a glog/absl level prefix, or Python's
``WARNING:tensorflow:``) or be one of its fixed messages.  A user's own prints
("GPU is NOT AVAILABLE") are not TensorFlow's word, so they are left out.
"""

from __future__ import annotations

import re

from gpudoctor.evidence import sniff
from gpudoctor.facts.framework_model import TensorflowLog
from gpudoctor.facts.text_search import lines_with_any

MAX_LINES = 100
MAX_LINE_CHARS = 2000

# TF 2.1-2.13 and TSL today: "Could not load dynamic library 'libcudart.so.11.0'; dlerror: ...";
# TF 1.14/2.0 wrote "Could not dlopen library 'libcudart.so.10.0'; dlerror: ...".  Windows names DLLs the same way.
_MISSING = re.compile(r"Could not (?:load dynamic library|dlopen library) '([^']+)'")
_CANNOT_DLOPEN = re.compile(r"Cannot dlopen some GPU libraries")
# "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0.  CuDNN library needs ..."
_CUDNN_MISMATCH = re.compile(
    r"Loaded runtime CuDNN library:\s*(\d+(?:\.\d+)*)\s+but source was compiled with:\s*(\d+(?:\.\d+)*)"
)
# "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" (TF 2.16+ wraps it:
# "failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)").
_CUINIT = re.compile(r"failed call to cuInit:\s*(.+)$", re.IGNORECASE)
# libcuda.so.1 itself was not found (TF 2.14+ cudart_stub / cuda_executor).
_NO_DRIVERS = re.compile(r"Could not find cuda drivers on your machine", re.IGNORECASE)
# "Ignoring visible gpu device (device: 0, name: GeForce GT 730, ..., compute capability: 3.5) with Cuda compute
# capability 3.5. The minimum required Cuda capability is 3.7."
_TOO_OLD = re.compile(
    r"Ignoring visible gpu device .*?with Cuda compute capability (\d+\.\d+)\.?\s+"
    r"The minimum required Cuda capability is (\d+\.\d+)",
    re.IGNORECASE,
)
# TensorFlow found and set up a GPU (what it logs before any library failure, which is read separately):
# "Found device 0 with properties:", "Adding visible gpu devices: 0, 1" (TF 1.x-2.x),
# "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 30871 MB memory) -> ...",
# "Creating TensorFlow device (/gpu:0) -> (device: 0, name: Tesla K40m, ...)" (TF 1.0-1.2).
_GPU_DEVICE_CREATED = re.compile(
    r"Found device \d+ with properties|Adding visible gpu devices: \d"
    r"|Creat(?:ed|ing) (?:TensorFlow )?device \(?(?:/job:\S*?)?/(?:device:GPU|gpu):\d",
    re.IGNORECASE,
)

# The shape of a line TensorFlow (or the XLA/TSL code inside it) logged.
_LOG_SHAPE = re.compile(
    r"\.(?:cc|cpp|h):\d+\]"  # C++ location: "gpu_device.cc:2344]"
    r"|^\s*(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+:\s*)?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+"  # glog/absl prefix
    r"|^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+:\s+[IWEF]\s"  # TF <= 2.13: "2021-03-01 10:00:00.1: W tensorflow/..."
    r"|^\s*(?:WARNING|INFO|ERROR|CRITICAL):tensorflow:"  # Python logging
)
# Fixed messages that are TensorFlow's even when a paste lost the prefix.
_TF_MESSAGE = re.compile(
    r"Could not load dynamic library '|Could not dlopen library '|Cannot dlopen some GPU libraries"
    r"|Loaded runtime CuDNN library|Successfully opened dynamic library|failed call to cuInit"
    r"|Could not find cuda drivers on your machine|Ignoring visible gpu device"
    r"|Created device /job:|Skipping registering GPU devices|TF-TRT Warning",
    re.IGNORECASE,
)
# What makes a TensorFlow line worth keeping: it is about the GPU or its libraries.
_GPU_RELATED = re.compile(
    r"cuda|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|tensorrt|TF-TRT|\bgpu\b|dlopen|dynamic library"
    r"|cuInit|NUMA|compute capability|StreamExecutor|ptxas|libdevice|nvptx|\.so\.\d|\.dll\b",
    re.IGNORECASE,
)
# Lower-case words of which every GPU-related line holds one (a superset of _GPU_RELATED, for a fast first pass).
_GPU_WORDS = (
    "cuda", "cudnn", "cublas", "cufft", "curand", "cusolver", "cusparse", "nccl", "tensorrt", "tf-trt", "gpu",
    "dlopen", "dynamic library", "cuinit", "numa", "compute capability", "streamexecutor", "ptxas", "libdevice",
    "nvptx", ".so.", ".dll",
)  # fmt: skip
# Only for sniffing a lone pasted file: strings no other source writes.


def is_tensorflow_log(text: object) -> bool:
    """Whether a lone pasted text is a TensorFlow log (its own fixed strings, not a user's prints)."""
    return isinstance(text, str) and sniff.is_tensorflow_log(text)


def _is_tensorflow_line(line: str) -> bool:
    return _LOG_SHAPE.search(line) is not None or _TF_MESSAGE.search(line) is not None


def parse_tensorflow_log(text: object) -> TensorflowLog:
    """The GPU-library facts of a TensorFlow log; an empty :class:`TensorflowLog` when it says nothing of them."""
    if not isinstance(text, str):
        return TensorflowLog()
    missing_libraries: list[str] = []
    cannot_dlopen = False
    no_cuda_drivers = False
    cudnn_mismatch: tuple[str, str] | None = None
    cuinit_error: str | None = None
    too_old_gpu: tuple[str, str] | None = None
    gpu_device_created = False
    lines: list[str] = []
    for raw in lines_with_any(text, _GPU_WORDS):
        line = raw.strip()
        # Every fact below is about the GPU or its libraries: the cheap GPU test first spares a long training
        # log's progress lines the TensorFlow-line test.
        if not line or not _GPU_RELATED.search(line) or not _is_tensorflow_line(line):
            continue
        for match in _MISSING.finditer(line):
            name = match.group(1).strip()
            if name and name not in missing_libraries:
                missing_libraries.append(name)
        if _CANNOT_DLOPEN.search(line):
            cannot_dlopen = True
        if _NO_DRIVERS.search(line):
            no_cuda_drivers = True
        mismatch = _CUDNN_MISMATCH.search(line)
        if mismatch and cudnn_mismatch is None:
            cudnn_mismatch = (mismatch.group(1), mismatch.group(2))
        cuinit = _CUINIT.search(line)
        if cuinit and cuinit_error is None:
            cuinit_error = cuinit.group(1).strip()[:MAX_LINE_CHARS] or None
        gpu_device_created = gpu_device_created or _GPU_DEVICE_CREATED.search(line) is not None
        too_old = _TOO_OLD.search(line)
        if too_old and too_old_gpu is None:
            too_old_gpu = (too_old.group(1), too_old.group(2))
        # The count is capped (a retry loop can log the same failure thousands of times); the facts above are
        # still read from every line.
        if len(lines) < MAX_LINES:
            lines.append(line[:MAX_LINE_CHARS])
    return TensorflowLog(
        missing_libraries=missing_libraries,
        cannot_dlopen=cannot_dlopen,
        cudnn_mismatch=cudnn_mismatch,
        lines=lines,
        cuinit_error=cuinit_error,
        no_cuda_drivers=no_cuda_drivers,
        too_old_gpu=too_old_gpu,
        gpu_device_created=gpu_device_created,
    )
