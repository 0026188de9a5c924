"""SYNTHETIC ``nvml.json`` records, and a SYNTHETIC stand-in for the nvidia-ml-py binding.

No real capture of gpudoctor's NVML probe on a GPU machine exists yet, so these records are written
by hand in the shape ``gpudoctor.evidence.nvml_probe`` prints, with values as NVML reports them on
such machines (NVML enums as numbers, bus ids in NVML's 8-digit-domain spelling).  ``SyntheticNvml``
answers the probe's calls from a description of GPUs, so the probe's own logic (link walk, lost GPUs,
fallbacks) runs without a GPU; the real binding is exercised by the integration tier.
"""

from __future__ import annotations

import copy
import ctypes
from typing import Any

ERROR_NAMES = {
    2: "NVML_ERROR_INVALID_ARGUMENT",
    3: "NVML_ERROR_NOT_SUPPORTED",
    6: "NVML_ERROR_NOT_FOUND",
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND",
    14: "NVML_ERROR_CORRUPTED_INFOROM",
    15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED",
}
MESSAGES = {
    2: "Invalid Argument",
    3: "Not Supported",
    6: "Not Found",
    9: "Driver Not Loaded",
    13: "Function Not Found",
    14: "Corrupted infoROM",
    15: "GPU is lost",
    16: "GPU requires reset",
}


def error(code: int) -> dict[str, Any]:
    return {"code": code, "name": ERROR_NAMES[code], "message": MESSAGES[code]}


def _bus(bus: int) -> str:
    return f"00000000:{bus:02X}:00.0"


def _healthy(**changes: Any) -> dict[str, Any]:
    health = {
        "ecc_mode": {"current": 1, "pending": 1},
        "ecc_errors": {
            "volatile_corrected": 0,
            "volatile_uncorrected": 0,
            "aggregate_corrected": 0,
            "aggregate_uncorrected": 0,
        },
        "retired_pages": {"sbe": None, "dbe": None, "pending": None},
        "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0},
        "inforom": {"valid": True, "error": None, "image": "G520.0200.00.05"},
        "temperature": {"current": 31, "slowdown": 87, "shutdown": 92},
        "clock_reasons": 0x1,
        "compute_processes": 0,
        "mig_instances": None,
        "fabric": {"state": 3, "status": 0},
    }
    health.update(changes)
    return health


def _device(index: int, name: str, bus: int, **changes: Any) -> dict[str, Any]:
    record = {
        "index": index,
        "errors": {},
        "name": name,
        "uuid": f"GPU-00000000-0000-0000-0000-00000000000{index}",
        "serial": "0",
        "pci_bus_id": _bus(bus),
        "pci_device_id": "0x233010de",
        "memory_total_bytes": 85520809984,
        "memory_used_bytes": 565182464,
        "compute_capability": [9, 0],
        "compute_mode": "Default",
        "persistence_mode": True,
        "mig_mode": {"current": 0, "pending": 0},
        "brand": 2,
        "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16, "replay_count": 0},
        "numa_node": 0,
        "cpu_affinity": None,
        "nvlink": None,
        "health": _healthy(),
        "lost": False,
        "reset_required": False,
    }
    record.update(changes)
    return record


def _record(devices: list[dict[str, Any]], pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": 1,
        "bindings": {
            "importable": True,
            "module_file": "/usr/lib/python3/dist-packages/pynvml.py",
            "has_nvmlGetFunctionPointer": True,
        },
        "init": {"ok": True, "error": None},
        "errors": {},
        "driver_version": "550.90.07",
        "nvml_version": "12.550.90.07",
        "cuda_driver_version": 12040,
        "device_count": len(devices),
        "devices": devices,
        "pairs": pairs,
    }


def _pair(a: int, b: int, ancestor: int, read: int, nvlink: int) -> dict[str, Any]:
    return {"a": a, "b": b, "errors": {}, "common_ancestor": ancestor, "p2p": {"read": read, "nvlink": nvlink}}


# HGX H100: GPU buses as on a real board, four NVSwitches, two sockets of 56 cores with hyper-threads.
H100_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)
NVSWITCH_BUSES = (0x05, 0x06, 0x07, 0x08)
SOCKET_CPUS = (list(range(56)) + list(range(112, 168)), list(range(56, 112)) + list(range(168, 224)))


def healthy_8x_h100_sxm() -> dict[str, Any]:
    """SYNTHETIC: 8x H100 SXM, 18 NVLinks each, all to NVSwitches; 4 GPUs per socket."""
    devices = []
    for index, bus in enumerate(H100_BUSES):
        socket = index // 4
        links = [
            {
                "link": link,
                "active": True,
                "version": 4,
                "remote_bus_id": _bus(NVSWITCH_BUSES[link % 4]),
                "remote_type": "switch",
            }
            for link in range(18)
        ]
        devices.append(
            _device(
                index, "NVIDIA H100 80GB HBM3", bus, numa_node=socket, cpu_affinity=SOCKET_CPUS[socket], nvlink=links
            )
        )
    pairs = [_pair(a, b, 40 if a // 4 == b // 4 else 50, 0, 0) for a in range(8) for b in range(a + 1, 8)]
    return _record(devices, pairs)


def h100_with_one_link_down() -> dict[str, Any]:
    """SYNTHETIC: the healthy HGX with link 7 of GPU 3 down (16 of 18 up on GPU 3: links 7 and 12)."""
    record = healthy_8x_h100_sxm()
    for link in (7, 12):
        record["devices"][3]["nvlink"][link].update(active=False, version=None, remote_bus_id=None, remote_type=None)
    return record


def a100_pending_row_remap() -> dict[str, Any]:
    """SYNTHETIC: one A100 SXM4 with an uncorrectable error whose row remap waits for a GPU reset."""
    health = _healthy(
        ecc_errors={
            "volatile_corrected": 0,
            "volatile_uncorrected": 1,
            "aggregate_corrected": 12,
            "aggregate_uncorrected": 1,
        },
        remapped_rows={"correctable": 0, "uncorrectable": 1, "pending": 1, "failure": 0},
        clock_reasons=0x4 | 0x40,
        fabric=None,
    )
    device = _device(
        0,
        "NVIDIA A100-SXM4-80GB",
        0x07,
        compute_capability=[8, 0],
        health=health,
        numa_node=3,
        cpu_affinity=list(range(48, 64)) + list(range(176, 192)),
    )
    return _record([device], [])


def lost_gpu() -> dict[str, Any]:
    """SYNTHETIC: 2 GPUs, the second fell off the bus (its handle answers GPU_IS_LOST)."""
    good = _device(0, "NVIDIA A100-SXM4-40GB", 0x07, compute_capability=[8, 0])
    lost = {"index": 1, "errors": {"handle": error(15)}, "lost": True, "reset_required": False}
    return _record([good, lost], [])


def v100_retired_pages() -> dict[str, Any]:
    """SYNTHETIC: a V100 (page retirement, no row remapping) with 70 retired pages, 2 more pending."""
    health = _healthy(
        ecc_errors={
            "volatile_corrected": 4,
            "volatile_uncorrected": 0,
            "aggregate_corrected": 3901,
            "aggregate_uncorrected": 2,
        },
        retired_pages={"sbe": 68, "dbe": 2, "pending": 1},
        remapped_rows=None,
        inforom={"valid": False, "error": "NVML_ERROR_CORRUPTED_INFOROM", "image": "G503.0201.00.04"},
        clock_reasons=None,
        fabric=None,
    )
    device = _device(
        0,
        "Tesla V100-SXM2-32GB",
        0x1A,
        compute_capability=[7, 0],
        persistence_mode=False,
        health=health,
        cpu_affinity=list(range(20)) + list(range(40, 60)),
    )
    device["errors"] = {"remapped_rows": error(3), "clock_reasons": error(13), "fabric": error(13)}
    return _record([device], [])


def pcie_quad() -> dict[str, Any]:
    """SYNTHETIC: 4 PCIe GPUs (L40S), no NVLink; 0-1 share a switch (PIX), 2-3 two bridges (PXB), sockets apart."""
    devices = []
    for index, bus in enumerate((0x17, 0x18, 0xCA, 0xCB)):
        device = _device(
            index,
            "NVIDIA L40S",
            bus,
            compute_capability=[8, 9],
            numa_node=index // 2,
            cpu_affinity=SOCKET_CPUS[index // 2],
            brand=14,
            health=_healthy(
                fabric=None, remapped_rows={"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0}
            ),
        )
        device["errors"] = {"nvlink": error(3), "fabric": error(3)}
        devices.append(device)
    devices[1]["pcie"].update(gen_current=4, width_current=8, replay_count=211)
    pairs = [
        _pair(0, 1, 10, 0, 5),
        _pair(0, 2, 50, 5, 5),
        _pair(0, 3, 50, 5, 5),
        _pair(1, 2, 50, 5, 5),
        _pair(1, 3, 50, 5, 5),
        _pair(2, 3, 20, 0, 5),
    ]
    return _record(devices, pairs)


def nvlink_bridge_pair() -> dict[str, Any]:
    """SYNTHETIC: 2x RTX A6000 joined by an NVLink bridge (4 links GPU to GPU), on one host bridge."""
    buses = (0x21, 0x41)
    devices = []
    for index, bus in enumerate(buses):
        other = _bus(buses[1 - index])
        links = [
            {"link": link, "active": True, "version": 3, "remote_bus_id": other, "remote_type": "gpu"}
            for link in range(4)
        ]
        devices.append(
            _device(
                index,
                "NVIDIA RTX A6000",
                bus,
                compute_capability=[8, 6],
                nvlink=links,
                brand=13,
                health=_healthy(fabric=None),
            )
        )
    return _record(devices, [_pair(0, 1, 30, 0, 0)])


def driver_not_loaded() -> dict[str, Any]:
    """SYNTHETIC (but what the real probe prints here): NVML's library is there, the kernel module is not."""
    return {
        "schema": 1,
        "bindings": {"importable": True, "module_file": "pynvml.py", "has_nvmlGetFunctionPointer": True},
        "init": {"ok": False, "error": error(9)},
    }


# --------------------------------------------------------------------------- a synthetic binding


class SyntheticNVMLError(Exception):
    """Raised like nvidia-ml-py's NVMLError: the NVML return code in ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(MESSAGES.get(value, f"NVML error {value}"))
        self.value = value


class _Pci:
    def __init__(self, bus_id: str) -> None:
        self.busId = bus_id.encode()
        self.pciDeviceId = 0x233010DE


class _Memory:
    total, used = 85520809984, 565182464


class _FabricInfo(ctypes.Structure):
    """The two fields of c_nvmlGpuFabricInfo_t the probe reads (a ctypes structure, as it passes byref())."""

    _fields_ = [("status", ctypes.c_uint), ("state", ctypes.c_uint)]


class SyntheticNvml:
    """A SYNTHETIC stand-in for the ``pynvml`` module, answering from ``gpus``: one dict per GPU with
    ``bus``, ``links`` (list of (remote bus, remote type code) or None), ``lost`` and ``unsupported``
    (names of calls that answer NOT_SUPPORTED).  Constants are as nvidia-ml-py 13 defines them,
    NVML_P2P_CAPS_INDEX_READ's stray tuple included."""

    NVML_P2P_CAPS_INDEX_READ = (0,)  # nvidia-ml-py really has "= 0," here
    NVML_P2P_CAPS_INDEX_NVLINK = 2
    NVML_NVLINK_MAX_LINKS = 18
    NVMLError = SyntheticNVMLError

    def __init__(self, gpus: list[dict[str, Any]], ancestor: int = 50) -> None:
        self.gpus = copy.deepcopy(gpus)
        self.ancestor = ancestor
        self.calls: list[str] = []
        self.c_nvmlGpuFabricInfo_t = _FabricInfo

    # every call goes through here, so a test can count them and a GPU can fail them
    def _gpu(self, handle: Any, call: str) -> dict[str, Any]:
        self.calls.append(call)
        gpu = self.gpus[handle]
        if gpu.get("lost"):
            raise SyntheticNVMLError(15)
        if call in gpu.get("unsupported", ()):
            raise SyntheticNVMLError(3)
        return gpu

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlSystemGetDriverVersion(self) -> str:
        return "550.90.07"

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12.550.90.07"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12040

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if self.gpus[index].get("lost_handle"):
            raise SyntheticNVMLError(15)
        return index

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return self._gpu(handle, "name").get("name", "NVIDIA H100 80GB HBM3").encode()

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        self._gpu(handle, "uuid")
        return f"GPU-synthetic-{handle}"

    def nvmlDeviceGetSerial(self, handle: int) -> str:
        self._gpu(handle, "serial")
        raise SyntheticNVMLError(3)

    def nvmlDeviceGetPciInfo(self, handle: int) -> _Pci:
        return _Pci(_bus(self._gpu(handle, "pci")["bus"]))

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> _Memory:
        self._gpu(handle, "memory")
        return _Memory()

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        self._gpu(handle, "compute_capability")
        return (9, 0)

    def nvmlDeviceGetComputeMode(self, handle: int) -> int:
        self._gpu(handle, "compute_mode")
        return 0

    def nvmlDeviceGetPersistenceMode(self, handle: int) -> int:
        self._gpu(handle, "persistence_mode")
        return 1

    def nvmlDeviceGetMigMode(self, handle: int) -> list[int]:
        gpu = self._gpu(handle, "mig_mode")
        return [1, 1] if gpu.get("mig_devices") is not None else [0, 0]

    def nvmlDeviceGetBrand(self, handle: int) -> int:
        self._gpu(handle, "brand")
        return 2

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: int) -> int:
        self._gpu(handle, "pcie_gen_current")
        return 5

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: int) -> int:
        self._gpu(handle, "pcie_gen_max")
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: int) -> int:
        self._gpu(handle, "pcie_width_current")
        return 16

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: int) -> int:
        self._gpu(handle, "pcie_width_max")
        return 16

    def nvmlDeviceGetPcieReplayCounter(self, handle: int) -> int:
        return self._gpu(handle, "pcie_replay_count").get("replays", 0)

    def nvmlDeviceGetNumaNodeId(self, handle: int) -> int:
        return self._gpu(handle, "numa_node").get("numa", 0)

    def nvmlDeviceGetCpuAffinity(self, handle: int, size: int) -> list[int]:
        cpus = self._gpu(handle, "cpu_affinity").get("cpus", [])
        words = [0] * size
        for cpu in cpus:
            if cpu // 64 < size:
                words[cpu // 64] |= 1 << (cpu % 64)
        return words

    def nvmlDeviceGetNvLinkState(self, handle: int, link: int) -> int:
        gpu = self._gpu(handle, "nvlink_state")
        links = gpu.get("links")
        if links is None:
            raise SyntheticNVMLError(3)
        if link >= len(links):
            raise SyntheticNVMLError(2)
        return 0 if links[link] is None else 1

    def nvmlDeviceGetNvLinkVersion(self, handle: int, link: int) -> int:
        self._gpu(handle, "nvlink_version")
        return 4

    def nvmlDeviceGetNvLinkRemotePciInfo(self, handle: int, link: int) -> _Pci:
        return _Pci(_bus(self._gpu(handle, "nvlink_remote_pci")["links"][link][0]))

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, handle: int, link: int) -> int:
        return self._gpu(handle, "nvlink_remote_type")["links"][link][1]

    def nvmlDeviceGetEccMode(self, handle: int) -> list[int]:
        self._gpu(handle, "ecc_mode")
        return [1, 1]

    def nvmlDeviceGetTotalEccErrors(self, handle: int, error_type: int, counter_type: int) -> int:
        self._gpu(handle, "ecc_errors")
        return {(0, 0): 0, (1, 0): 0, (0, 1): 7, (1, 1): 0}[(error_type, counter_type)]

    def nvmlDeviceGetRetiredPages(self, handle: int, cause: int) -> list[int]:
        gpu = self._gpu(handle, "retired_pages")
        return [0x1000 * page for page in range(gpu.get("retired", (0, 0))[cause])]

    def nvmlDeviceGetRetiredPagesPendingStatus(self, handle: int) -> int:
        self._gpu(handle, "retired_pages_pending")
        return 0

    def nvmlDeviceGetRemappedRows(self, handle: int) -> tuple[int, int, int, int]:
        self._gpu(handle, "remapped_rows")
        return (0, 0, 0, 0)

    def nvmlDeviceValidateInforom(self, handle: int) -> None:
        if self._gpu(handle, "inforom_valid").get("inforom_corrupt"):
            raise SyntheticNVMLError(14)

    def nvmlDeviceGetInforomImageVersion(self, handle: int) -> str:
        self._gpu(handle, "inforom_image")
        return "G520.0200.00.05"

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        self._gpu(handle, "temperature")
        return 33

    def nvmlDeviceGetTemperatureThreshold(self, handle: int, threshold: int) -> int:
        self._gpu(handle, "temperature_threshold")
        return {0: 92, 1: 87}[threshold]

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: int) -> int:
        # the only spelling drivers before R535 know; nvmlDeviceGetCurrentClocksEventReasons is absent here
        self._gpu(handle, "clock_reasons")
        return 0x1 | 0x4

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[object]:
        self._gpu(handle, "compute_processes")
        return [object(), object()]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: int) -> int:
        self._gpu(handle, "mig_device_count")
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: int, index: int) -> int:
        if index >= self._gpu(handle, "mig_device").get("mig_devices", 0):
            raise SyntheticNVMLError(6)
        return 100 + index

    def nvmlDeviceGetGpuFabricInfo(self, handle: int, info: Any) -> int:
        self._gpu(handle, "fabric")
        target = info._obj  # what ctypes.byref() points at
        target.state, target.status = 3, 0
        return 0

    def nvmlDeviceGetTopologyCommonAncestor(self, first: int, second: int) -> int:
        self.calls.append("common_ancestor")
        return self.ancestor

    def nvmlDeviceGetP2PStatus(self, first: int, second: int, index: Any) -> int:
        self.calls.append("p2p")
        if not isinstance(index, int):
            raise TypeError("ctypes.ArgumentError: don't know how to convert parameter 3")
        return 0
