"""The kernel log (``dmesg``, or ``journalctl -k``): what the NVIDIA driver said while loading and running.

A pure parser.  Lines may carry any time stamp or syslog prefix (dmesg,
dmesg -T, journalctl -k): patterns are searched, not anchored.  The driver
writes some messages over several ``NVRM:`` lines (the API-mismatch and
unsupported-GPU notices), so besides reading line by line it also reads what
follows each ``NVRM:`` joined into one text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# "NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python, GPU has fallen off the bus."
# "NVRM: Xid (0000:01:00): 79, GPU has fallen off the bus."            (older drivers)
# "NVRM: Xid (PCI:0000:3b:00 GPU-I:05): 43, pid=..., ..."               (MIG instance)
_XID = re.compile(r"NVRM: Xid \((?P<where>[^)]*)\):\s*(?P<code>\d{1,6})\b,?\s*(?P<message>.*)$", re.ASCII)
_PCI_IN_XID = re.compile(r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)")
# The process fields newer drivers put before the message ("pid=1234, name=python, ").
_XID_PROCESS_FIELDS = re.compile(r"^(?:pid=[^,]*,\s*)?(?:name=[^,]*,\s*)?")

_VERSION = r"\d+(?:\.\d+)+"
_API_MISMATCH = re.compile(
    rf"API mismatch: the client has the version ({_VERSION}),?\s+but\s+this kernel module has the version ({_VERSION})",
    re.ASCII,
)
# nouveau (or another framebuffer driver) bound the GPU before nvidia.ko could.
_NOUVEAU_PATTERNS = (
    re.compile(r"NVIDIA probe routine was not called"),
    re.compile(r"obtained ownership of the NVIDIA device"),
    # nouveau's own device messages, after any time stamp: "[ 2.1] nouveau 0000:01:00.0: NVIDIA GA102".
    re.compile(r"(?:^|[\s\]])nouveau [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]:"),
)
_RM_INIT_PATTERNS = (
    re.compile(r"RmInitAdapter failed"),
    re.compile(r"rm_init_adapter failed"),
)
# Open kernel modules need a GSP (Turing or newer):
# "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80) installed in this system is
#  not supported by open nvidia.ko because it does not include the required GPU
#  System Processor (GSP)."  (one sentence over several NVRM lines)
_GSP_UNSUPPORTED = re.compile(
    r"not supported by open nvidia\.ko|does not include the required GPU System Processor", re.IGNORECASE
)
_SECURE_BOOT = (
    re.compile(r"Loading of unsigned module is rejected"),
    re.compile(r"Key was rejected by service"),
    re.compile(r"Lockdown: \S+: unsigned module loading is restricted"),
)
# "NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is supported
#  through the NVIDIA 470.xx Legacy drivers." (one sentence over several NVRM lines)
_LEGACY = re.compile(r"supported through the NVIDIA (\d+\.xx) Legacy drivers?", re.ASCII | re.IGNORECASE)
_FALLEN_OFF = re.compile(r"GPU has fallen off the bus")


@dataclass(frozen=True)
class XidEvent:
    code: int
    pci: str | None  # as the log names it: "0000:01:00" (bus and device; no function number)
    message: str  # "GPU has fallen off the bus."
    line: str  # the whole log line, time stamp included


@dataclass(frozen=True)
class KernelLog:
    xid_events: list[XidEvent] = field(default_factory=list)
    api_mismatch: tuple[str, str] | None = None  # (client version, kernel module version)
    nouveau_took_gpu: bool = False
    rm_init_failed: bool = False
    gsp_unsupported: bool = False  # open kernel module on a GPU without GSP (pre-Turing)
    secure_boot_rejected: bool = False  # a module was refused for its signature (not necessarily nvidia's)
    fallen_off_bus: bool = False  # said with or without an Xid 79
    legacy_branch_required: str | None = None  # "470.xx" when the driver says the GPU needs a legacy branch


def parse_kernel_log(text: object) -> KernelLog:
    """Parse kernel log text into a :class:`KernelLog`; an empty one when nothing matches."""
    if not isinstance(text, str):
        return KernelLog()
    nvrm_parts: list[str] = []
    xid_events: list[XidEvent] = []
    nouveau_took_gpu = rm_init_failed = secure_boot_rejected = fallen_off_bus = False
    for line in text.splitlines():
        if "NVRM:" in line:
            nvrm_parts.append(line.split("NVRM:", 1)[1].strip())
        xid = _XID.search(line)
        if xid:
            where = _PCI_IN_XID.search(xid.group("where"))
            message = _XID_PROCESS_FIELDS.sub("", xid.group("message").strip(), count=1)
            xid_events.append(
                XidEvent(
                    code=int(xid.group("code")),
                    pci=where.group(1).lower() if where else None,
                    message=message,
                    line=line.strip(),
                )
            )
        if any(pattern.search(line) for pattern in _NOUVEAU_PATTERNS):
            nouveau_took_gpu = True
        if any(pattern.search(line) for pattern in _RM_INIT_PATTERNS):
            rm_init_failed = True
        if any(pattern.search(line) for pattern in _SECURE_BOOT):
            secure_boot_rejected = True
        if _FALLEN_OFF.search(line):
            fallen_off_bus = True
    # The multi-line NVRM sentences, read as one text.
    joined = " ".join(" ".join(nvrm_parts).split())
    mismatch = _API_MISMATCH.search(joined)
    legacy = _LEGACY.search(joined)
    return KernelLog(
        xid_events=xid_events,
        api_mismatch=(mismatch.group(1), mismatch.group(2)) if mismatch else None,
        nouveau_took_gpu=nouveau_took_gpu,
        rm_init_failed=rm_init_failed,
        gsp_unsupported=_GSP_UNSUPPORTED.search(joined) is not None,
        secure_boot_rejected=secure_boot_rejected,
        fallen_off_bus=fallen_off_bus,
        legacy_branch_required=legacy.group(1) if legacy else None,
    )
