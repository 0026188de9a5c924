"""The health signals of one GPU as NVML reports them, for the NVML probe's per-GPU record.

ECC mode and counts, retired pages, remapped rows, InfoROM, temperatures, clock-event reasons,
compute processes, MIG instances and fabric registration: the signals DCGM's quick checks read.
Part of the NVML probe (:mod:`gpudoctor.evidence.nvml_probe`), which runs with ``python -S``: this
module imports nothing but the standard library and its sibling :mod:`gpudoctor.evidence.nvml_query`.
"""

from __future__ import annotations

from gpudoctor.evidence.nvml_query import (
    _ERROR_CORRUPTED_INFOROM,
    _ERROR_FUNCTION_NOT_FOUND,
    _ERROR_NOT_SUPPORTED,
    Nvml,
    NvmlHandle,
    _const,
    _deferred,
    _DeviceQuery,
)


def _fabric(pynvml: Nvml, handle: NvmlHandle) -> dict[str, int]:
    import ctypes

    info = pynvml.c_nvmlGpuFabricInfo_t()
    pynvml.nvmlDeviceGetGpuFabricInfo(handle, ctypes.byref(info))
    return {"state": int(info.state), "status": int(info.status)}


def _health(pynvml: Nvml, handle: NvmlHandle, ask: _DeviceQuery, mig_current: object) -> dict[str, object]:
    def c(name: str, fallback: int) -> int:
        return _const(pynvml, name, fallback)

    health: dict[str, object] = {}
    ecc = ask("ecc_mode", lambda: pynvml.nvmlDeviceGetEccMode(handle))
    health["ecc_mode"] = {"current": ecc[0], "pending": ecc[1]} if ecc is not None else None
    counters: dict[str, object] = {}
    # GPUs without ECC answer NOT_SUPPORTED to every counter too: four calls saved.
    if ask.code("ecc_mode") != _ERROR_NOT_SUPPORTED:
        for key, error_type, counter_type in (
            ("volatile_corrected", c("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0), c("NVML_VOLATILE_ECC", 0)),
            ("volatile_uncorrected", c("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1), c("NVML_VOLATILE_ECC", 0)),
            ("aggregate_corrected", c("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0), c("NVML_AGGREGATE_ECC", 1)),
            ("aggregate_uncorrected", c("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1), c("NVML_AGGREGATE_ECC", 1)),
        ):
            counters[key] = ask(
                f"ecc_{key}", _deferred(pynvml, "nvmlDeviceGetTotalEccErrors", handle, error_type, counter_type)
            )
    health["ecc_errors"] = counters or None
    sbe = ask(
        "retired_pages_sbe",
        lambda: pynvml.nvmlDeviceGetRetiredPages(
            handle, c("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0)
        ),
    )
    dbe = ask(
        "retired_pages_dbe",
        lambda: pynvml.nvmlDeviceGetRetiredPages(handle, c("NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1)),
    )
    pending = ask("retired_pages_pending", lambda: pynvml.nvmlDeviceGetRetiredPagesPendingStatus(handle))
    health["retired_pages"] = {
        "sbe": len(sbe) if sbe is not None else None,
        "dbe": len(dbe) if dbe is not None else None,
        "pending": pending,
    }
    rows = ask("remapped_rows", lambda: pynvml.nvmlDeviceGetRemappedRows(handle))
    health["remapped_rows"] = (
        dict(zip(("correctable", "uncorrectable", "pending", "failure"), rows)) if rows is not None else None
    )
    valid = ask("inforom_valid", lambda: pynvml.nvmlDeviceValidateInforom(handle) or True)
    inforom_error = ask.errors.get("inforom_valid") or {}
    # Only CORRUPTED_INFOROM says "invalid"; NOT_SUPPORTED and the like say "could not check".
    invalid = inforom_error.get("code") == _ERROR_CORRUPTED_INFOROM
    health["inforom"] = {
        "valid": True if valid else (False if invalid else None),
        "error": inforom_error.get("name") if invalid else None,
        "image": ask("inforom_image", lambda: pynvml.nvmlDeviceGetInforomImageVersion(handle)),
    }
    health["temperature"] = {
        "current": ask("temperature", lambda: pynvml.nvmlDeviceGetTemperature(handle, c("NVML_TEMPERATURE_GPU", 0))),
        "slowdown": ask(
            "temperature_slowdown",
            lambda: pynvml.nvmlDeviceGetTemperatureThreshold(handle, c("NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", 1)),
        ),
        "shutdown": ask(
            "temperature_shutdown",
            lambda: pynvml.nvmlDeviceGetTemperatureThreshold(handle, c("NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 0)),
        ),
    }
    # "Event reasons" is the R535+ name of the same bitmask; older drivers and bindings know only "throttle".
    reasons = None
    if hasattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons"):
        reasons = ask("clock_reasons", lambda: pynvml.nvmlDeviceGetCurrentClocksEventReasons(handle))
    if reasons is None and not ask.lost and hasattr(pynvml, "nvmlDeviceGetCurrentClocksThrottleReasons"):
        first_error = ask.errors.pop("clock_reasons", None)
        reasons = ask("clock_reasons", lambda: pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle))
        if reasons is None and first_error is not None:
            ask.errors["clock_reasons"] = first_error
    health["clock_reasons"] = reasons
    processes = ask("compute_processes", lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(handle))
    if (
        processes is None
        and ask.code("compute_processes") == _ERROR_FUNCTION_NOT_FOUND
        and hasattr(pynvml, "nvmlDeviceGetComputeRunningProcesses_v2")
    ):
        # the binding asks for _v3, which drivers before R510 lack
        processes = ask("compute_processes", lambda: pynvml.nvmlDeviceGetComputeRunningProcesses_v2(handle))
    health["compute_processes"] = len(processes) if processes is not None else None
    health["mig_instances"] = None
    if mig_current == 1:
        most = ask("mig_device_count", lambda: pynvml.nvmlDeviceGetMaxMigDeviceCount(handle))
        # indices without a MIG device answer NOT_FOUND: that is the count, not an error
        found = [
            i
            for i in range(most or 0)
            if ask("mig_device", _deferred(pynvml, "nvmlDeviceGetMigDeviceHandleByIndex", handle, i), {}) is not None
        ]
        health["mig_instances"] = len(found) if most is not None else None
    health["fabric"] = ask("fabric", lambda: _fabric(pynvml, handle))
    return health
