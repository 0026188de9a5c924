"""Ask NVML what it knows and print it as JSON (the ``nvml.json`` evidence).

Run as ``python -m gpudoctor.evidence.nvml_probe`` in a subprocess with a
timeout, so an NVML call that hangs (a GPU that fell off the bus can do that)
costs the timeout, never the whole report.  One tolerant query function: a
field the GPU does not support is recorded as null with the reason, and an init
failure is recorded with NVML's own error code and name.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

# NVML error codes (nvml.h) by name, so the record does not depend on which
# constants a given nvidia-ml-py release defines.
NVML_ERROR_NAMES = {
    1: "NVML_ERROR_UNINITIALIZED", 2: "NVML_ERROR_INVALID_ARGUMENT", 3: "NVML_ERROR_NOT_SUPPORTED",
    4: "NVML_ERROR_NO_PERMISSION", 5: "NVML_ERROR_ALREADY_INITIALIZED", 6: "NVML_ERROR_NOT_FOUND",
    7: "NVML_ERROR_INSUFFICIENT_SIZE", 8: "NVML_ERROR_INSUFFICIENT_POWER", 9: "NVML_ERROR_DRIVER_NOT_LOADED",
    10: "NVML_ERROR_TIMEOUT", 11: "NVML_ERROR_IRQ_ISSUE", 12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND", 14: "NVML_ERROR_CORRUPTED_INFOROM", 15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED", 17: "NVML_ERROR_OPERATING_SYSTEM", 18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    19: "NVML_ERROR_IN_USE", 20: "NVML_ERROR_MEMORY", 21: "NVML_ERROR_NO_DATA",
    22: "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", 23: "NVML_ERROR_INSUFFICIENT_RESOURCES",
    24: "NVML_ERROR_FREQ_NOT_SUPPORTED", 25: "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    26: "NVML_ERROR_DEPRECATED", 27: "NVML_ERROR_NOT_READY", 28: "NVML_ERROR_GPU_NOT_FOUND",
    29: "NVML_ERROR_INVALID_STATE", 999: "NVML_ERROR_UNKNOWN",
}

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def _error_record(exc: BaseException) -> dict[str, Any]:
    code = getattr(exc, "value", None)
    return {
        "code": code,
        "name": NVML_ERROR_NAMES.get(code, type(exc).__name__) if isinstance(code, int) else type(exc).__name__,
        "message": str(exc),
    }


def _text(value: Any) -> Any:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def query(errors: dict[str, Any], field: str, call: Callable[[], Any]) -> Any:
    """Call one NVML function; on failure record why under ``errors[field]`` and return None."""
    try:
        return _text(call())
    except Exception as exc:  # noqa: BLE001 - every NVML failure is evidence, not a crash
        errors[field] = _error_record(exc)
        return None


def _device_record(pynvml: Any, index: int) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    record: dict[str, Any] = {"index": index, "errors": errors}
    handle = query(errors, "handle", lambda: pynvml.nvmlDeviceGetHandleByIndex(index))
    if handle is None:
        return record
    record["name"] = query(errors, "name", lambda: pynvml.nvmlDeviceGetName(handle))
    record["uuid"] = query(errors, "uuid", lambda: pynvml.nvmlDeviceGetUUID(handle))
    record["serial"] = query(errors, "serial", lambda: pynvml.nvmlDeviceGetSerial(handle))
    pci = query(errors, "pci", lambda: pynvml.nvmlDeviceGetPciInfo(handle))
    record["pci_bus_id"] = _text(pci.busId) if pci is not None else None
    record["pci_device_id"] = hex(pci.pciDeviceId) if pci is not None else None
    memory = query(errors, "memory", lambda: pynvml.nvmlDeviceGetMemoryInfo(handle))
    record["memory_total_bytes"] = memory.total if memory is not None else None
    record["memory_used_bytes"] = memory.used if memory is not None else None
    capability = query(errors, "compute_capability", lambda: pynvml.nvmlDeviceGetCudaComputeCapability(handle))
    record["compute_capability"] = list(capability) if capability is not None else None
    mode = query(errors, "compute_mode", lambda: pynvml.nvmlDeviceGetComputeMode(handle))
    record["compute_mode"] = COMPUTE_MODES.get(mode, mode) if mode is not None else None
    persistence = query(errors, "persistence_mode", lambda: pynvml.nvmlDeviceGetPersistenceMode(handle))
    record["persistence_mode"] = bool(persistence) if persistence is not None else None
    mig = query(errors, "mig_mode", lambda: pynvml.nvmlDeviceGetMigMode(handle))
    record["mig_mode"] = {"current": mig[0], "pending": mig[1]} if mig is not None else None
    record["brand"] = query(errors, "brand", lambda: pynvml.nvmlDeviceGetBrand(handle))
    record["pcie"] = {
        "gen_current": query(errors, "pcie_gen_current", lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
        "gen_max": query(errors, "pcie_gen_max", lambda: pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
        "width_current": query(errors, "pcie_width_current", lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
        "width_max": query(errors, "pcie_width_max", lambda: pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
    }
    return record


def probe() -> dict[str, Any]:
    record: dict[str, Any] = {"schema": 1}
    try:
        import pynvml
    except Exception as exc:  # noqa: BLE001 - a broken binding is what we report
        record["bindings"] = {"importable": False, "error": f"{type(exc).__name__}: {exc}"}
        record["init"] = {"ok": False, "error": {"code": None, "name": "BINDINGS_MISSING", "message": str(exc)}}
        return record
    record["bindings"] = {
        "importable": True,
        "module_file": getattr(pynvml, "__file__", None),
        "has_nvmlGetFunctionPointer": hasattr(pynvml, "_nvmlGetFunctionPointer"),
    }
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001
        record["init"] = {"ok": False, "error": _error_record(exc)}
        return record
    record["init"] = {"ok": True, "error": None}
    errors: dict[str, Any] = {}
    record["errors"] = errors
    try:
        record["driver_version"] = query(errors, "driver_version", pynvml.nvmlSystemGetDriverVersion)
        record["nvml_version"] = query(errors, "nvml_version", pynvml.nvmlSystemGetNVMLVersion)
        record["cuda_driver_version"] = query(errors, "cuda_driver_version", pynvml.nvmlSystemGetCudaDriverVersion)
        count = query(errors, "device_count", pynvml.nvmlDeviceGetCount)
        record["device_count"] = count
        record["devices"] = [_device_record(pynvml, i) for i in range(count or 0)]
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return record


def main() -> int:
    json.dump(probe(), sys.stdout, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
