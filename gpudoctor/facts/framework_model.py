"""Typed facts about the ML frameworks of the target Python (PyTorch, TensorFlow, JAX, CuPy).

They come from two kinds of evidence and look the same either way:

* the framework probes (``gpudoctor/probes/*.py``), run inside the target Python,
  whose JSON is stored as ``framework-torch.json``, ``framework-tensorflow.json``,
  ``framework-jax.json`` and ``framework-cupy.json``;
* a pasted ``python -m torch.utils.collect_env`` report (``torch-collect-env.txt``),
  or a pasted TensorFlow log (``tensorflow-log.txt``).

As everywhere in ``facts``: ``None`` means unknown, parsers never raise, and no
value is invented.  Versions are kept as the strings the framework reported,
normalised only where stated ("12.6", "9.1.0", "8.6").

The probe JSON contract (``probe_version`` 1), shared by every probe::

    {
      "probe": "torch" | "tensorflow" | "jax" | "cupy",
      "probe_version": 1,
      "python": {"executable", "version" ("3.12.3"), "implementation", "platform" (sys.platform),
                 "machine" (platform.machine()), "prefix", "base_prefix", "virtualenv" (bool),
                 "conda_prefix" (str|null),
                 on macOS only: "mac_version" (platform.mac_ver()[0]), "translated" (bool|null: Rosetta 2)},
      "installed": bool,                    # false: the module was not found; nothing else follows
      "distribution": {"name", "version", "installer", "direct_url", "conda_channel"} | null,
      "import_ok": bool,
      "import_error": {"type", "message", "traceback_tail"} | null,
      "import_s": float,
      "log_lines": [str],                   # what the framework wrote to fd 2 / logging while probed
      "warnings": [str],                    # Python warnings raised while probed
      "loaded_libraries": [str],            # CUDA-related shared objects mapped into the process
      "nvidia_packages": {dist name: version},   # the pip nvidia-* wheels in that environment
      ...framework-specific keys, documented in each probe and read by ``gpudoctor/facts/framework_probe.py``
    }
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpudoctor.facts.sources_state import Missing

# The protocol's constants have their one home in gpudoctor.probes.protocol; named here for this model's readers.
from gpudoctor.probes.protocol import FRAMEWORKS as FRAMEWORKS
from gpudoctor.probes.protocol import PROBE_VERSION as PROBE_VERSION
from gpudoctor.probes.protocol import probe_file_name as probe_file_name

if TYPE_CHECKING:
    from gpudoctor.facts.tpu_model import TpuDevice  # a TPU's detail, imported where a TPU is seen


@dataclass(frozen=True)
class PythonTarget:
    """The interpreter a probe ran in (or the one a pasted report describes)."""

    executable: str | None = None
    version: str | None = None  # "3.12.3"
    implementation: str | None = None  # "CPython"
    platform: str | None = None  # sys.platform: "linux", "win32", "darwin"
    machine: str | None = None  # "x86_64", "aarch64", "AMD64", "arm64"
    prefix: str | None = None
    virtualenv: bool | None = None
    conda_prefix: str | None = None
    mac_version: str | None = None  # platform.mac_ver()[0], "14.4.1" (darwin only)
    translated: bool | None = None  # True: an x86_64 process under Rosetta 2 (sysctl.proc_translated; darwin only)

    @property
    def major_minor(self) -> str | None:
        parts = (self.version or "").split(".")
        return ".".join(parts[:2]) if len(parts) >= 2 and parts[0].isdecimal() and parts[1].isdecimal() else None

    @property
    def os(self) -> str | None:
        """ "linux", "windows" or "macos" (the knowledge base's words), None when unknown."""
        platform = (self.platform or "").lower()
        if platform.startswith("linux"):
            return "linux"
        if platform.startswith(("win", "cygwin")):
            return "windows"
        if platform.startswith("darwin"):
            return "macos"
        return None


@dataclass(frozen=True)
class ProbeRun:
    """How running one probe went.

    ``status``:
      "ok"            the framework imported and was probed
      "not_installed" the module is not importable in the target Python
      "import_error"  importing raised (``error`` has the exception line, ``output_tail`` the traceback)
      "crashed"       the probe process died (a signal, a segfault) or printed no JSON
      "timed_out"     the probe did not finish within its limit
      "not_collected" no evidence for this framework at all (e.g. probes were skipped)
      "from_report"   the facts come from a pasted report, not from a probe
    """

    status: str = "not_collected"
    error: str | None = None
    output_tail: str | None = None
    exit_code: int | None = None
    duration_s: float | None = None


@dataclass(frozen=True)
class LoadedLibrary:
    """A CUDA-related shared object a framework process really mapped (from /proc/self/maps)."""

    path: str
    name: str  # the SONAME stem: "libcudart", "libcudnn", "libnvJitLink", "libcuda"
    version: str | None = None  # from the file name: "12" for libcudart.so.12, "9.1.0" for libcudnn.so.9.1.0
    from_pip: bool = False  # under site-packages/nvidia/... (a pip nvidia-* wheel)


@dataclass(frozen=True)
class InstallOrigin:
    """Where a framework distribution came from, as far as the environment records it."""

    installer: str | None = None  # "pip", "uv", "conda", "poetry"... (the dist's INSTALLER file)
    url: str | None = None  # direct_url.json's url (a local wheel, a VCS checkout, an index file URL)
    conda_channel: str | None = None  # from conda-meta, when conda installed it
    index_hint: str | None = None  # derived: "pypi", "download.pytorch.org/whl/cu128", "conda:<channel>"


@dataclass(frozen=True)
class FrameworkDevice:
    """One accelerator as a framework enumerates it."""

    index: int | None = None
    name: str | None = None
    compute_capability: str | None = None  # "8.6"
    memory_total_mib: int | None = None
    platform: str | None = None  # "gpu"/"cuda"/"cpu"/"rocm"/"xpu" (JAX platform, TF device type)
    arch_name: str | None = None  # ROCm's gcnArchName, "gfx90a:sramecc+:xnack-"


@dataclass(frozen=True)
class TorchFacts:
    source: str = "probe"  # "probe" or "collect_env"
    python: PythonTarget | None = None
    run: ProbeRun = field(default_factory=ProbeRun)
    version: str | None = None  # "2.6.0+cu126"
    cuda: str | None = None  # torch.version.cuda, "12.6"; None on CPU and ROCm builds
    hip: str | None = None  # torch.version.hip
    cudnn: str | None = None  # "9.1.0" (torch.backends.cudnn.version() 90100 normalised)
    arch_list: list[str] = field(default_factory=list)  # torch.cuda.get_arch_list(): "sm_50", "compute_90"
    arch_list_known: bool = False  # an empty list is meaningful only when this is True
    is_available: bool | None = None
    device_count: int | None = None
    devices: list[FrameworkDevice] = field(default_factory=list)
    cuda_init_error: str | None = None  # verbatim text of the CUDA initialisation failure
    driver_cuda: str | None = None  # the driver's CUDA as torch saw it (cudaDriverGetVersion), "12.4"
    nccl: str | None = None  # "2.21.5"
    debug_build: bool | None = None
    warnings: list[str] = field(default_factory=list)
    log_lines: list[str] = field(default_factory=list)
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    nvidia_packages: dict[str, str] = field(default_factory=dict)
    origin: InstallOrigin = field(default_factory=InstallOrigin)
    # Other backends (None: the probe/report did not say):
    mps_built: bool | None = None  # torch.backends.mps.is_built()
    mps_available: bool | None = None  # torch.backends.mps.is_available()
    xpu_built: bool | None = None  # torch.xpu._is_compiled() (or "XPU used to build PyTorch" in a report)
    xpu_available: bool | None = None  # torch.xpu.is_available()
    xpu_devices: list[FrameworkDevice] = field(default_factory=list)
    rocm_runtime: str | None = None  # "HIP runtime version" from a collect_env report
    miopen: str | None = None  # "MIOpen runtime version" from a collect_env report
    # From a collect_env report only:
    cuda_runtime_system: str | None = None  # "CUDA runtime version": the toolkit collect_env found (nvcc)
    cudnn_system: list[str] = field(default_factory=list)  # the cuDNN files collect_env listed
    unsupported_gpu: str | None = None  # "NVIDIA GeForce RTX 5090 D" from the "not compatible" warning
    unsupported_capability: str | None = None  # "12.0" from "CUDA capability sm_120"

    @property
    def base_version(self) -> str | None:
        return self.version.split("+", 1)[0] if self.version else None

    @property
    def local_tag(self) -> str | None:
        """ "cu126", "cpu", "rocm6.2"... or None for a wheel without a local version (PyPI, conda)."""
        if self.version and "+" in self.version:
            return self.version.split("+", 1)[1] or None
        return None

    @property
    def cpu_only(self) -> bool | None:
        """True for a build with neither CUDA, ROCm nor Intel XPU; None while nothing says which build it is.

        macOS wheels count as CPU-only here whatever ``mps_built`` says: MPS is judged on its own.
        """
        if self.version is None:
            return None
        if self.cuda or self.hip or self.xpu_built:
            return False
        if self.source == "collect_env" or self.run.status == "ok":
            return True
        return None


@dataclass(frozen=True)
class TensorflowLog:
    """What TensorFlow logged about its GPU libraries (from the probe's captured stderr or a pasted log)."""

    missing_libraries: list[str] = field(default_factory=list)  # "libcudart.so.11.0", "libcudnn.so.8"
    cannot_dlopen: bool = False  # "Cannot dlopen some GPU libraries" (it then skips every GPU)
    cudnn_mismatch: tuple[str, str] | None = None  # (loaded, compiled): "Loaded runtime CuDNN library: X but..."
    lines: list[str] = field(default_factory=list)  # the GPU-related lines, verbatim
    cuinit_error: str | None = None  # "CUDA_ERROR_NO_DEVICE: no CUDA-capable device..." from "failed call to cuInit: "
    no_cuda_drivers: bool = False  # "Could not find cuda drivers on your machine, GPU will not be used."
    too_old_gpu: tuple[str, str] | None = None  # (device CC, minimum CC): "Ignoring visible gpu device ... 3.7."
    gpu_device_created: bool = False  # "Adding visible gpu devices: 0" / "Created TensorFlow device (...GPU:0 ...)"


@dataclass(frozen=True)
class TensorflowFacts:
    source: str = "probe"  # "probe" or "log"
    python: PythonTarget | None = None
    run: ProbeRun = field(default_factory=ProbeRun)
    version: str | None = None  # "2.18.0"
    distribution: str | None = None  # "tensorflow", "tensorflow-cpu", "tf-nightly"...
    built_with_cuda: bool | None = None
    build_cuda: str | None = None  # get_build_info()["cuda_version"], "12.5.1"
    build_cudnn: str | None = None  # "9"
    build_compute_capabilities: list[str] = field(default_factory=list)  # "sm_60", "compute_90"
    gpus: list[FrameworkDevice] = field(default_factory=list)
    gpus_listed: bool = False  # list_physical_devices('GPU') ran (an empty list is meaningful)
    keras_version: str | None = None
    rocm_build: bool | None = None  # get_build_info()["is_rocm_build"]
    build_rocm: str | None = None  # get_build_info()["rocm_version"]
    metal_plugin: str | None = None  # version of the installed tensorflow-metal distribution
    log: TensorflowLog = field(default_factory=TensorflowLog)
    warnings: list[str] = field(default_factory=list)
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    nvidia_packages: dict[str, str] = field(default_factory=dict)
    origin: InstallOrigin = field(default_factory=InstallOrigin)


@dataclass(frozen=True)
class JaxFacts:
    python: PythonTarget | None = None
    run: ProbeRun = field(default_factory=ProbeRun)
    version: str | None = None  # jax
    jaxlib_version: str | None = None
    plugins: dict[str, str] = field(default_factory=dict)  # "jax-cuda12-plugin": "0.4.38", "jax-cuda12-pjrt": ...
    default_backend: str | None = None  # "gpu", "cpu", "tpu"
    devices: list[FrameworkDevice] = field(default_factory=list)
    cpu_fallback_warning: str | None = None  # "An NVIDIA GPU may be present on this machine, but a CUDA-enabled..."
    backend_errors: list[str] = field(default_factory=list)  # GPU backend initialisation failures, verbatim
    log_lines: list[str] = field(default_factory=list)
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    nvidia_packages: dict[str, str] = field(default_factory=dict)
    # TPU detail (probe "libtpu" and the devices' TPU attributes):
    libtpu: dict[str, str] | None = None  # {"libtpu": "0.0.2"}; {} none installed; None: the probe did not say
    tpu_devices: tuple[TpuDevice, ...] = ()  # jax.devices() entries whose platform is "tpu"


@dataclass(frozen=True)
class CupyFacts:
    python: PythonTarget | None = None
    run: ProbeRun = field(default_factory=ProbeRun)
    version: str | None = None
    distribution: str | None = None  # "cupy-cuda12x", "cupy-cuda11x", "cupy" (source build)
    runtime_cuda: str | None = None  # cupy.cuda.runtime.runtimeGetVersion() as "12.4"
    driver_cuda: str | None = None  # driverGetVersion() as "12.4"
    device_count: int | None = None
    devices: list[FrameworkDevice] = field(default_factory=list)
    error: str | None = None  # the CUDA error text when the runtime or device query failed
    loaded_libraries: list[LoadedLibrary] = field(default_factory=list)
    nvidia_packages: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CollectEnvReport:
    """Everything a ``python -m torch.utils.collect_env`` report says (classic and sectioned layouts)."""

    torch_version: str | None = None
    debug_build: bool | None = None
    cuda_build: str | None = None  # "CUDA used to build PyTorch"; None for "Could not collect"/"None"
    rocm_build: str | None = None
    os: str | None = None  # "Ubuntu 24.10 (x86_64)"
    gcc: str | None = None
    libc: str | None = None
    python_version: str | None = None  # "3.12.9"
    python_platform: str | None = None  # "Linux-6.11.0-21-generic-x86_64-with-glibc2.40"
    cuda_available: bool | None = None
    cuda_runtime: str | None = None  # "CUDA runtime version" (a system toolkit), None when not collected
    cuda_module_loading: str | None = None
    gpu_names: list[str] = field(default_factory=list)  # in the report's order, "GPU 0: " prefixes removed
    driver_version: str | None = None
    cudnn: list[str] = field(default_factory=list)  # versions or paths as listed
    pip_packages: dict[str, str] = field(default_factory=dict)  # "[pip3] torch==2.2.2" lines
    conda_packages: dict[str, str] = field(default_factory=dict)  # "[conda] name version build channel"
    conda_channels: dict[str, str] = field(default_factory=dict)  # name -> channel, where the line has a channel
    unsupported_gpu: str | None = None  # from the "... with CUDA capability sm_120 is not compatible" warning
    unsupported_capability: str | None = None  # "12.0"
    supported_arches: list[str] = field(default_factory=list)  # "sm_50", ... from the same warning
    layout: str | None = None  # "classic" or "sectioned"
    machine: str | None = None  # derived: from "Python platform", the OS line "(x86_64)" or Windows' "(AMD64)"
    python_prefix: str | None = None  # derived: the environment prefix in the path of torch's own warning
    hip_runtime: str | None = None  # "HIP runtime version"
    miopen_runtime: str | None = None  # "MIOpen runtime version"
    xpu_available: bool | None = None  # "Is XPU available"
    xpu_build: str | None = None  # "XPU used to build PyTorch" ("20250101"); None for "N/A"/"None"
    xpu_gpu_names: list[str] = field(default_factory=list)  # the XPU device names under "Is XPU available"
    intel_gpu_driver: list[str] = field(default_factory=list)  # the "Intel GPU driver version" lines, verbatim
    cpu_name: str | None = None  # lscpu "Model name:", macOS "CPU:" block ("Apple M2 Max"), Windows "Name:"
    gpu_gfx: list[str] = field(default_factory=list)  # "gfx90a:sramecc+:xnack-" from the GPU lines
    xpu_devices: list[FrameworkDevice] = field(default_factory=list)  # "Intel GPU models detected": torch's view
    # Why a field above is None (or empty) although its line is there: the report printed "Could not collect"
    # (FAILED), "N/A" (NOT_APPLICABLE), "None" or "No CUDA" (ABSENT); ``error`` keeps the word as printed.
    # Keyed by the field's name ("driver_version", "cuda_available", "gpu_names", ...); a line that is not in
    # the report at all has no entry.
    missing: dict[str, Missing] = field(default_factory=dict)
