"""Facts from ``nvml.json``: what NVML answered, or how its initialisation failed."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.facts.json_values import json_bool, json_dict, json_int, json_list, json_text
from gpudoctor.facts.model import GpuInfo
from gpudoctor.facts.pci_address import normalize_bus_id


@dataclass(frozen=True)
class NvmlError:
    """One NVML call that failed, as the probe recorded it (``nvmlReturn_t`` code, its name, the message)."""

    code: int | None = None
    name: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class NvmlFacts:
    collected: bool = False
    bindings_importable: bool | None = None
    bindings_error: str | None = None
    init_ok: bool | None = None
    error_code: int | None = None
    error_name: str | None = None
    error_message: str | None = None
    driver_version: str | None = None
    nvml_version: str | None = None
    cuda_driver_version: str | None = None  # "12.2" from NVML's 12020
    device_count: int | None = None
    gpus: list[GpuInfo] = field(default_factory=list)
    device_errors: dict[int, dict[str, NvmlError]] = field(default_factory=dict)  # GPU -> query -> its failure
    lost_gpus: list[int] = field(default_factory=list)  # NVML answered NVML_ERROR_GPU_IS_LOST for these
    reset_required_gpus: list[int] = field(default_factory=list)  # ... NVML_ERROR_RESET_REQUIRED


# nvmlBrandType_t, in nvidia-smi's words for the same brand (its product_brand element).
BRAND_NAMES = {
    0: None,
    1: "Quadro",
    2: "Tesla",
    3: "NVS",
    4: "GRID",
    5: "GeForce",
    6: "Titan",
    7: "NVIDIA Virtual Applications",
    8: "NVIDIA Virtual PC",
    9: "NVIDIA Virtual Compute Server",
    10: "NVIDIA RTX Virtual Workstation",
    11: "NVIDIA Cloud Gaming",
    12: "Quadro RTX",
    13: "NVIDIA RTX",
    14: "NVIDIA",
    15: "GeForce RTX",
    16: "Titan RTX",
}


def brand_name(value: object) -> str | None:
    """NVML's brand number as nvidia-smi spells it; a brand NVML added later stays unknown (None)."""
    number = json_int(value)
    return BRAND_NAMES.get(number) if number is not None else None


def cuda_version_from_int(value: object) -> str | None:
    """NVML/CUDA encode versions as 1000*major + 10*minor (12020 -> "12.2")."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


# json_int first: a damaged record may hold a list there, and a list is no dict key.
_MIG_MODES: dict[int | None, str] = {0: "Disabled", 1: "Enabled"}


def _error(record: object) -> NvmlError | None:
    error = json_dict(record)
    if not error:
        return None
    return NvmlError(json_int(error.get("code")), json_text(error.get("name")), json_text(error.get("message")))


def _gpu(record: dict[str, object]) -> GpuInfo:
    total = json_int(record.get("memory_total_bytes"))
    used = json_int(record.get("memory_used_bytes"))
    capability_parts = [json_int(part) for part in json_list(record.get("compute_capability"))]
    capability: str | None = None
    if len(capability_parts) == 2 and capability_parts[0] is not None and capability_parts[1] is not None:
        capability = f"{capability_parts[0]}.{capability_parts[1]}"
    mig = record.get("mig_mode")
    mig_modes = json_dict(mig) if isinstance(mig, dict) else None
    pcie = json_dict(record.get("pcie"))
    return GpuInfo(
        index=json_int(record.get("index")),
        name=json_text(record.get("name")),
        uuid=json_text(record.get("uuid")),
        serial=json_text(record.get("serial")),
        bus_id=normalize_bus_id(record.get("pci_bus_id")) if json_text(record.get("pci_bus_id")) else None,
        memory_total_mib=total // (1024 * 1024) if total is not None else None,
        memory_used_mib=used // (1024 * 1024) if used is not None else None,
        compute_capability=capability,
        compute_capability_source="nvml" if capability is not None else None,
        brand=brand_name(record.get("brand")),
        compute_mode=json_text(record.get("compute_mode")),
        persistence_mode=json_bool(record.get("persistence_mode")),
        mig_mode_current=_MIG_MODES.get(json_int(mig_modes.get("current"))) if mig_modes is not None else None,
        mig_mode_pending=_MIG_MODES.get(json_int(mig_modes.get("pending"))) if mig_modes is not None else None,
        pcie_gen_current=json_int(pcie.get("gen_current")),
        pcie_gen_max=json_int(pcie.get("gen_max")),
        pcie_width_current=json_int(pcie.get("width_current")),
        pcie_width_max=json_int(pcie.get("width_max")),
    )


def parse_nvml_json(data: object) -> NvmlFacts:
    """Typed facts from the probe's record; any other shape gives 'unknown', never an error."""
    if not isinstance(data, dict):
        return NvmlFacts()
    gpus: list[GpuInfo] = []
    device_errors: dict[int, dict[str, NvmlError]] = {}
    lost_gpus: list[int] = []
    reset_required_gpus: list[int] = []
    for record in json_list(data.get("devices")):
        if isinstance(record, dict):
            gpu = _gpu(record)
            gpus.append(gpu)
            errors = {
                query: error
                for query, error in ((query, _error(value)) for query, value in json_dict(record.get("errors")).items())
                if error is not None
            }
            if errors and gpu.index is not None:
                device_errors[gpu.index] = errors
            if gpu.index is not None and record.get("lost") is True:
                lost_gpus.append(gpu.index)
            if gpu.index is not None and record.get("reset_required") is True:
                reset_required_gpus.append(gpu.index)
    bindings = json_dict(data.get("bindings"))
    init = json_dict(data.get("init"))
    error = json_dict(init.get("error"))
    return NvmlFacts(
        collected=True,
        bindings_importable=json_bool(bindings.get("importable")),
        bindings_error=json_text(bindings.get("error")),
        init_ok=json_bool(init.get("ok")),
        error_code=json_int(error.get("code")),
        error_name=json_text(error.get("name")),
        error_message=json_text(error.get("message")),
        driver_version=json_text(data.get("driver_version")),
        nvml_version=json_text(data.get("nvml_version")),
        cuda_driver_version=cuda_version_from_int(data.get("cuda_driver_version")),
        device_count=json_int(data.get("device_count")),
        gpus=gpus,
        device_errors=device_errors,
        lost_gpus=lost_gpus,
        reset_required_gpus=reset_required_gpus,
    )
