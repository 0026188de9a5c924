"""``rocminfo`` output as typed GPUs: its HSA agents (CPU agents skipped), the kernel module line, and the
failure it printed instead (``Unable to open /dev/kfd read-write: Permission denied``).

Per GPU agent: ``Name`` (the gfx target), ``Marketing Name``, ``Chip ID`` (the PCI device id), ``Compute
Unit``, ``Node`` (the KFD node), ``BDFID`` (bus << 8 | device << 3 | function, no PCI domain), the first
coarse-grained global pool (VRAM, in KB), the ISA string with its features
(``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-``) and ``Memory Properties: APU`` (an integrated GPU).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.facts.amd_model import AmdGpu, AmdToolReport
from gpudoctor.facts.amd_smi import hex_id, known_int, known_text
from gpudoctor.facts.tolerant import never_raises

_AGENT = re.compile(r"^\s*Agent\s+\d+\s*$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ./()_-]*?):\s*(.*?)\s*$")
_MODULE = re.compile(r"ROCk module (?:version (\S+) )?is (NOT )?loaded", re.IGNORECASE)
_ISA = re.compile(r"amdgcn-amd-amdhsa--(gfx[0-9a-zA-Z]+)((?::[a-z0-9_-]+[+-])*)")
_CHIP_ID = re.compile(r"^(\d+)(?:\(0x([0-9a-fA-F]+)\))?")
_SIZE_KB = re.compile(r"^(\d+)(?:\([^)]*\))?\s*KB", re.IGNORECASE)
# What rocminfo prints when it cannot read the GPUs (first lines are stable, per ROCm's own issues).
_ERROR_LINE = re.compile(
    r"Unable to open /dev/kfd|hsa api call failure|HSA_STATUS_ERROR|Permission denied|"
    r"No such file or directory|Failed to get user name|command not found",
    re.IGNORECASE,
)


@dataclass
class _Agent:
    fields: dict[str, str] = field(default_factory=dict)
    isas: list[tuple[str, str]] = field(default_factory=list)
    coarse_pool_kb: int | None = None
    segment: str = ""


def _agents(text: str) -> list[_Agent]:
    agents: list[_Agent] = []
    for line in text.splitlines():
        if _AGENT.match(line):
            agents.append(_Agent())
            continue
        if not agents:
            continue
        agent = agents[-1]
        isa = _ISA.search(line)
        if isa:
            agent.isas.append((isa.group(1), isa.group(2).lstrip(":")))
            continue
        match = _KEY_VALUE.match(line)
        if not match:
            continue
        key, value = match.group(1).strip(), match.group(2)
        if key == "Segment":
            agent.segment = value.upper()
        elif key == "Size" and agent.segment:
            size = _SIZE_KB.match(value)
            if size and agent.coarse_pool_kb is None and "GLOBAL" in agent.segment and "COARSE" in agent.segment:
                agent.coarse_pool_kb = int(size.group(1))
        else:
            agent.fields.setdefault(key, value)  # the agent's own line comes before its ISA's same-named lines
    return agents


def _bus_id(bdfid: object) -> str | None:
    """BDFID 9728 -> ``"0000:26:00.0"``: rocminfo gives no PCI domain, so domain 0 is assumed."""
    value = known_int(bdfid)
    if value is None or value <= 0 or value > 0xFFFF:
        return None
    return f"0000:{value >> 8:02x}:{(value >> 3) & 0x1F:02x}.{value & 0x7}"


def _device_id(chip: str | None) -> str | None:
    match = _CHIP_ID.match(chip or "")
    if not match or match.group(1) == "0":
        return None
    return hex_id(int(match.group(1)))


def _gpu_of(agent: _Agent, cpu_names: set[str]) -> AmdGpu:
    fields = agent.fields
    target = known_text(fields.get("Name"))
    target = target if target and target.startswith("gfx") else None
    features = next((feats for isa, feats in agent.isas if isa == target and feats), None)
    apu = "APU" in (fields.get("Memory Properties") or "").upper().split()
    # MI300A is an APU too, but a data-center part: "integrated" here means a desktop/laptop iGPU.
    integrated = apu and not (target or "").startswith("gfx94")
    name = known_text(fields.get("Marketing Name"))
    if name in cpu_names:  # some APUs report the CPU's name for their GPU agent: not a GPU name
        name = None
    uuid = known_text(fields.get("Uuid"))
    unique = uuid.removeprefix("GPU-").lower() if uuid and uuid.upper() != "GPU-XX" else None
    return AmdGpu(
        name=name,
        gfx_target=target,
        gfx_features=features,
        device_id=_device_id(fields.get("Chip ID")),
        bus_id=_bus_id(fields.get("BDFID")),
        vram_mib=None if apu or agent.coarse_pool_kb is None else agent.coarse_pool_kb // 1024,
        compute_units=known_int(fields.get("Compute Unit")),
        unique_id=f"0x{unique}" if unique and re.fullmatch(r"[0-9a-f]+", unique) else None,
        sources=("rocminfo",),
        integrated=integrated if "Memory Properties" in fields else None,  # older rocminfo lacks the line
        kfd_node=known_int(fields.get("Node")),
    )


@never_raises(AmdToolReport)
def parse_rocminfo(text: str | None) -> AmdToolReport:
    """rocminfo's GPU agents, whether it saw the kernel module loaded (and its version), and its failure."""
    if not text or not text.strip():
        return AmdToolReport()
    module = _MODULE.search(text)
    agents = _agents(text)
    cpu_names = {
        name
        for agent in agents
        if (agent.fields.get("Device Type") or "").strip().upper() == "CPU"
        and (name := known_text(agent.fields.get("Marketing Name")))
    }
    gpus = tuple(
        _gpu_of(agent, cpu_names)
        for agent in agents
        if (agent.fields.get("Device Type") or "").strip().upper() == "GPU"
    )
    error = next((line.strip() for line in text.splitlines() if _ERROR_LINE.search(line)), None)
    return AmdToolReport(
        gpus=gpus,
        driver_version=module.group(1) if module and module.group(1) else None,
        module_loaded=None if module is None else module.group(2) is None,
        error=error,
    )
