"""Each GPU's hardware health (``GpuHealth``) from the NVML probe's record (``nvml.json``).

NVML answers per counter and says *why* when it cannot, so it is the first source
:func:`gpudoctor.facts.gpu_health.gpu_health` asks.  Enums and bitmasks stay NVML's numbers in the
record; they are named here.  Every parser here never raises; unknown stays ``None``.
"""

from __future__ import annotations

from gpudoctor.evidence.nvml_probe import NVML_ERROR_NAMES
from gpudoctor.facts.health_model import EccCounts, GpuHealth
from gpudoctor.facts.json_values import json_dict, json_int, json_list, json_text
from gpudoctor.facts.nvml import brand_name
from gpudoctor.facts.nvml_topology import FABRIC_STATES
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

# NVML clocks-event-reason bits (nvml.h nvmlClocksEventReason*) in the names nvidia-smi's XML uses.
CLOCK_REASON_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clocks_setting"),
)

NVML_SOURCE = "nvml"


def clock_reasons(mask: object) -> list[str]:
    """The reason names set in NVML's bitmask; bits NVML added later are left out."""
    if not isinstance(mask, int) or isinstance(mask, bool) or mask < 0:
        return []
    return [name for bit, name in CLOCK_REASON_BITS if mask & bit]


def _flag(value: object) -> bool | None:
    """NVML's enable states and 0/1 flags (and JSON booleans) as a bool."""
    if isinstance(value, bool):
        return value
    return _FLAGS.get(json_int(value))


_FLAGS: dict[int | None, bool] = {0: False, 1: True}


def _error_name(record: dict[str, object], *codes: int) -> str | None:
    """The first error the probe recorded for this GPU with one of these codes, as its message."""
    for value in json_dict(record.get("errors")).values():
        error = json_dict(value)
        code = json_int(error.get("code"))
        if code is not None and code in codes:
            return json_text(error.get("name")) or NVML_ERROR_NAMES.get(code)
    return None


def _from_nvml_record(record: dict[str, object]) -> tuple[GpuHealth, bool]:
    """One GPU's health, and whether its clock reasons were known (an empty list can mean either)."""
    lost = record.get("lost") is True or _error_name(record, 15) is not None
    persistence = record.get("persistence_mode")
    mig_enabled = _flag(json_dict(record.get("mig_mode")).get("current"))

    data = json_dict(record.get("health"))
    ecc_mode = json_dict(data.get("ecc_mode"))
    errors = json_dict(data.get("ecc_errors"))
    retired = json_dict(data.get("retired_pages"))
    rows = json_dict(data.get("remapped_rows"))
    inforom = json_dict(data.get("inforom"))
    valid = inforom.get("valid")
    inforom_valid = valid if isinstance(valid, bool) else None
    temperature = json_dict(data.get("temperature"))
    mask = json_int(data.get("clock_reasons"))
    fabric = json_dict(data.get("fabric"))
    fabric_state = FABRIC_STATES.get(json_int(fabric.get("state")))
    # NVML fills the status only once registration has finished
    status = json_int(fabric.get("status"))
    fabric_status = None
    if fabric_state == "completed" and status is not None:
        fabric_status = "NVML_SUCCESS" if status == 0 else NVML_ERROR_NAMES.get(status, f"NVML error {status}")
    health = GpuHealth(
        index=json_int(record.get("index")),
        bus_id=normalize_bus_id(record.get("pci_bus_id")),
        name=json_text(record.get("name")),
        brand=brand_name(record.get("brand")),
        source=NVML_SOURCE,
        lost=lost,
        lost_detail=(_error_name(record, 15) or "NVML_ERROR_GPU_IS_LOST") if lost else None,
        # NVML only ever says "reset required" (error 16); no error is no answer, not "no reset needed"
        reset_required=True if record.get("reset_required") is True or _error_name(record, 16) is not None else None,
        persistence_mode=persistence if isinstance(persistence, bool) else None,
        ecc_enabled=_flag(ecc_mode.get("current")),
        ecc_pending=_flag(ecc_mode.get("pending")),
        ecc=EccCounts(
            volatile_corrected=json_int(errors.get("volatile_corrected")),
            volatile_uncorrected=json_int(errors.get("volatile_uncorrected")),
            aggregate_corrected=json_int(errors.get("aggregate_corrected")),
            aggregate_uncorrected=json_int(errors.get("aggregate_uncorrected")),
        ),
        retired_pages_sbe=json_int(retired.get("sbe")),
        retired_pages_dbe=json_int(retired.get("dbe")),
        retired_pages_pending=_flag(retired.get("pending")),
        remapped_rows_correctable=json_int(rows.get("correctable")),
        remapped_rows_uncorrectable=json_int(rows.get("uncorrectable")),
        remapped_rows_pending=_flag(rows.get("pending")),
        remapped_rows_failure=_flag(rows.get("failure")),
        inforom_valid=inforom_valid,
        inforom_error=json_text(inforom.get("error")) if inforom_valid is False else None,
        inforom_image=json_text(inforom.get("image")),
        temperature_c=json_int(temperature.get("current")),
        slowdown_temp_c=json_int(temperature.get("slowdown")),
        shutdown_temp_c=json_int(temperature.get("shutdown")),
        clock_reasons_active=clock_reasons(mask),
        compute_mode=json_text(record.get("compute_mode")),
        compute_processes=json_int(data.get("compute_processes")),
        mig_enabled=mig_enabled,
        mig_instances=json_int(data.get("mig_instances")) if mig_enabled else None,
        fabric_state=fabric_state,
        fabric_status=fabric_status,
    )
    return health, mask is not None and mask >= 0


@never_raises(list[tuple[GpuHealth, bool]])
def _nvml_records(data: object) -> list[tuple[GpuHealth, bool]]:
    if not isinstance(data, dict) or json_dict(data.get("init")).get("ok") is not True:
        return []
    return [_from_nvml_record(record) for record in json_list(data.get("devices")) if isinstance(record, dict)]


def health_from_nvml(data: object) -> list[GpuHealth]:
    """Each GPU's health from the NVML probe's record; [] when NVML did not answer."""
    return [health for health, _known in _nvml_records(data)]
