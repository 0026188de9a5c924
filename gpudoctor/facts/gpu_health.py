"""Each GPU's hardware health (``GpuHealth``) from the three sources that speak of it.

NVML (``nvml.json``) is asked first: it answers per counter and says *why* when it cannot.  What it
left unknown is filled from ``nvidia-smi -q -x`` of the same GPU (joined on the bus id), and the XML
alone serves where NVML could not be asked.  The plain table says almost nothing about health, so it
is read only for the GPUs it shows as broken: "Unable to determine the device handle for GPU ...:
GPU is lost" lines and ``ERR!`` cells.  Every parser here never raises; unknown stays ``None``.
Each source has its own module (``gpu_health_nvml``, ``gpu_health_xml``, ``gpu_health_table``); this one
merges them, and their public names stay importable from here.
"""

from __future__ import annotations

import dataclasses

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.gpu_health_nvml import CLOCK_REASON_BITS as CLOCK_REASON_BITS
from gpudoctor.facts.gpu_health_nvml import NVML_SOURCE as NVML_SOURCE
from gpudoctor.facts.gpu_health_nvml import _nvml_records
from gpudoctor.facts.gpu_health_nvml import clock_reasons as clock_reasons
from gpudoctor.facts.gpu_health_nvml import health_from_nvml as health_from_nvml
from gpudoctor.facts.gpu_health_table import TABLE_SOURCE as TABLE_SOURCE
from gpudoctor.facts.gpu_health_table import _table_entries
from gpudoctor.facts.gpu_health_table import health_from_table as health_from_table
from gpudoctor.facts.gpu_health_xml import XML_SOURCE as XML_SOURCE
from gpudoctor.facts.gpu_health_xml import health_from_xml as health_from_xml
from gpudoctor.facts.health_model import EccCounts, GpuHealth

# Fields ``_fill`` merges by their own rules, not "unknown takes the other source's value".
_OWN_RULES = ("source", "lost", "lost_detail", "ecc", "clock_reasons_active")


def _fill(primary: GpuHealth, extra: GpuHealth, reasons_known: bool) -> GpuHealth:
    """``primary`` with what it left unknown filled from ``extra`` (the same GPU from another source)."""
    # Each value is taken from the same field of another GpuHealth, so it has that field's type.
    filled = {
        item.name: getattr(extra, item.name)
        for item in dataclasses.fields(GpuHealth)
        if item.name not in _OWN_RULES and getattr(primary, item.name) is None and getattr(extra, item.name) is not None
    }
    ecc = EccCounts(
        **{
            item.name: getattr(primary.ecc, item.name)
            if getattr(primary.ecc, item.name) is not None
            else getattr(extra.ecc, item.name)
            for item in dataclasses.fields(EccCounts)
        }
    )
    reasons = primary.clock_reasons_active
    if not reasons_known and not primary.clock_reasons_active:
        reasons = list(extra.clock_reasons_active)
    lost, lost_detail = primary.lost, primary.lost_detail
    if extra.lost and not primary.lost:
        lost, lost_detail = True, extra.lost_detail
    elif primary.lost_detail is None:
        lost_detail = extra.lost_detail
    return dataclasses.replace(
        primary, **filled, ecc=ecc, clock_reasons_active=reasons, lost=lost, lost_detail=lost_detail
    )


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
    healths: list[GpuHealth] = []
    if nvml:
        xml_by_bus = {health.bus_id: health for health in xml if health.bus_id}
        for health, reasons_known in nvml:
            same = xml_by_bus.get(health.bus_id) if health.bus_id else None
            healths.append(_fill(health, same, reasons_known) if same is not None else health)
    else:
        healths = xml
    # Positions in ``healths``: a filled GPU is a new value in the same place.
    by_bus = {health.bus_id: at for at, health in enumerate(healths) if health.bus_id}
    # NVML's handle failed for a lost GPU, so its record has no bus id; nvidia-smi's handle failed for the same
    # GPU and it names it by bus id only.  Pair those up in order (an ERR! GPU had a handle: not one of them).
    nameless_lost = [at for at, health in enumerate(healths) if health.lost and health.bus_id is None]
    for broken, no_handle in table:
        at = by_bus.get(broken.bus_id) if broken.bus_id else None
        if at is None and no_handle and nameless_lost:
            at = nameless_lost.pop(0)
            healths[at] = dataclasses.replace(healths[at], bus_id=broken.bus_id)
        if at is not None:
            healths[at] = _fill(healths[at], broken, True)
        else:
            healths.append(broken)
    return healths
