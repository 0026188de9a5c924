"""``nvidia-smi nvlink -s``: each GPU's NVLinks, up (with their speed) or down.

What nvidia-smi prints, per GPU::

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
             Link 0: 26.562 GB/s
             Link 3: <inactive>

or one line instead of the links: "Device does not have or support Nvlink" (no NVLink on this GPU) or
"NVML: Unable to retrieve Nvlink information as all links are inActive" (NVLinks present, none up: a
missing bridge, or links down).  ``nvidia-smi nvlink -c`` lines ("Link 0, P2P is supported: true") name
links without their state; they are read as links of unknown state.  Never raises: unknown stays None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpudoctor.facts.topology_model import NvLinkPort, NvLinkState

SOURCE = "nvidia-smi nvlink -s"
MAX_GPUS = 1024
MAX_LINKS = 64  # NVML_NVLINK_MAX_LINKS is 18 today; room for what comes next, not for garbage

_GPU = re.compile(r"^\s*GPU (\d{1,4}):\s*(.*)$")
_LINK_STATE = re.compile(r"^\s*Link (\d{1,3}):\s*(.*?)\s*$")
_LINK_CAPABILITY = re.compile(r"^\s*Link (\d{1,3}),")
_SPEED = re.compile(r"(\d{1,5}(?:\.\d{1,6})?)\s*GB/s", re.IGNORECASE)
_DOWN_WORDS = ("inactive", "down", "disabled", "off")
_NO_NVLINK = re.compile(r"does not (?:have or )?support nvlink|nvlink is not supported", re.IGNORECASE)
_ALL_INACTIVE = re.compile(r"all links are inactive", re.IGNORECASE)


def parse_nvlink_status(text: object) -> dict[int, NvLinkState]:
    """Each listed GPU's NVLink state by nvidia-smi index; ``{}`` when no GPU was listed."""
    if not isinstance(text, str):
        return {}
    try:
        return _parse(text)
    except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
        return {}


@dataclass
class _Draft:
    """One GPU's links while its lines are read; frozen into an ``NvLinkState`` at the end."""

    ports: dict[int, NvLinkPort] = field(default_factory=dict)
    supported: bool | None = None
    note: str | None = None

    def state(self) -> NvLinkState:
        ports = [self.ports[link] for link in sorted(self.ports)]
        return NvLinkState(ports=ports, source=SOURCE, supported=self.supported, note=self.note)


def _parse(text: str) -> dict[int, NvLinkState]:
    drafts: dict[int, _Draft] = {}
    current: _Draft | None = None
    for line in text.splitlines():
        gpu = _GPU.match(line)
        if gpu:
            index = int(gpu.group(1))
            if index in drafts or len(drafts) >= MAX_GPUS:
                current = drafts.get(index)  # a repeated block (a paste twice) adds to the first
                continue
            current = drafts[index] = _Draft()
            continue
        if current is None:
            continue
        stripped = line.strip()
        if _NO_NVLINK.search(stripped):
            current.supported, current.note = False, stripped
            continue
        if _ALL_INACTIVE.search(stripped):
            current.supported, current.note = True, stripped
            continue
        link = _LINK_STATE.match(line)
        if link:
            _state_line(current, int(link.group(1)), link.group(2))
            continue
        capability = _LINK_CAPABILITY.match(line)
        if capability:
            _port(current, int(capability.group(1)))
    return {index: draft.state() for index, draft in drafts.items()}


def _port(draft: _Draft, link: int) -> NvLinkPort | None:
    port = draft.ports.get(link)
    if port is None and link < MAX_LINKS:
        port = draft.ports[link] = NvLinkPort(link=link)
    return port


def _state_line(draft: _Draft, link: int, value: str) -> None:
    port = _port(draft, link)
    if port is None:
        return
    lowered = value.lower()
    speed = _SPEED.search(value)
    if speed:
        speed_gbps = float(speed.group(1))
        draft.ports[link] = replace(port, speed_gbps=speed_gbps, active=speed_gbps > 0)
    elif any(word in lowered for word in _DOWN_WORDS):
        draft.ports[link] = replace(port, active=False)
    else:
        return  # "N/A" or something new: the link exists, its state is unknown
    draft.supported = True
