"""Facts from ``nvml.json``: what NVML answered, or how its initialisation failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpudoctor.facts.json_values import json_int, json_text
from gpudoctor.facts.model import GpuInfo
from gpudoctor.facts.pci_address import normalize_bus_id


@dataclass
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
    device_errors: dict[int, dict[str, Any]] = field(default_factory=dict)
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


def brand_name(value: Any) -> str | None:
    """NVML's brand number as nvidia-smi spells it; a brand NVML added later stays unknown (None)."""
    return BRAND_NAMES.get(value) if json_int(value) is not None else None


def cuda_version_from_int(value: Any) -> str | None:
    """NVML/CUDA encode versions as 1000*major + 10*minor (12020 -> "12.2")."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def _gpu(record: dict[str, Any]) -> GpuInfo:
    gpu = GpuInfo(index=json_int(record.get("index")), name=json_text(record.get("name")))
    gpu.uuid = json_text(record.get("uuid"))
    gpu.serial = json_text(record.get("serial"))
    gpu.bus_id = normalize_bus_id(record.get("pci_bus_id")) if json_text(record.get("pci_bus_id")) else None
    total = json_int(record.get("memory_total_bytes"))
    used = json_int(record.get("memory_used_bytes"))
    gpu.memory_total_mib = total // (1024 * 1024) if total is not None else None
    gpu.memory_used_mib = used // (1024 * 1024) if used is not None else None
    capability = record.get("compute_capability")
    if isinstance(capability, list) and len(capability) == 2 and all(json_int(c) is not None for c in capability):
        gpu.compute_capability = f"{capability[0]}.{capability[1]}"
        gpu.compute_capability_source = "nvml"
    gpu.brand = brand_name(record.get("brand"))
    gpu.compute_mode = json_text(record.get("compute_mode"))
    persistence = record.get("persistence_mode")
    gpu.persistence_mode = persistence if isinstance(persistence, bool) else None
    mig = record.get("mig_mode")
    if isinstance(mig, dict):
        names = {0: "Disabled", 1: "Enabled"}
        # _int first: a damaged record may hold a list there, and a list is no dict key
        gpu.mig_mode_current = names.get(json_int(mig.get("current")))  # type: ignore[arg-type]
        gpu.mig_mode_pending = names.get(json_int(mig.get("pending")))  # type: ignore[arg-type]
    pcie = record.get("pcie") if isinstance(record.get("pcie"), dict) else {}
    gpu.pcie_gen_current = json_int(pcie.get("gen_current"))
    gpu.pcie_gen_max = json_int(pcie.get("gen_max"))
    gpu.pcie_width_current = json_int(pcie.get("width_current"))
    gpu.pcie_width_max = json_int(pcie.get("width_max"))
    return gpu


def parse_nvml_json(data: Any) -> NvmlFacts:
    """Typed facts from the probe's record; any other shape gives 'unknown', never an error."""
    facts = NvmlFacts()
    if not isinstance(data, dict):
        return facts
    facts.collected = True
    bindings = data.get("bindings") if isinstance(data.get("bindings"), dict) else {}
    importable = bindings.get("importable")
    facts.bindings_importable = importable if isinstance(importable, bool) else None
    facts.bindings_error = json_text(bindings.get("error"))
    init = data.get("init") if isinstance(data.get("init"), dict) else {}
    init_ok = init.get("ok")
    facts.init_ok = init_ok if isinstance(init_ok, bool) else None
    error = init.get("error") if isinstance(init.get("error"), dict) else {}
    facts.error_code = json_int(error.get("code"))
    facts.error_name = json_text(error.get("name"))
    facts.error_message = json_text(error.get("message"))
    facts.driver_version = json_text(data.get("driver_version"))
    facts.nvml_version = json_text(data.get("nvml_version"))
    facts.cuda_driver_version = cuda_version_from_int(data.get("cuda_driver_version"))
    facts.device_count = json_int(data.get("device_count"))
    devices = data.get("devices") if isinstance(data.get("devices"), list) else []
    for record in devices:
        if isinstance(record, dict):
            gpu = _gpu(record)
            facts.gpus.append(gpu)
            errors = record.get("errors")
            if isinstance(errors, dict) and errors and gpu.index is not None:
                facts.device_errors[gpu.index] = errors
            if gpu.index is not None and record.get("lost") is True:
                facts.lost_gpus.append(gpu.index)
            if gpu.index is not None and record.get("reset_required") is True:
                facts.reset_required_gpus.append(gpu.index)
    return facts
