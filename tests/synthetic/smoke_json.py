"""SYNTHETIC smoke-probe records: GPU-side runs this CPU-only machine cannot record.

Each record is written by hand in the shape of the smoke JSON contract
(``gpudoctor/facts/smoke_model.py``) and of what ``gpudoctor/probes/smoke_torch.py`` prints
(``pci_bus_id`` as ``"%04x:%02x:%02x.0"``, ``gbps`` of a d2d copy counted once).  The numbers
are plausible for the GPUs named, but no machine printed them.  The tests combine them with REAL
nvidia-smi captures from ``../shared/fixtures`` for the GPU side of the machine; the real CPU
record is ``tests/recorded/cpu-container-debian/smoke-torch.json`` where it exists.
"""

from __future__ import annotations

import copy
from typing import Any

SYNTHETIC_PYTHON: dict[str, Any] = {
    "executable": "/home/ada/venv/bin/python",
    "version": "3.12.3",
    "implementation": "CPython",
    "platform": "linux",
    "machine": "x86_64",
    "prefix": "/home/ada/venv",
    "base_prefix": "/usr",
    "virtualenv": True,
    "conda_prefix": None,
}

_CPU = {"id": "cpu", "kind": "cpu", "name": "AMD EPYC 7B13 64-Core Processor", "threads": 32}


def _matmul(device: str, dtype: str, tflops: float | None, n: int = 8192, **extra: Any) -> dict[str, Any]:
    seconds = 2 * n**3 / (tflops * 1e12) if tflops else None
    record = {
        "device": device,
        "dtype": dtype,
        "n": n,
        "repeats": 20,
        "seconds": seconds,
        "tflops": tflops,
        "error": None,
        "skipped": None,
    }
    record.update(extra)
    return record


def _cnn(
    device: str,
    precision: str,
    steps_per_s: float | None,
    first: float | None = 2.31,
    last: float | None = 0.42,
    **extra: Any,
) -> dict[str, Any]:
    record = {
        "device": device,
        "precision": precision,
        "batch": 64,
        "steps": 20,
        "seconds_per_step": 1 / steps_per_s if steps_per_s else None,
        "steps_per_s": steps_per_s,
        "loss_first": first,
        "loss_last": last,
        "loss_decreased": (last < first) if first is not None and last is not None else None,
        "error": None,
        "skipped": None,
    }
    record.update(extra)
    return record


def _bw(device: str, direction: str, memory: str, gbps: float | None, **extra: Any) -> dict[str, Any]:
    record = {
        "device": device,
        "direction": direction,
        "memory": memory,
        "bytes": 268435456,
        "repeats": 10,
        "gbps": gbps,
        "error": None,
        "skipped": None,
    }
    record.update(extra)
    return record


def _record(
    devices: list[dict[str, Any]],
    matmul: list[dict[str, Any]],
    cnn: list[dict[str, Any]],
    bandwidth: list[dict[str, Any]] | None = None,
    p2p: list[dict[str, Any]] | None = None,
    allreduce: dict[str, Any] | None = None,
    version: str = "2.6.0+cu126",
) -> dict[str, Any]:
    return {
        "probe": "smoke",
        "probe_version": 1,
        "python": copy.deepcopy(SYNTHETIC_PYTHON),
        "framework": "torch",
        "framework_version": version,
        "mode": "quick",
        "budget_s": 25.0,
        "elapsed_s": 14.2,
        "stopped_by": None,
        "devices": devices,
        "matmul": matmul,
        "cnn": cnn,
        "bandwidth": bandwidth or [],
        "p2p": p2p or [],
        "allreduce": allreduce,
        "installed": True,
        "import_ok": True,
        "import_error": None,
        "errors": {},
        "probe_error": None,
    }


def h100_device(index: int, bus: str) -> dict[str, Any]:
    return {
        "id": f"cuda:{index}",
        "kind": "cuda",
        "name": "NVIDIA H100 80GB HBM3",
        "capability": "9.0",
        "memory_total_mib": 81559,
        "memory_free_mib": 80000,
        "pci_bus_id": bus,
    }


# One H100 SXM (GPU 0 of the real 8x H100 table, bus 0000:18:00.0) doing what it should.
SYNTHETIC_SMOKE_H100_HEALTHY: dict[str, Any] = _record(
    devices=[copy.deepcopy(_CPU), h100_device(0, "0000:18:00.0")],
    matmul=[
        _matmul("cpu", "fp32", 1.9, n=4096),
        _matmul("cpu", "bf16", None, skipped="no fast bf16 on this CPU"),
        _matmul("cuda:0", "fp32", 51.2),
        _matmul("cuda:0", "tf32", 372.0),
        _matmul("cuda:0", "fp16", 721.0),
        _matmul("cuda:0", "bf16", 733.0),
    ],
    cnn=[_cnn("cpu", "fp32", 12.5), _cnn("cuda:0", "fp32", 402.0), _cnn("cuda:0", "amp", 512.0)],
    bandwidth=[
        _bw("cuda:0", "h2d", "pageable", 19.7),
        _bw("cuda:0", "h2d", "pinned", 53.1),
        _bw("cuda:0", "d2h", "pinned", 52.4),
        _bw("cuda:0", "d2d", "device", 1350.0),
    ],
)

# The same H100 with its matmul at about 30% of the spec sheet.
SYNTHETIC_SMOKE_H100_SLOW: dict[str, Any] = _record(
    devices=[copy.deepcopy(_CPU), h100_device(0, "0000:18:00.0")],
    matmul=[_matmul("cpu", "fp32", 1.9, n=4096), _matmul("cuda:0", "fp32", 20.1), _matmul("cuda:0", "bf16", 297.0)],
    cnn=[_cnn("cpu", "fp32", 12.5), _cnn("cuda:0", "fp32", 160.0)],
)

# A machine whose driver lists GPUs but whose torch ran everything on the CPU (a +cpu wheel).
SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX: dict[str, Any] = _record(
    devices=[copy.deepcopy(_CPU)],
    matmul=[_matmul("cpu", "fp32", 1.9, n=4096)],
    cnn=[_cnn("cpu", "fp32", 12.5)],
    allreduce={
        "backend": "gloo",
        "world_size": 2,
        "device_kind": "cpu",
        "bytes": 8388608,
        "repeats": 5,
        "seconds": 0.0134,
        "algbw_gbps": 0.63,
        "busbw_gbps": 0.63,
        "ddp_step_s": 0.21,
        "ddp_loss_decreased": True,
        "error": None,
        "skipped": None,
    },
    version="2.6.0+cpu",
)


def rtx_device(name: str, bus: str, index: int = 0) -> dict[str, Any]:
    return {
        "id": f"cuda:{index}",
        "kind": "cuda",
        "name": name,
        "capability": "8.9",
        "memory_total_mib": 24210,
        "memory_free_mib": 23800,
        "pci_bus_id": bus,
    }


def single_gpu_bandwidth(
    name: str, bus: str, h2d: float, d2h: float, capability: str = "8.9", matmul_fp32: float = 40.0
) -> dict[str, Any]:
    """A one-GPU run with the given pinned host↔device bandwidth (GB/s)."""
    device = rtx_device(name, bus)
    device["capability"] = capability
    return _record(
        devices=[copy.deepcopy(_CPU), device],
        matmul=[_matmul("cpu", "fp32", 1.9, n=4096), _matmul("cuda:0", "fp32", matmul_fp32)],
        cnn=[_cnn("cpu", "fp32", 12.5), _cnn("cuda:0", "fp32", 300.0)],
        bandwidth=[_bw("cuda:0", "h2d", "pinned", h2d), _bw("cuda:0", "d2h", "pinned", d2h)],
    )


def eight_h100(p2p: list[dict[str, Any]], allreduce: dict[str, Any]) -> dict[str, Any]:
    """The real 8x H100 table's GPUs (bus ids of nvidia-smi's GPU 0..7) with the given P2P and all-reduce."""
    buses = [
        "0000:18:00.0",
        "0000:2a:00.0",
        "0000:3a:00.0",
        "0000:5d:00.0",
        "0000:9a:00.0",
        "0000:ab:00.0",
        "0000:ba:00.0",
        "0000:db:00.0",
    ]
    devices = [copy.deepcopy(_CPU)] + [h100_device(i, bus) for i, bus in enumerate(buses)]
    return _record(
        devices=devices,
        matmul=[_matmul("cpu", "fp32", 1.9, n=4096)] + [_matmul(f"cuda:{i}", "bf16", 720.0) for i in range(8)],
        cnn=[_cnn("cpu", "fp32", 12.5), _cnn("cuda:0", "fp32", 402.0)],
        p2p=p2p,
        allreduce=allreduce,
    )


def p2p(src: int, dst: int, access: bool | None, gbps: float | None, error: str | None = None) -> dict[str, Any]:
    return {"src": f"cuda:{src}", "dst": f"cuda:{dst}", "access": access, "gbps": gbps, "error": error}


def nccl(busbw: float | None, error: str | None = None, world_size: int = 8) -> dict[str, Any]:
    return {
        "backend": "nccl",
        "world_size": world_size,
        "device_kind": "cuda",
        "bytes": 67108864,
        "repeats": 10,
        "seconds": 0.0003,
        "algbw_gbps": busbw * world_size / (2 * (world_size - 1)) if busbw else None,
        "busbw_gbps": busbw,
        "ddp_step_s": 0.012,
        "ddp_loss_decreased": True if not error else None,
        "error": error,
        "skipped": None,
    }
