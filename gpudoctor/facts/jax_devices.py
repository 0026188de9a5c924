"""A pasted ``jax.devices()`` listing: ``[TpuDevice(id=0, process_index=0, coords=(0,0,0), core_on_chip=0), ...]``
or ``[CpuDevice(id=0)]``.

People paste this from a REPL or a log, often from a terminal that wrapped the long line at its width, inside
a word (``TpuDe`` / ``vice(id=5, ...``). A listing is therefore re-joined first: from the line that opens it
(``[XxxDevice(``), following lines are glued on without a separator until one closes it with ``)]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudoctor.facts.tpu_model import TpuDevice

_OPEN = re.compile(r"\[\s*[A-Za-z]{0,40}Device\(")
_DEVICE = re.compile(r"\b([A-Za-z]{0,40})Device\(((?:[^()]|\([^()]{0,80}\)){0,400})\)")
_ARGUMENT = re.compile(r"(\w{1,40})\s*=\s*(\([^()]{0,80}\)|[^,()]{1,80})")
_MAX_LINES_JOINED = 400
_MAX_DEVICES = 8192


@dataclass(frozen=True)
class JaxDeviceListing:
    """What one pasted ``jax.devices()`` listing shows."""

    tpu_devices: tuple[TpuDevice, ...] = ()
    other_platforms: tuple[str, ...] = ()  # the kinds of the other devices listed, lower case: "cpu", "cuda"

    @property
    def cpu_only(self) -> bool:
        return not self.tpu_devices and bool(self.other_platforms) and set(self.other_platforms) == {"cpu"}


def _listings(text: str) -> list[str]:
    """Each listing in the text, its terminal-wrapped lines glued back together."""
    found: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        opened = _OPEN.search(line)
        index += 1
        if opened is None:
            continue
        joined = line[opened.start() :]
        glued = 0
        while not joined.rstrip().endswith("]") and index < len(lines) and glued < _MAX_LINES_JOINED:
            joined += lines[index]
            index += 1
            glued += 1
        found.append(joined)
    return found


def _int(text: str) -> int | None:
    text = text.strip()
    if re.fullmatch(r"-?\d{1,9}", text):
        return int(text)
    return None


def _coords(text: str) -> tuple[int, ...] | None:
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        return None
    parts = [p for p in inner[1:-1].split(",") if p.strip()]
    values = tuple(_int(p) for p in parts)
    if not values or any(v is None for v in values):
        return None
    return tuple(v for v in values if v is not None)


def _tpu_device(arguments: str) -> TpuDevice | None:
    values = dict(_ARGUMENT.findall(arguments))
    device_id = _int(values.get("id", ""))
    if device_id is None:
        return None
    return TpuDevice(
        id=device_id,
        process_index=_int(values.get("process_index", "")),
        coords=_coords(values.get("coords", "")),
        core_on_chip=_int(values.get("core_on_chip", "")),
    )


def parse_jax_devices(text: str | None) -> JaxDeviceListing | None:
    """The devices of the last ``jax.devices()`` listing in ``text``; None when it holds none. Never raises."""
    if not text or "Device(" not in text:
        return None
    listing: JaxDeviceListing | None = None
    for joined in _listings(text):
        tpus: list[TpuDevice] = []
        others: list[str] = []
        for kind, arguments in _DEVICE.findall(joined)[:_MAX_DEVICES]:
            if kind.lower() == "tpu":
                device = _tpu_device(arguments)
                if device is not None:
                    tpus.append(device)
            else:
                # "StreamExecutorGpuDevice" / "CudaDevice" / "CpuDevice": the platform word before "Device".
                word = kind.lower().removeprefix("streamexecutor") or "unknown"
                others.append(word)
        if tpus or others:
            listing = JaxDeviceListing(tuple(tpus), tuple(dict.fromkeys(others)))
    return listing
