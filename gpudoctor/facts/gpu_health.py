"""Each GPU's hardware health (``GpuHealth``) from the three sources that speak of it.

NVML (``nvml.json``) is asked first: it answers per counter and says *why* when it cannot.  What it
left unknown is filled from ``nvidia-smi -q -x`` of the same GPU (joined on the bus id), and the XML
alone serves where NVML could not be asked.  The plain table says almost nothing about health, so it
is read only for the GPUs it shows as broken: "Unable to determine the device handle for GPU ...:
GPU is lost" lines and ``ERR!`` cells.  Every parser here never raises; unknown stays ``None``.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.nvml_probe import NVML_ERROR_NAMES
from gpudoctor.facts.gpu_state import parse_gpu_states_xml
from gpudoctor.facts.health_model import EccCounts, GpuHealth
from gpudoctor.facts.json_values import json_dict, json_int, json_list, json_text
from gpudoctor.facts.nvidia_smi_text import known, parse_int
from gpudoctor.facts.nvidia_smi_xml import log_root
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

NVML_SOURCE, XML_SOURCE, TABLE_SOURCE = "nvml", "nvidia-smi -q -x", "nvidia-smi"
# A GPU that fell off the bus shows ERR! in most cells of its block; one ERR! (a dead fan) does not make it lost.
_LOST_ERR_CELLS = 3


def clock_reasons(mask: object) -> list[str]:
    """The reason names set in NVML's bitmask; bits NVML added later are left out."""
    if not isinstance(mask, int) or isinstance(mask, bool) or mask < 0:
        return []
    return [name for bit, name in CLOCK_REASON_BITS if mask & bit]


# --------------------------------------------------------------------------- NVML


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
    health = GpuHealth(
        index=json_int(record.get("index")),
        bus_id=normalize_bus_id(record.get("pci_bus_id")),
        name=json_text(record.get("name")),
        brand=brand_name(record.get("brand")),
        source=NVML_SOURCE,
    )
    health.lost = record.get("lost") is True or _error_name(record, 15) is not None
    if health.lost:
        health.lost_detail = _error_name(record, 15) or "NVML_ERROR_GPU_IS_LOST"
    # NVML only ever says "reset required" (error 16); no error is no answer, not "no reset needed"
    if record.get("reset_required") is True or _error_name(record, 16) is not None:
        health.reset_required = True
    persistence = record.get("persistence_mode")
    health.persistence_mode = persistence if isinstance(persistence, bool) else None
    health.compute_mode = json_text(record.get("compute_mode"))
    mig = json_dict(record.get("mig_mode"))
    health.mig_enabled = _flag(mig.get("current"))

    data = json_dict(record.get("health"))
    ecc_mode = json_dict(data.get("ecc_mode"))
    health.ecc_enabled, health.ecc_pending = _flag(ecc_mode.get("current")), _flag(ecc_mode.get("pending"))
    errors = json_dict(data.get("ecc_errors"))
    health.ecc = EccCounts(
        volatile_corrected=json_int(errors.get("volatile_corrected")),
        volatile_uncorrected=json_int(errors.get("volatile_uncorrected")),
        aggregate_corrected=json_int(errors.get("aggregate_corrected")),
        aggregate_uncorrected=json_int(errors.get("aggregate_uncorrected")),
    )
    retired = json_dict(data.get("retired_pages"))
    health.retired_pages_sbe, health.retired_pages_dbe = json_int(retired.get("sbe")), json_int(retired.get("dbe"))
    health.retired_pages_pending = _flag(retired.get("pending"))
    rows = json_dict(data.get("remapped_rows"))
    health.remapped_rows_correctable = json_int(rows.get("correctable"))
    health.remapped_rows_uncorrectable = json_int(rows.get("uncorrectable"))
    health.remapped_rows_pending, health.remapped_rows_failure = _flag(rows.get("pending")), _flag(rows.get("failure"))
    inforom = json_dict(data.get("inforom"))
    valid = inforom.get("valid")
    health.inforom_valid = valid if isinstance(valid, bool) else None
    health.inforom_error = json_text(inforom.get("error")) if health.inforom_valid is False else None
    health.inforom_image = json_text(inforom.get("image"))
    temperature = json_dict(data.get("temperature"))
    health.temperature_c = json_int(temperature.get("current"))
    health.slowdown_temp_c = json_int(temperature.get("slowdown"))
    health.shutdown_temp_c = json_int(temperature.get("shutdown"))
    mask = json_int(data.get("clock_reasons"))
    health.clock_reasons_active = clock_reasons(mask)
    health.compute_processes = json_int(data.get("compute_processes"))
    health.mig_instances = json_int(data.get("mig_instances")) if health.mig_enabled else None
    fabric = json_dict(data.get("fabric"))
    health.fabric_state = FABRIC_STATES.get(json_int(fabric.get("state")))
    # NVML fills the status only once registration has finished
    status = json_int(fabric.get("status"))
    if health.fabric_state == "completed" and status is not None:
        health.fabric_status = "NVML_SUCCESS" if status == 0 else NVML_ERROR_NAMES.get(status, f"NVML error {status}")
    return health, mask is not None and mask >= 0


@never_raises(list[tuple[GpuHealth, bool]])
def _nvml_records(data: object) -> list[tuple[GpuHealth, bool]]:
    if not isinstance(data, dict) or json_dict(data.get("init")).get("ok") is not True:
        return []
    return [_from_nvml_record(record) for record in json_list(data.get("devices")) if isinstance(record, dict)]


def health_from_nvml(data: object) -> list[GpuHealth]:
    """Each GPU's health from the NVML probe's record; [] when NVML did not answer."""
    return [health for health, _known in _nvml_records(data)]


# --------------------------------------------------------------------------- nvidia-smi -q -x

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


def _ecc_counts(element: ET.Element | None, counts: EccCounts) -> None:
    for scope in ("volatile", "aggregate"):
        block = element.find(scope) if element is not None else None
        if block is None:
            continue
        if block.find("single_bit") is not None or block.find("double_bit") is not None:
            corrected, uncorrected = _ecc_bits(block.find("single_bit")), _ecc_bits(block.find("double_bit"))
        else:
            # v11+: sram_/dram_ counters (and from R570 the SRAM uncorrectable split into parity/SEC-DED)
            corrected = _ecc_sum(block, ("sram_correctable", "dram_correctable"))
            uncorrected = _ecc_sum(block, ("sram_uncorrectable", "dram_uncorrectable"))
        setattr(counts, f"{scope}_corrected", corrected)
        setattr(counts, f"{scope}_uncorrected", uncorrected)


def _is_compute(element: ET.Element) -> bool:
    kind = known(element.findtext("type")) or ""
    return "C" in kind or not kind  # "C", "C+G", "M+C"; a process of no stated type may be CUDA too


def _xml_gpu(element: ET.Element, index: int | None) -> GpuHealth:
    # the id attribute carries the same address; trimmed captures may lack <pci>
    bus_id = normalize_bus_id(element.findtext("pci/pci_bus_id")) or normalize_bus_id(element.get("id"))
    health = GpuHealth(
        index=index,
        bus_id=bus_id,
        source=XML_SOURCE,
        name=known(element.findtext("product_name")),
        brand=known(element.findtext("product_brand")),
    )
    health.persistence_mode = _enabled(element.findtext("persistence_mode"))
    health.compute_mode = known(element.findtext("compute_mode"))
    health.ecc_enabled = _enabled(element.findtext("ecc_mode/current_ecc"))
    health.ecc_pending = _enabled(element.findtext("ecc_mode/pending_ecc"))
    _ecc_counts(element.find("ecc_errors"), health.ecc)
    health.retired_pages_sbe = parse_int(element.findtext("retired_pages/multiple_single_bit_retirement/retired_count"))
    health.retired_pages_dbe = parse_int(element.findtext("retired_pages/double_bit_retirement/retired_count"))
    # the same flag under its pre-R450 name (pending_blacklist) and its later one
    pending = [_yes_no(element.findtext(f"retired_pages/{tag}")) for tag in ("pending_retirement", "pending_blacklist")]
    health.retired_pages_pending = True if True in pending else (False if False in pending else None)
    health.remapped_rows_correctable = parse_int(element.findtext("remapped_rows/remapped_row_corr"))
    health.remapped_rows_uncorrectable = parse_int(element.findtext("remapped_rows/remapped_row_unc"))
    health.remapped_rows_pending = _yes_no(element.findtext("remapped_rows/remapped_row_pending"))
    health.remapped_rows_failure = _yes_no(element.findtext("remapped_rows/remapped_row_failure"))
    image = known(element.findtext("inforom_version/img_version"))
    health.inforom_image = image if image and not image.startswith("[") else None  # "[REDACTED]" is no version
    health.temperature_c = _temperature(element.findtext("temperature/gpu_temp"))
    health.slowdown_temp_c = _temperature(element.findtext("temperature/gpu_temp_slow_threshold"))
    health.shutdown_temp_c = _temperature(element.findtext("temperature/gpu_temp_max_threshold"))
    processes = element.find("processes")
    if processes is not None:
        health.compute_processes = sum(1 for process in processes.findall("process_info") if _is_compute(process))
    health.mig_enabled = _enabled(element.findtext("mig_mode/current_mig"))
    if health.mig_enabled:
        health.mig_instances = len(element.findall("mig_devices/mig_device"))
    health.reset_required = _yes_no(element.findtext("gpu_reset_status/reset_required"))
    health.drain_and_reset_recommended = _yes_no(element.findtext("gpu_reset_status/drain_and_reset_recommended"))
    state = known(element.findtext("fabric/state"))
    health.fabric_state = re.sub(r"[\s-]+", "_", state.lower()) if state else None
    health.fabric_status = known(element.findtext("fabric/status"))
    return health


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
        for health, state in zip(healths, states):
            if state.bus_id == health.bus_id or state.bus_id is None or health.bus_id is None:
                health.clock_reasons_active = list(state.clock_reasons_active)
    return healths


@never_raises(list[GpuHealth])
def health_from_xml(text: object) -> list[GpuHealth]:
    """Each GPU's health from ``nvidia-smi -q -x`` (schemas v8 to v13, damaged XML gives what it holds)."""
    return _from_xml(text) if isinstance(text, str) else []


# --------------------------------------------------------------------------- the plain table

# "|   0  Tesla V100-SXM2-16GB    On   | 00000000:18:00.0 Off |   ERR! |" - the first line of a GPU's block
_GPU_LINE = re.compile(r"^\|\s*(\d{1,3})\s+.*?\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b")


def _err_cells(text: str) -> dict[str, tuple[int | None, int]]:
    """bus id -> (index, ERR! cells) for every GPU block of the table that shows any."""
    found: dict[str, tuple[int | None, int]] = {}
    current: tuple[int, str] | None = None
    for raw in text.splitlines()[:5000]:
        line = raw.strip()[:1000]
        if not line.startswith("|") or line.startswith("|="):
            current = None  # a rule ends the block
            continue
        if line.startswith(("| Processes", "| MIG devices")):
            break
        match = _GPU_LINE.match(line)
        if match:
            bus = normalize_bus_id(match.group(2))
            current = (int(match.group(1)), bus) if bus else None
        if current is not None and "ERR!" in line:
            index, bus = current
            found[bus] = (index, found.get(bus, (index, 0))[1] + line.count("ERR!"))
    return found


# One line per GPU nvidia-smi could not open: "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"
_LOST_LINE = re.compile(
    r"Unable to determine the device handle for GPU\s*([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:"
    r"[0-9A-Fa-f]{2}\.[0-7])\s*:\s*(.{0,200})",
    re.I,
)


def _from_table(text: str) -> list[tuple[GpuHealth, bool]]:
    """The broken GPUs, each with whether nvidia-smi could not even open it (a lost line, not ERR! cells)."""
    healths: dict[str, tuple[GpuHealth, bool]] = {}
    for line in text.splitlines()[:5000]:
        match = _LOST_LINE.search(line[:1000])
        bus = normalize_bus_id(match.group(1)) if match else None
        if match and bus and bus not in healths:
            reason = match.group(2).strip() or "no reason given"
            healths[bus] = (
                GpuHealth(
                    bus_id=bus,
                    source=TABLE_SOURCE,
                    lost=True,
                    lost_detail=f"nvidia-smi: Unable to determine the device handle: {reason}",
                ),
                True,
            )
    for bus, (index, cells) in _err_cells(text).items():
        if bus in healths:
            healths[bus][0].index = index
            continue
        health = GpuHealth(
            index=index,
            bus_id=bus,
            source=TABLE_SOURCE,
            lost=cells >= _LOST_ERR_CELLS,
            lost_detail=f"nvidia-smi shows ERR! in {cells} cell{'s' if cells > 1 else ''}",
        )
        healths[bus] = (health, False)
    return list(healths.values())


@never_raises(list[tuple[GpuHealth, bool]])
def _table_entries(text: object) -> list[tuple[GpuHealth, bool]]:
    return _from_table(text) if isinstance(text, str) else []


def health_from_table(text: object) -> list[GpuHealth]:
    """The GPUs the plain ``nvidia-smi`` output shows as broken (lost, or ERR! cells); the rest say nothing."""
    return [health for health, _no_handle in _table_entries(text)]


# --------------------------------------------------------------------------- merged


def _fill(primary: GpuHealth, extra: GpuHealth, reasons_known: bool) -> None:
    """Fill what ``primary`` left unknown from ``extra`` (the same GPU from another source)."""
    for item in dataclasses.fields(GpuHealth):
        name = item.name
        if name in ("source", "lost", "lost_detail", "ecc", "clock_reasons_active"):
            continue
        if getattr(primary, name) is None and getattr(extra, name) is not None:
            setattr(primary, name, getattr(extra, name))
    for item in dataclasses.fields(EccCounts):
        if getattr(primary.ecc, item.name) is None:
            setattr(primary.ecc, item.name, getattr(extra.ecc, item.name))
    if not reasons_known and not primary.clock_reasons_active:
        primary.clock_reasons_active = list(extra.clock_reasons_active)
    if extra.lost and not primary.lost:
        primary.lost, primary.lost_detail = True, extra.lost_detail
    elif primary.lost_detail is None:
        primary.lost_detail = extra.lost_detail


def _item(evidence: Evidence | None, key: EvidenceKey) -> EvidenceItem | None:
    return evidence.get(key.value) if evidence is not None else None


def _json(item: EvidenceItem | None) -> object:
    try:
        return item.json() if item is not None else None
    except Exception:  # noqa: BLE001 - damaged JSON (nested past the recursion limit) is "not collected"
        return None


def gpu_health(evidence: Evidence | None) -> list[GpuHealth]:
    """Every GPU's health: NVML first, its gaps filled from the XML, lost GPUs added from the table."""
    nvml_item = _item(evidence, EvidenceKey.NVML)
    xml_item = _item(evidence, EvidenceKey.NVIDIA_SMI_XML)
    table_item = _item(evidence, EvidenceKey.NVIDIA_SMI)
    nvml = _nvml_records(_json(nvml_item))
    xml = health_from_xml(xml_item.text if xml_item is not None else None)
    # nvidia-smi may print its "Unable to determine the device handle" lines on stderr, so read both streams,
    # and the XML query's stderr too: it names the lost GPUs its XML leaves out.
    table = _table_entries(
        "\n".join(
            text
            for text in (table_item.output if table_item else None, xml_item.stderr if xml_item else None)
            if isinstance(text, str) and text
        )
    )
    healths = [health for health, _known in nvml]
    if nvml:
        xml_by_bus = {health.bus_id: health for health in xml if health.bus_id}
        for health, reasons_known in nvml:
            same = xml_by_bus.get(health.bus_id) if health.bus_id else None
            if same is not None:
                _fill(health, same, reasons_known)
    else:
        healths = xml
    by_bus = {health.bus_id: health for health in healths if health.bus_id}
    # NVML's handle failed for a lost GPU, so its record has no bus id; nvidia-smi's handle failed for the same
    # GPU and it names it by bus id only.  Pair those up in order (an ERR! GPU had a handle: not one of them).
    nameless_lost = [health for health in healths if health.lost and health.bus_id is None]
    for broken, no_handle in table:
        same = by_bus.get(broken.bus_id) if broken.bus_id else None
        if same is None and no_handle and nameless_lost:
            same = nameless_lost.pop(0)
            same.bus_id = broken.bus_id
        if same is not None:
            _fill(same, broken, True)
        else:
            healths.append(broken)
    return healths
