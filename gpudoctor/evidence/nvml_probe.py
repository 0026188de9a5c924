"""Ask NVML what it knows and print it as JSON (the ``nvml.json`` evidence).

Run as ``python -m gpudoctor.evidence.nvml_probe`` in a subprocess with a
timeout, so an NVML call that hangs (a GPU that fell off the bus can do that)
costs the timeout, never the whole report.  One tolerant query function: a
field the GPU does not support is recorded as null with the reason, and an init
failure is recorded with NVML's own error code and name.

Per GPU it records identity, memory and modes; the wiring (NUMA node, CPU affinity, PCIe link and
replays, each NVLink and what is at its far end) and the health signals DCGM's quick checks read
(ECC mode and counts, retired pages, remapped rows, InfoROM, temperatures, clock-event reasons,
compute processes, MIG instances, fabric registration), plus ``lost`` / ``reset_required`` when NVML
answered GPU_IS_LOST / RESET_REQUIRED.  ``pairs`` holds, for every two GPUs, their nearest common
PCIe ancestor and their P2P read / NVLink status.  Enums stay NVML's numbers; the facts name them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any, Callable, SupportsInt

# pynvml has no type stubs: the module, its device handles and what its calls return are untyped C
# wrappers (ctypes structs, ints, bytes).  ``Any`` stands for that surface only; records are JSON.
Nvml = Any
NvmlHandle = Any
NvmlValue = Any
ErrorRecord = dict[str, object]

# NVML error codes (nvml.h) by name, so the record does not depend on which
# constants a given nvidia-ml-py release defines.
NVML_ERROR_NAMES = {
    1: "NVML_ERROR_UNINITIALIZED",
    2: "NVML_ERROR_INVALID_ARGUMENT",
    3: "NVML_ERROR_NOT_SUPPORTED",
    4: "NVML_ERROR_NO_PERMISSION",
    5: "NVML_ERROR_ALREADY_INITIALIZED",
    6: "NVML_ERROR_NOT_FOUND",
    7: "NVML_ERROR_INSUFFICIENT_SIZE",
    8: "NVML_ERROR_INSUFFICIENT_POWER",
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    10: "NVML_ERROR_TIMEOUT",
    11: "NVML_ERROR_IRQ_ISSUE",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND",
    14: "NVML_ERROR_CORRUPTED_INFOROM",
    15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED",
    17: "NVML_ERROR_OPERATING_SYSTEM",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    19: "NVML_ERROR_IN_USE",
    20: "NVML_ERROR_MEMORY",
    21: "NVML_ERROR_NO_DATA",
    22: "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
    23: "NVML_ERROR_INSUFFICIENT_RESOURCES",
    24: "NVML_ERROR_FREQ_NOT_SUPPORTED",
    25: "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    26: "NVML_ERROR_DEPRECATED",
    27: "NVML_ERROR_NOT_READY",
    28: "NVML_ERROR_GPU_NOT_FOUND",
    29: "NVML_ERROR_INVALID_STATE",
    999: "NVML_ERROR_UNKNOWN",
}

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def _error_record(exc: BaseException) -> ErrorRecord:
    code: object = getattr(exc, "value", None)
    return {
        "code": code,
        "name": NVML_ERROR_NAMES.get(code, type(exc).__name__) if isinstance(code, int) else type(exc).__name__,
        "message": str(exc),
    }


def _text(value: NvmlValue) -> NvmlValue:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def query(errors: dict[str, ErrorRecord], field: str, call: Callable[[], NvmlValue]) -> NvmlValue:
    """Call one NVML function; on failure record why under ``errors[field]`` and return None."""
    try:
        return _text(call())
    except Exception as exc:  # noqa: BLE001 - every NVML failure is evidence, not a crash
        errors[field] = _error_record(exc)
        return None


# nvml.h values, used where an older nvidia-ml-py lacks the name.
_NVLINK_MAX_LINKS = 18  # the bound NVML itself checks links against (older releases: 6, 12)
_ERROR_INVALID_ARGUMENT, _ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND = 2, 3, 13
_ERROR_CORRUPTED_INFOROM, _ERROR_GPU_IS_LOST, _ERROR_RESET_REQUIRED = 14, 15, 16
NVLINK_DEVICE_TYPES = {0x00: "gpu", 0x01: "ibmnpu", 0x02: "switch", 0xFF: "unknown"}


def _deferred(pynvml: Nvml, function: str, *args: object) -> Callable[[], NvmlValue]:
    """``pynvml.<function>(*args)``, looked up only when called: a binding too old to have it fails inside
    :func:`query`, where that is recorded like any other NVML error."""
    return lambda: getattr(pynvml, function)(*args)


def _const(pynvml: Nvml, name: str, fallback: int) -> int:
    """An NVML constant from the binding, else nvml.h's value.

    Only plain ints are taken: nvidia-ml-py defines ``NVML_P2P_CAPS_INDEX_READ = 0,`` (a tuple), which
    ctypes would refuse as an argument.
    """
    value = getattr(pynvml, name, fallback)
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


def _cpu_ids(words: Iterable[SupportsInt]) -> list[int]:
    """CPU ids from NVML's affinity mask: an array of 64-bit words, CPU 0 in bit 0 of word 0."""
    return [64 * position + bit for position, word in enumerate(words) for bit in range(64) if (int(word) >> bit) & 1]


class _DeviceQuery:
    """``query`` for one GPU that notices a lost GPU (and then stops asking it) or one that needs a reset."""

    def __init__(self, errors: dict[str, ErrorRecord]) -> None:
        self.errors = errors
        self.lost = False
        self.reset_required = False

    def __call__(
        self, field: str, call: Callable[[], NvmlValue], errors: dict[str, ErrorRecord] | None = None
    ) -> NvmlValue:
        # A lost GPU answers every call with GPU_IS_LOST, some only after a long wait: once is enough.
        if self.lost:
            return None
        sink = self.errors if errors is None else errors
        value = query(sink, field, call)
        if value is None and field in sink:
            code = sink[field].get("code")
            self.lost = self.lost or code == _ERROR_GPU_IS_LOST
            self.reset_required = self.reset_required or code == _ERROR_RESET_REQUIRED
        return value

    def code(self, field: str) -> object:
        return (self.errors.get(field) or {}).get("code")


def _nvlinks(pynvml: Nvml, handle: NvmlHandle, ask: _DeviceQuery) -> list[dict[str, object]] | None:
    """Each NVLink of the GPU, up to the first link NVML calls invalid; None when it has none at all."""
    ports: list[dict[str, object]] = []
    for link in range(_const(pynvml, "NVML_NVLINK_MAX_LINKS", _NVLINK_MAX_LINKS)):
        probe_errors: dict[str, ErrorRecord] = {}
        state = ask("state", _deferred(pynvml, "nvmlDeviceGetNvLinkState", handle, link), probe_errors)
        code = (probe_errors.get("state") or {}).get("code")
        if code in (_ERROR_INVALID_ARGUMENT, _ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND) or ask.lost:
            if link == 0 and "state" in probe_errors:
                ask.errors["nvlink"] = probe_errors["state"]  # the reason the GPU shows no NVLink
            break
        if probe_errors:
            ask.errors[f"nvlink{link}_state"] = probe_errors["state"]
        port: dict[str, object] = {
            "link": link,
            "active": bool(state) if state is not None else None,
            "version": None,
            "remote_bus_id": None,
            "remote_type": None,
        }
        if state:  # an inactive link has no far end to ask about
            port["version"] = ask(
                f"nvlink{link}_version", _deferred(pynvml, "nvmlDeviceGetNvLinkVersion", handle, link)
            )
            remote = ask(
                f"nvlink{link}_remote_pci", _deferred(pynvml, "nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
            )
            port["remote_bus_id"] = _text(remote.busId) if remote is not None else None
            kind = ask(
                f"nvlink{link}_remote_type", _deferred(pynvml, "nvmlDeviceGetNvLinkRemoteDeviceType", handle, link)
            )
            port["remote_type"] = NVLINK_DEVICE_TYPES.get(kind, kind) if kind is not None else None
        ports.append(port)
    return ports or None


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


def _device_record(pynvml: Nvml, index: int) -> tuple[dict[str, object], NvmlHandle]:
    errors: dict[str, ErrorRecord] = {}
    record: dict[str, object] = {"index": index, "errors": errors}
    ask = _DeviceQuery(errors)
    handle = ask("handle", lambda: pynvml.nvmlDeviceGetHandleByIndex(index))
    if handle is None:
        record["lost"], record["reset_required"] = ask.lost, ask.reset_required
        return record, None
    record["name"] = ask("name", lambda: pynvml.nvmlDeviceGetName(handle))
    record["uuid"] = ask("uuid", lambda: pynvml.nvmlDeviceGetUUID(handle))
    record["serial"] = ask("serial", lambda: pynvml.nvmlDeviceGetSerial(handle))
    pci = ask("pci", lambda: pynvml.nvmlDeviceGetPciInfo(handle))
    record["pci_bus_id"] = _text(pci.busId) if pci is not None else None
    record["pci_device_id"] = hex(pci.pciDeviceId) if pci is not None else None
    memory = ask("memory", lambda: pynvml.nvmlDeviceGetMemoryInfo(handle))
    record["memory_total_bytes"] = memory.total if memory is not None else None
    record["memory_used_bytes"] = memory.used if memory is not None else None
    capability = ask("compute_capability", lambda: pynvml.nvmlDeviceGetCudaComputeCapability(handle))
    record["compute_capability"] = list(capability) if capability is not None else None
    mode = ask("compute_mode", lambda: pynvml.nvmlDeviceGetComputeMode(handle))
    record["compute_mode"] = COMPUTE_MODES.get(mode, mode) if mode is not None else None
    persistence = ask("persistence_mode", lambda: pynvml.nvmlDeviceGetPersistenceMode(handle))
    record["persistence_mode"] = bool(persistence) if persistence is not None else None
    mig = ask("mig_mode", lambda: pynvml.nvmlDeviceGetMigMode(handle))
    record["mig_mode"] = {"current": mig[0], "pending": mig[1]} if mig is not None else None
    record["brand"] = ask("brand", lambda: pynvml.nvmlDeviceGetBrand(handle))
    record["pcie"] = {
        "gen_current": ask("pcie_gen_current", lambda: pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
        "gen_max": ask("pcie_gen_max", lambda: pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
        "width_current": ask("pcie_width_current", lambda: pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
        "width_max": ask("pcie_width_max", lambda: pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
        "replay_count": ask("pcie_replay_count", lambda: pynvml.nvmlDeviceGetPcieReplayCounter(handle)),
    }
    record["numa_node"] = ask("numa_node", lambda: pynvml.nvmlDeviceGetNumaNodeId(handle))
    words = -(-(os.cpu_count() or 1) // 64)
    affinity = ask("cpu_affinity", lambda: _cpu_ids(pynvml.nvmlDeviceGetCpuAffinity(handle, words)))
    record["cpu_affinity"] = affinity
    record["nvlink"] = _nvlinks(pynvml, handle, ask)
    record["health"] = _health(pynvml, handle, ask, mig[0] if mig is not None else None)
    record["lost"], record["reset_required"] = ask.lost, ask.reset_required
    return record, (None if ask.lost else handle)


def _pairs(pynvml: Nvml, handles: list[NvmlHandle]) -> list[dict[str, object]]:
    """How each pair of GPUs reaches the other: their nearest common PCIe ancestor and P2P status."""
    read = _const(pynvml, "NVML_P2P_CAPS_INDEX_READ", 0)
    nvlink = _const(pynvml, "NVML_P2P_CAPS_INDEX_NVLINK", 2)
    pairs: list[dict[str, object]] = []
    for a, first in enumerate(handles):
        for b in range(a + 1, len(handles)):
            second = handles[b]
            if first is None or second is None:
                continue
            errors: dict[str, ErrorRecord] = {}
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "errors": errors,
                    "common_ancestor": query(
                        errors,
                        "common_ancestor",
                        _deferred(pynvml, "nvmlDeviceGetTopologyCommonAncestor", first, second),
                    ),
                    "p2p": {
                        "read": query(
                            errors, "p2p_read", _deferred(pynvml, "nvmlDeviceGetP2PStatus", first, second, read)
                        ),
                        "nvlink": query(
                            errors, "p2p_nvlink", _deferred(pynvml, "nvmlDeviceGetP2PStatus", first, second, nvlink)
                        ),
                    },
                }
            )
    return pairs


def probe() -> dict[str, object]:
    record: dict[str, object] = {"schema": 1}
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
    errors: dict[str, ErrorRecord] = {}
    record["errors"] = errors
    try:
        record["driver_version"] = query(errors, "driver_version", pynvml.nvmlSystemGetDriverVersion)
        record["nvml_version"] = query(errors, "nvml_version", pynvml.nvmlSystemGetNVMLVersion)
        record["cuda_driver_version"] = query(errors, "cuda_driver_version", pynvml.nvmlSystemGetCudaDriverVersion)
        count = query(errors, "device_count", pynvml.nvmlDeviceGetCount)
        record["device_count"] = count
        devices = [_device_record(pynvml, i) for i in range(count or 0)]
        record["devices"] = [device for device, _handle in devices]
        # The list index is the NVML index: a lost GPU keeps its place (with no handle) so pairs name GPUs right.
        record["pairs"] = _pairs(pynvml, [handle for _device, handle in devices])
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
