"""The TensorFlow smoke's devices: the CPU and the GPUs TensorFlow sees, each with the facts the contract lists.

Runs inside the target Python with TensorFlow (untyped here: ``Any``).  A :class:`Device` is a TensorFlow
device name ('/CPU:0', '/GPU:N') plus its record.  GPUs get memory growth before anything runs, so a GPU
shared with another job is not taken whole, and their free memory comes from NVML by ctypes (TensorFlow
only tells its own allocator's use), else from what TensorFlow's allocator was given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
    from . import _smoke_helpers as helpers
else:
    import _probe_common as common
    import _smoke_helpers as helpers

if TYPE_CHECKING:
    from collections.abc import Sequence


class Device:
    """One place to run: ``tf_name`` is what ``tf.device`` takes, ``record`` the contract's device entry."""

    def __init__(self, tf_name: str, record: dict[str, Any]) -> None:
        self.tf_name = tf_name
        self.record = record

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def kind(self) -> str:
        return str(self.record["kind"])

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    def capability(self) -> tuple[int, int] | None:
        """(major, minor) of a CUDA GPU, or None."""
        try:
            major, minor = str(self.record.get("capability")).split(".")[:2]
            return int(major), int(minor)
        except (ValueError, TypeError):
            return None

    def free_bytes(self) -> int | None:
        free = self.record.get("memory_free_mib")
        return free * (1 << 20) if isinstance(free, int) and free > 0 else None


def cpu_device() -> Device:
    name = helpers.cpu_name(helpers.cpuinfo(), machine_fallback=False)
    return Device("/CPU:0", {"id": "cpu", "kind": "cpu", "name": name, "threads": helpers.cpu_threads()})


def nvml_memory(pci_bus_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """{pci bus id: (total bytes, free bytes)} from NVML through ctypes; {} when NVML is not usable.

    TensorFlow tells its own allocator's use (``get_memory_info``), not what other processes left free.
    """
    import ctypes

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    found: dict[str, tuple[int, int]] = {}
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return found
    init = getattr(nvml, "nvmlInit_v2", None) or getattr(nvml, "nvmlInit", None)
    if init is None or init() != 0:
        return found
    try:
        by_bus = getattr(nvml, "nvmlDeviceGetHandleByPciBusId_v2", None) or nvml.nvmlDeviceGetHandleByPciBusId
        for bus_id in pci_bus_ids:
            handle = ctypes.c_void_p()
            if by_bus(bus_id.encode("ascii"), ctypes.byref(handle)) != 0:
                continue
            memory = Memory()
            if nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory)) == 0:
                found[bus_id] = (int(memory.total), int(memory.free))
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return found


def _desc_field(desc: str | None, name: str) -> str | None:
    """A field of TensorFlow's physical_device_desc: "device: 0, name: X, pci bus id: 0000:01:00.0, ..."."""
    for part in (desc or "").split(", "):
        key, sep, value = part.partition(": ")
        if sep and key.strip() == name:
            return value.strip()
    return None


def _local_devices(tf: Any) -> dict[str, Any]:
    """TensorFlow's device_lib view (private but stable: its only source of the PCI bus id), by "GPU:N"."""
    from tensorflow.python.client import device_lib

    # Growth here too: without it a fresh allocator takes nearly all of the GPU's memory.
    config = tf.compat.v1.ConfigProto()
    config.gpu_options.allow_growth = True
    return {item.name.split("device:")[-1]: item for item in device_lib.list_local_devices(session_config=config)}


def gpu_devices(tf: Any, errors: dict[str, str], wanted: str) -> list[Device]:
    """The GPUs TensorFlow sees, each configured for memory growth; none when only the CPU is wanted."""
    physical = common.guarded(errors, "list_gpus", lambda: tf.config.list_physical_devices("GPU")) or []
    if wanted == "cpu":
        if physical:
            # No GPU context at all: the CPU-only run must not take memory on a shared GPU.
            common.guarded(errors, "hide_gpus", lambda: tf.config.set_visible_devices([], "GPU"))
        return []
    for gpu in physical:
        # Before anything initialises the GPUs; afterwards TensorFlow refuses (RuntimeError).
        common.guarded(errors, "memory_growth", lambda: tf.config.experimental.set_memory_growth(gpu, True))  # noqa: B023 - called at once, inside the loop
    kind = "cuda"
    if common.guarded(errors, "built_with_rocm", lambda: bool(tf.test.is_built_with_rocm()), False):
        kind = "rocm"
    local: dict[str, Any] = {}
    if physical:
        # The eager runtime first, so that the GPUs' allocators are made with memory growth.
        common.guarded(errors, "logical_gpus", lambda: tf.config.list_logical_devices("GPU"))
        local = common.guarded(errors, "device_lib", lambda: _local_devices(tf), {}) or {}
    devices = []
    for index, gpu in enumerate(physical):
        details = common.guarded(errors, "device_details", lambda: tf.config.experimental.get_device_details(gpu))  # noqa: B023 - called at once, inside the loop
        details = details if isinstance(details, dict) else {}
        capability = details.get("compute_capability")
        item = local.get("GPU:%d" % index)
        desc = getattr(item, "physical_device_desc", "") if item is not None else ""
        if capability:
            capability = "%d.%d" % tuple(capability[:2])
        record = {
            "id": "cuda:%d" % index,
            "kind": kind,
            "name": details.get("device_name") or _desc_field(desc, "name"),
            "capability": capability or _desc_field(desc, "compute capability"),
            "memory_total_mib": None,
            "memory_free_mib": None,
            "pci_bus_id": _desc_field(desc, "pci bus id"),
        }
        limit = getattr(item, "memory_limit", None) if item is not None else None
        if isinstance(limit, int) and limit > 0:
            # What TensorFlow's allocator may use: the free memory it found at start, less a reserve.
            record["memory_free_mib"] = limit >> 20
        devices.append(Device("/GPU:%d" % index, record))
    bus_ids = [str(d.record["pci_bus_id"]) for d in devices if d.record["pci_bus_id"]]
    if bus_ids and kind == "cuda":
        memory = common.guarded(errors, "nvml", lambda: nvml_memory(bus_ids)) or {}
        for device in devices:
            total_free = memory.get(device.record["pci_bus_id"])
            if total_free:
                device.record["memory_total_mib"] = total_free[0] >> 20
                device.record["memory_free_mib"] = total_free[1] >> 20
    return devices


def why_no_gpu(tf: Any, errors: dict[str, str], wanted: str) -> str | None:
    """Why no GPU is measured: always said when GPUs were asked for, and for a GPU build that lists none."""
    cuda = common.guarded(errors, "built_with_cuda", lambda: bool(tf.test.is_built_with_cuda()), None)
    rocm = common.guarded(errors, "built_with_rocm", lambda: bool(tf.test.is_built_with_rocm()), False)
    if cuda is False and not rocm:
        if wanted != "cuda":
            return None  # a CPU build (tensorflow-cpu) without GPUs is no finding
        return "this TensorFlow build has no CUDA or ROCm support (%s)" % getattr(tf, "__version__", "?")
    return "%s build, but TensorFlow lists no GPU (its log_lines say why it skipped any)" % ("ROCm" if rocm else "CUDA")
