"""Typed facts about Google Cloud TPUs: chips on the bus, their device nodes, libtpu and who holds them.

Read from the PCI bus (vendor 0x1ae0), ``/dev/accel*`` and ``/dev/vfio/*``, the libtpu lock file, the JAX
probe and pasted ``jax.devices()`` output and error logs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TpuChip:
    bus_id: str | None = None
    device_id: str | None = None  # "005e"
    generation: str | None = None  # "v4", "v5e", from the device id
    device_node: str | None = None  # "/dev/accel0" or "/dev/vfio/0"


@dataclass(frozen=True)
class TpuDevice:
    """One device as JAX lists it (a TensorCore: two per chip on v2/v3, one from v4 on)."""

    id: int
    process_index: int | None = None
    coords: tuple[int, ...] | None = None
    core_on_chip: int | None = None
    kind: str | None = None  # device_kind, "TPU v4"


@dataclass(frozen=True)
class TpuFacts:
    chips: tuple[TpuChip, ...] = ()
    devices: tuple[TpuDevice, ...] | None = None  # None: no jax.devices() listing in the evidence
    libtpu_version: str | None = None
    lockfile: str | None = None  # "/tmp/libtpu_lockfile" when it exists
    in_use_by_pid: int | None = None  # "The TPU is already in use by process with pid N"
    lockfile_mtime: float | None = None  # seconds since the epoch
    lockfile_uid: int | None = None  # the lock file's owner
    lock_holders: tuple[int, ...] = ()  # processes seen holding the lock file or a TPU node (this user's only)
    holders_complete: bool = False  # the holder scan could read every process (it ran as root)
    runtime_collected: bool = False  # the lock file was looked for (tpu-runtime.json)
    in_use_reported: bool = False  # a log says libtpu / the TPU is already in use by another process
    device_open_error: str | None = None  # "/dev/accel0 (Operation not permitted)"
    misleading_libtpu_warning: bool = False  # JAX said "libtpu is not installed" (also printed when it is busy)
    accel_nodes: tuple[str, ...] = ()  # /dev/accelN present
    vfio_nodes: tuple[str, ...] = ()  # /dev/vfio/N present (v5e/v6e chips; any VFIO passthrough too)
    jax_backend: str | None = None  # what JAX runs on: "tpu", "cpu", "gpu" (probe, or a pasted listing)
    jax_source: str | None = None  # "probe", "paste" (a jax.devices() listing) or "log" (JAX's fallback words)
    libtpu_installed: bool | None = None  # None: no probe listed the distributions

    @property
    def present(self) -> bool:
        return bool(self.chips) or bool(self.devices)
