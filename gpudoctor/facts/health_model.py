"""Each GPU's hardware health as facts: the signals NVIDIA's DCGM level-1 checks, and a few more.

Filled from NVML (``nvml.json``) where it answered, else from ``nvidia-smi -q -x`` (every schema, v8 to
v13), else from the plain table (which shows little: "ERR!" and "GPU is lost").  The ``HEALTH*`` checks
read only this.  ``None`` is "unknown / not supported", never "fine".
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class EccCounts:
    """ECC error counts.  Volatile: since the driver last loaded; aggregate: over the GPU's life."""

    volatile_corrected: int | None = None
    volatile_uncorrected: int | None = None
    aggregate_corrected: int | None = None
    aggregate_uncorrected: int | None = None


@dataclass(frozen=True)
class GpuHealth:
    index: int | None = None
    bus_id: str | None = None
    name: str | None = None
    brand: str | None = None  # "Tesla", "NVIDIA", "GeForce", ... (persistence matters on datacenter parts)
    source: str | None = None  # "nvml", "nvidia-smi -q -x", "nvidia-smi"

    # The GPU stopped answering: NVML_ERROR_GPU_IS_LOST, "GPU is lost" / "Unknown Error" in nvidia-smi.
    lost: bool = False
    lost_detail: str | None = None
    reset_required: bool | None = None  # NVML_ERROR_RESET_REQUIRED, or -q -x gpu_reset_status
    drain_and_reset_recommended: bool | None = None

    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None  # current ECC mode; None where ECC is not supported (GeForce)
    ecc_pending: bool | None = None  # the mode after the next reboot
    ecc: EccCounts = field(default_factory=EccCounts)

    # Page retirement (Kepler .. Volta): pages retired for single-bit / double-bit errors, and pending.
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    # Row remapping (Ampere and newer).
    remapped_rows_correctable: int | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None

    inforom_valid: bool | None = None  # NVML nvmlDeviceValidateInforom
    inforom_error: str | None = None  # its error name when invalid ("NVML_ERROR_CORRUPTED_INFOROM")
    inforom_image: str | None = None  # "G503.0201.00.04"

    temperature_c: int | None = None
    slowdown_temp_c: int | None = None  # the GPU slows itself down at this temperature
    shutdown_temp_c: int | None = None
    clock_reasons_active: list[str] = field(default_factory=list)  # "hw_slowdown", "sw_power_cap", ...

    compute_mode: str | None = None  # "Default", "Exclusive_Process", "Prohibited"
    compute_processes: int | None = None  # CUDA processes on the GPU now
    mig_enabled: bool | None = None
    mig_instances: int | None = None  # MIG devices (GPU instance + compute instance) that exist

    fabric_state: str | None = None  # NVML GPU fabric: "not_supported", "not_started", "in_progress", "completed"
    fabric_status: str | None = None  # the NVML error name of a failed fabric registration
