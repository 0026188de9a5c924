"""Each GPU's hardware health (``GpuHealth``) from ``nvidia-smi -q -x``.

The XML fills what NVML left unknown and serves alone where NVML could not be asked
(:func:`gpudoctor.facts.gpu_health.gpu_health` merges them).  Schemas v8 to v13 are read; damaged
XML gives what it holds.  Every parser here never raises; unknown stays ``None``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from gpudoctor.facts.gpu_state import parse_gpu_states_xml
from gpudoctor.facts.health_model import EccCounts, GpuHealth
from gpudoctor.facts.nvidia_smi_text import known, parse_int
from gpudoctor.facts.nvidia_smi_xml import log_root
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

XML_SOURCE = "nvidia-smi -q -x"
_TEMPERATURE = re.compile(r"(\d{1,3})\s*C")


def _yes_no(text: str | None) -> bool | None:
    return {"yes": True, "no": False}.get((known(text) or "").lower())


def _enabled(text: str | None) -> bool | None:
    return {"enabled": True, "disabled": False}.get((known(text) or "").lower())


def _temperature(text: str | None) -> int | None:
    match = _TEMPERATURE.fullmatch(known(text) or "")
    return int(match.group(1)) if match else None


def _ecc_sum(element: ET.Element | None, kinds: tuple[str, ...]) -> int | None:
    """Sum of the counters whose tag starts with one of ``kinds``; None when none of them has a number."""
    if element is None:
        return None
    values = [parse_int(child.text) for child in element if child.tag.startswith(kinds) and len(child) == 0]
    numbers = [value for value in values if value is not None]
    return sum(numbers) if numbers else None


def _ecc_bits(element: ET.Element | None) -> int | None:
    """Old schemas: a ``single_bit``/``double_bit`` block; its ``total``, else the sum of its parts."""
    if element is None:
        return None
    total = parse_int(element.findtext("total"))
    if total is not None:
        return total
    numbers = [parse_int(child.text) for child in element if child.tag != "total" and len(child) == 0]
    known_numbers = [number for number in numbers if number is not None]
    return sum(known_numbers) if known_numbers else None


def _ecc_counts(element: ET.Element | None) -> EccCounts:
    corrected: dict[str, int | None] = {"volatile": None, "aggregate": None}
    uncorrected: dict[str, int | None] = {"volatile": None, "aggregate": None}
    for scope in ("volatile", "aggregate"):
        block = element.find(scope) if element is not None else None
        if block is None:
            continue
        if block.find("single_bit") is not None or block.find("double_bit") is not None:
            corrected[scope], uncorrected[scope] = (
                _ecc_bits(block.find("single_bit")),
                _ecc_bits(block.find("double_bit")),
            )
        else:
            # v11+: sram_/dram_ counters (and from R570 the SRAM uncorrectable split into parity/SEC-DED)
            corrected[scope] = _ecc_sum(block, ("sram_correctable", "dram_correctable"))
            uncorrected[scope] = _ecc_sum(block, ("sram_uncorrectable", "dram_uncorrectable"))
    return EccCounts(
        volatile_corrected=corrected["volatile"],
        volatile_uncorrected=uncorrected["volatile"],
        aggregate_corrected=corrected["aggregate"],
        aggregate_uncorrected=uncorrected["aggregate"],
    )


def _is_compute(element: ET.Element) -> bool:
    kind = known(element.findtext("type")) or ""
    return "C" in kind or not kind  # "C", "C+G", "M+C"; a process of no stated type may be CUDA too


def _xml_gpu(element: ET.Element, index: int | None) -> GpuHealth:
    # the id attribute carries the same address; trimmed captures may lack <pci>
    bus_id = normalize_bus_id(element.findtext("pci/pci_bus_id")) or normalize_bus_id(element.get("id"))
    # the same flag under its pre-R450 name (pending_blacklist) and its later one
    pending = [_yes_no(element.findtext(f"retired_pages/{tag}")) for tag in ("pending_retirement", "pending_blacklist")]
    image = known(element.findtext("inforom_version/img_version"))
    processes = element.find("processes")
    mig_enabled = _enabled(element.findtext("mig_mode/current_mig"))
    state = known(element.findtext("fabric/state"))
    return GpuHealth(
        index=index,
        bus_id=bus_id,
        name=known(element.findtext("product_name")),
        brand=known(element.findtext("product_brand")),
        source=XML_SOURCE,
        reset_required=_yes_no(element.findtext("gpu_reset_status/reset_required")),
        drain_and_reset_recommended=_yes_no(element.findtext("gpu_reset_status/drain_and_reset_recommended")),
        persistence_mode=_enabled(element.findtext("persistence_mode")),
        ecc_enabled=_enabled(element.findtext("ecc_mode/current_ecc")),
        ecc_pending=_enabled(element.findtext("ecc_mode/pending_ecc")),
        ecc=_ecc_counts(element.find("ecc_errors")),
        retired_pages_sbe=parse_int(element.findtext("retired_pages/multiple_single_bit_retirement/retired_count")),
        retired_pages_dbe=parse_int(element.findtext("retired_pages/double_bit_retirement/retired_count")),
        retired_pages_pending=True if True in pending else (False if False in pending else None),
        remapped_rows_correctable=parse_int(element.findtext("remapped_rows/remapped_row_corr")),
        remapped_rows_uncorrectable=parse_int(element.findtext("remapped_rows/remapped_row_unc")),
        remapped_rows_pending=_yes_no(element.findtext("remapped_rows/remapped_row_pending")),
        remapped_rows_failure=_yes_no(element.findtext("remapped_rows/remapped_row_failure")),
        inforom_image=image if image and not image.startswith("[") else None,  # "[REDACTED]" is no version
        temperature_c=_temperature(element.findtext("temperature/gpu_temp")),
        slowdown_temp_c=_temperature(element.findtext("temperature/gpu_temp_slow_threshold")),
        shutdown_temp_c=_temperature(element.findtext("temperature/gpu_temp_max_threshold")),
        compute_mode=known(element.findtext("compute_mode")),
        compute_processes=(
            sum(1 for process in processes.findall("process_info") if _is_compute(process))
            if processes is not None
            else None
        ),
        mig_enabled=mig_enabled,
        mig_instances=len(element.findall("mig_devices/mig_device")) if mig_enabled else None,
        fabric_state=re.sub(r"[\s-]+", "_", state.lower()) if state else None,
        fabric_status=known(element.findtext("fabric/status")),
    )


def _from_xml(text: str) -> list[GpuHealth]:
    root, _damage = log_root(text)
    if root is None:
        return []
    elements = root.findall("gpu")
    # as in nvidia_smi_xml: the position is the index only when every attached GPU is listed
    complete = parse_int(root.findtext("attached_gpus")) == len(elements)
    healths = [_xml_gpu(element, position if complete else None) for position, element in enumerate(elements)]
    # clock reasons are gpu_state's to read; its list is the same <gpu> elements in the same order
    states = parse_gpu_states_xml(text)
    if len(states) == len(healths):
        healths = [
            replace(health, clock_reasons_active=list(state.clock_reasons_active))
            if state.bus_id == health.bus_id or state.bus_id is None or health.bus_id is None
            else health
            for health, state in zip(healths, states)
        ]
    return healths


@never_raises(list[GpuHealth])
def health_from_xml(text: object) -> list[GpuHealth]:
    """Each GPU's health from ``nvidia-smi -q -x`` (schemas v8 to v13, damaged XML gives what it holds)."""
    return _from_xml(text) if isinstance(text, str) else []
