"""What was holding each GPU back when the evidence was read: clock-event reasons, power limit, other processes.

A smoke run that measures a GPU far below its spec needs causes with names: a power cap set below
the default, active clock-event ("throttle") reasons, other processes on the GPU.  They come from
``nvidia-smi -q -x`` (every schema: ``clocks_throttle_reasons`` before R535, ``clocks_event_reasons``
after; ``power_readings`` before v12, ``gpu_power_readings`` after) and, where only the plain table
was captured, from its ``Pwr:Usage/Cap`` cells and ``Processes`` section.  The evidence is read
before the workloads run, so it describes the GPU then: a reason active at idle (``gpu_idle``) says
nothing about load.  Parsers never raise; unknown is ``None``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence
from gpudoctor.facts.nvidia_smi_text import known, parse_int, parse_mib
from gpudoctor.facts.nvidia_smi_xml import log_root
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.tolerant import never_raises

MAX_PROCESSES = 200
# Reasons that lower clocks under load.  "gpu_idle" (nothing to do) and "display_clocks_setting" are not.
SLOWING_REASONS = {
    "sw_power_cap": "software power cap (the power limit is reached)",
    "hw_slowdown": "hardware slowdown (power brake or overheating)",
    "hw_thermal_slowdown": "hardware thermal slowdown (the GPU is too hot)",
    "hw_power_brake_slowdown": "hardware power brake (the power supply asked the GPU to slow down)",
    "sw_thermal_slowdown": "software thermal slowdown (temperature above its target)",
    "applications_clocks_setting": "application clocks set below the maximum (nvidia-smi -ac)",
    "sync_boost": "sync boost (clocks held to the slowest GPU of a group)",
}


@dataclass(frozen=True)
class GpuProcess:
    pid: int | None = None
    name: str | None = None
    type: str | None = None  # "C" compute, "G" graphics, "C+G"
    used_mib: int | None = None


@dataclass(frozen=True)
class GpuState:
    """One GPU's conditions as nvidia-smi showed them."""

    index: int | None = None
    bus_id: str | None = None
    name: str | None = None
    performance_state: str | None = None  # "P0" (full speed) .. "P8" (idle)
    clock_reasons_active: list[str] = field(default_factory=list)  # "sw_power_cap", "gpu_idle", ...
    power_draw_w: float | None = None
    power_limit_w: float | None = None  # the limit in force
    default_power_limit_w: float | None = None
    max_power_limit_w: float | None = None
    utilization_pct: int | None = None
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    processes: list[GpuProcess] = field(default_factory=list)
    processes_known: bool = False  # the source lists processes at all (a table without them says nothing)
    mig_enabled: bool | None = None

    @property
    def slowing_reasons(self) -> list[str]:
        return [reason for reason in self.clock_reasons_active if reason in SLOWING_REASONS]

    @property
    def power_capped(self) -> bool:
        """The power limit in force is below the board's default."""
        return (
            self.power_limit_w is not None
            and self.default_power_limit_w is not None
            and self.power_limit_w < self.default_power_limit_w - 0.5
        )


_WATTS = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*W\s*$")


def _watts(text: object) -> float | None:
    match = _WATTS.match(text) if isinstance(text, str) else None
    return float(match.group(1)) if match else None


def _percent(text: object) -> int | None:
    match = re.match(r"^\s*(\d{1,3})\s*%\s*$", text) if isinstance(text, str) else None
    return int(match.group(1)) if match else None


# --------------------------------------------------------------------------- nvidia-smi -q -x


@never_raises(list[GpuState])
def parse_gpu_states_xml(text: object) -> list[GpuState]:
    """Each GPU's conditions from ``nvidia-smi -q -x`` output (damaged XML gives what it holds)."""
    return _from_xml(text) if isinstance(text, str) else []


def _from_xml(text: str) -> list[GpuState]:
    root, _damage = log_root(text)
    if root is None:
        return []
    elements = root.findall("gpu")
    attached = parse_int(root.findtext("attached_gpus"))
    return [
        _xml_state(element, position if attached == len(elements) else None)
        for position, element in enumerate(elements)
    ]


def _xml_state(element: ET.Element, index: int | None) -> GpuState:
    reasons: list[str] = []
    for tag in ("clocks_event_reasons", "clocks_throttle_reasons"):
        for reason in element.findall(f"{tag}/*"):
            value = (reason.text or "").strip()
            short = re.sub(r"^clocks_(?:event|throttle)_reason_", "", reason.tag)
            if value == "Active" and short not in reasons:
                reasons.append(short)
    power = element.find("gpu_power_readings")
    if power is None:
        power = element.find("power_readings")
    draw = limit = default_limit = max_limit = None
    if power is not None:
        draw = _watts(power.findtext("power_draw")) or _watts(power.findtext("instant_power_draw"))
        limit = (
            _watts(power.findtext("enforced_power_limit"))
            or _watts(power.findtext("current_power_limit"))
            or _watts(power.findtext("power_limit"))
        )
        default_limit = _watts(power.findtext("default_power_limit"))
        max_limit = _watts(power.findtext("max_power_limit"))
    mig = known(element.findtext("mig_mode/current_mig"))
    processes = element.find("processes")
    return GpuState(
        index=index,
        bus_id=normalize_bus_id(element.get("id") or element.findtext("pci/pci_bus_id") or ""),
        name=known(element.findtext("product_name")),
        performance_state=known(element.findtext("performance_state")),
        clock_reasons_active=reasons,
        power_draw_w=draw,
        power_limit_w=limit,
        default_power_limit_w=default_limit,
        max_power_limit_w=max_limit,
        utilization_pct=_percent(element.findtext("utilization/gpu_util")),
        memory_used_mib=parse_mib(element.findtext("fb_memory_usage/used")),
        memory_total_mib=parse_mib(element.findtext("fb_memory_usage/total")),
        processes=[
            GpuProcess(
                pid=parse_int(record.findtext("pid")),
                name=known(record.findtext("process_name")),
                type=known(record.findtext("type")),
                used_mib=parse_mib(record.findtext("used_memory")),
            )
            for record in (processes.findall("process_info")[:MAX_PROCESSES] if processes is not None else [])
        ],
        processes_known=processes is not None,
        mig_enabled={"Enabled": True, "Disabled": False}.get(mig or ""),
    )


# --------------------------------------------------------------------------- the plain nvidia-smi table

# "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |"
_GPU_LINE = re.compile(r"^\|\s*(\d{1,3})\s+.*?\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b")
# "| N/A   30C    P0            100W /  700W |       1MiB /  81559MiB |      0%      Default |"
_STATE_LINE = re.compile(r"^\|.*?\b(P\d{1,2})\s+(\S+)\s*/\s*(\S+)\s*\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\S+)")
# "|    0    2    0            21180      C   /root/tools/memhog                     2296MiB |"
_PROCESS_LINE = re.compile(
    r"^\|\s*(\d{1,3})\s+(?:(?:\S+)\s+(?:\S+)\s+)?(\d+)\s+(C\+G|C|G|M\+C|M)\s+(.+?)\s+"
    r"(\d+MiB|N/A)\s*\|$"
)


def parse_gpu_states_text(text: object) -> list[GpuState]:
    """Power, performance state and processes per GPU from the plain ``nvidia-smi`` table."""
    if not isinstance(text, str):
        return []
    states: dict[int, GpuState] = {}
    processes: dict[int, list[GpuProcess]] = {}
    current: int | None = None  # the GPU whose block is being read; None after a repeated block's first line
    in_processes = False
    listed_processes = False
    for raw in text.splitlines()[:5000]:
        line = raw.strip()
        if line.startswith("| Processes"):
            in_processes = True
            continue
        if in_processes:
            match = _PROCESS_LINE.match(line)
            if match:
                listed_processes = True
                index = int(match.group(1))
                listed = processes.setdefault(index, [])
                if index in states and len(listed) < MAX_PROCESSES:
                    listed.append(
                        GpuProcess(
                            pid=int(match.group(2)),
                            type=match.group(3),
                            name=match.group(4).strip(),
                            used_mib=parse_mib(match.group(5)),
                        )
                    )
            elif "No running processes found" in line:
                listed_processes = True
            continue
        gpu = _GPU_LINE.match(line)
        if gpu:
            index = int(gpu.group(1))
            # the first block of an index is kept; a repeated one is read past
            current = None if index in states else index
            states.setdefault(index, GpuState(index=index, bus_id=normalize_bus_id(gpu.group(2))))
            continue
        detail = _STATE_LINE.match(line)
        if detail and current is not None:
            states[current] = replace(
                states[current],
                performance_state=detail.group(1),
                power_draw_w=_watts(detail.group(2)),
                power_limit_w=_watts(detail.group(3)),
                memory_used_mib=int(detail.group(4)),
                memory_total_mib=int(detail.group(5)),
                utilization_pct=_percent(detail.group(6)),
            )
            current = None
    return [
        replace(state, processes=processes.get(index, []), processes_known=listed_processes)
        for index, state in states.items()
    ]


def gpu_states(evidence: Evidence) -> list[GpuState]:
    """The GPUs' conditions from the richest source collected: the XML query, else the plain table."""
    states = parse_gpu_states_xml(evidence.text(EvidenceKey.NVIDIA_SMI_XML.value))
    if states:
        return states
    return parse_gpu_states_text(evidence.text(EvidenceKey.NVIDIA_SMI.value))
