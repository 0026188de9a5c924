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
The tolerant call lives in :mod:`gpudoctor.evidence.nvml_query` and the health signals in
:mod:`gpudoctor.evidence.nvml_health`; like this module, they import only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import SupportsInt

from gpudoctor.evidence.nvml_health import _health
from gpudoctor.evidence.nvml_query import (
    _ERROR_FUNCTION_NOT_FOUND,
    _ERROR_INVALID_ARGUMENT,
    _ERROR_NOT_SUPPORTED,
    ErrorRecord,
    Nvml,
    NvmlHandle,
    _const,
    _deferred,
    _DeviceQuery,
    _error_record,
    _text,
    query,
)

# The facts read NVML's error names from here, where the probe's record comes from.
from gpudoctor.evidence.nvml_query import NVML_ERROR_NAMES as NVML_ERROR_NAMES

COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}

# nvml.h values, used where an older nvidia-ml-py lacks the name.
_NVLINK_MAX_LINKS = 18  # the bound NVML itself checks links against (older releases: 6, 12)
NVLINK_DEVICE_TYPES = {0x00: "gpu", 0x01: "ibmnpu", 0x02: "switch", 0xFF: "unknown"}


def _cpu_ids(words: Iterable[SupportsInt]) -> list[int]:
    """CPU ids from NVML's affinity mask: an array of 64-bit words, CPU 0 in bit 0 of word 0."""
    return [64 * position + bit for position, word in enumerate(words) for bit in range(64) if (int(word) >> bit) & 1]


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
