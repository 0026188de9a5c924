"""A paste cut into the outputs it holds, each filed under the snapshot name its parser reads.

Issue templates ask for several outputs at once (collect_env, ``nvidia-smi``, ``nvcc --version``, ``pip list``,
the traceback), and people paste them one after another, with or without the commands that made them.  Each
line is labelled by what starts a tool's output (its banner, header or first-line shape) or by the shell prompt
naming the command before it; a section runs until another one starts, and the tools whose output has a strict
line shape (tables, ``KEY=value`` files, kernel log lines) end at the first line that does not fit.

Kernel log lines are gathered from anywhere in the paste (people quote a few ``NVRM:`` lines between other
outputs).  What no section claims stays in the whole paste, which is scanned for known errors all the same.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import PASTE_SECTION_KIND as PASTE_SECTION_KIND
from gpudoctor.evidence.sniff import COLLECT_ENV_BANNER, TENSORFLOW_LOG_MARKER

# The kind of an evidence item cut out of a paste: the whole paste is scanned for errors, its sections not again.
# Kinds with no evidence file of their own: they only end the section before them.
TRACEBACK = "traceback"
PACKAGES = "packages"
OTHER = "other"

_SMI_TIMESTAMP = re.compile(r"^\s*\w{3} \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4}\s*$")
_SMI_HEADER = re.compile(r"^\s*\|\s*NVIDIA-SMI \d")
_SMI_ERROR = re.compile(
    r"NVIDIA-SMI has failed|^\s*Failed to initialize NVML|^\s*No devices were found"
    r"|^\s*Unable to determine the device handle|couldn't communicate with the NVIDIA driver"
)
_SMI_TABLE_LINE = re.compile(r"^\s*[|+]")
_SMI_LIST = re.compile(r"^\s*GPU \d+: .*\(UUID: ")
_SMI_LIST_MIG = re.compile(r"^\s+MIG \S+\s+Device\s+\d+: ")
_TOPO_HEADER = re.compile(r"^\s*GPU0(?:\s+GPU\d+)*(?:\s+(?:NIC|mlx)\S*)*\s+CPU Affinity|^\s+GPU0\s+GPU1\s")
_TOPO_LINE = re.compile(r"^\s*(?:GPU\d+|NIC\d+|mlx\S+):?\s|^\s*(?:NIC )?Legend:|^\s+\S+\s+=\s|^\s*$")
_LSPCI_DEVICE = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] \S")
_LSPCI_FIELD = re.compile(r"^\s*(?:LnkCap|LnkSta|LnkCtl|Kernel driver in use|Kernel modules):")
_LSPCI_LINE = re.compile(r"^\s+\S|^\s*$")
_PROC_VERSION = re.compile(r"^\s*NVRM version:")
_PROC_VERSION_LINE = re.compile(r"^\s*(?:NVRM version:|GCC version:)")
_NVCC = re.compile(r"^\s*nvcc: NVIDIA \(R\) Cuda compiler driver")
_NVCC_LINE = re.compile(r"^\s*(?:nvcc: NVIDIA|Copyright \(c\)|Built on|Cuda compilation tools|Build cuda_)")
_OS_RELEASE_LINE = re.compile(
    r"^(?:NAME|PRETTY_NAME|VERSION|VERSION_ID|ID|ID_LIKE|VERSION_CODENAME|UBUNTU_CODENAME|HOME_URL|SUPPORT_URL"
    r"|BUG_REPORT_URL|PRIVACY_POLICY_URL|LOGO|ANSI_COLOR|CPE_NAME|PLATFORM_ID)=\S"
)
_COLLECT_ENV_START = re.compile(
    rf"^\s*(?:{re.escape(COLLECT_ENV_BANNER)}|PyTorch version\s*:?\s*\d|CUDA used to build PyTorch\s*:)"
)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_PACKAGES = re.compile(r"^\s*(?:Package\s+Version\s*$|# packages in environment at )")
_KERNEL_LINE = re.compile(
    r"^\s*\[\s*\d+\.\d+\]\s"  # dmesg
    r"|^\s*\[[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ [\d:]+ \d{4}\]\s"  # dmesg -T
    r"|^\s*(?:\w{3} +\d+ [\d:]+|\d{4}-\d\d-\d\dT\S+) \S+ kernel: "  # syslog / journalctl
    r"|^\s*(?:NVRM|nvidia(?:-modeset|-uvm|-drm)?|nouveau)(?: \S+)?: "
)
# A shell prompt and the command after it: "$ nvidia-smi", "user@host:~$ nvcc -V", "PS C:\> nvidia-smi".
_PROMPT = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:\S+@[\w.-]+:\S*?\s*[$#]|\$|PS [^>]*>|[A-Z]:\\[^>]*>)\s*(\S.*)$")
_COMMAND_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"nvidia-smi\s+topo\s+-m"), Ev.NVIDIA_SMI_TOPO),
    (re.compile(r"nvidia-smi\s+(?:-L|--list-gpus)\b"), Ev.NVIDIA_SMI_LIST),
    (re.compile(r"nvidia-smi(?:\.exe)?\s*$"), Ev.NVIDIA_SMI),
    (re.compile(r"\bnvcc\b"), Ev.NVCC),
    (re.compile(r"\blspci\b"), Ev.LSPCI),
    (re.compile(r"/proc/driver/nvidia/version"), Ev.PROC_DRIVER_VERSION),
    (re.compile(r"\b(?:dmesg|journalctl)\b"), Ev.KERNEL_LOG),
    (re.compile(r"torch\.utils\.collect_env|collect_env\.py"), Ev.TORCH_COLLECT_ENV),
    (re.compile(r"os-release"), Ev.OS_RELEASE),
    (re.compile(r"\b(?:pip3?|conda)\s+(?:list|freeze)\b"), PACKAGES),
)


# A line that may start an output, depending on the lines after it (a timestamp above a table, a KEY=value).
_TIMESTAMP = "timestamp"
_KEY_VALUE = "key-value"


def _starts(lines: list[str], i: int) -> str | None:
    """The kind whose output starts at line ``i``, or None."""
    kind = _line_kind(lines[i])
    if kind == _TIMESTAMP:
        return Ev.NVIDIA_SMI if any(_SMI_TABLE_LINE.match(n) for n in lines[i + 1 : i + 3]) else None
    if kind == _KEY_VALUE:
        return Ev.OS_RELEASE if i + 1 < len(lines) and _OS_RELEASE_LINE.match(lines[i + 1]) else None
    return kind


# Logs repeat their lines (progress bars, retries): each distinct line is classified once.
@functools.lru_cache(maxsize=1 << 15)
def _line_kind(line: str) -> str | None:
    """What the line alone says it starts (or may start, with the lines after it), else None."""
    if _COLLECT_ENV_START.match(line):
        return Ev.TORCH_COLLECT_ENV
    if _SMI_HEADER.match(line) or _SMI_ERROR.search(line):
        return Ev.NVIDIA_SMI
    if _SMI_TIMESTAMP.match(line):
        return _TIMESTAMP
    if _SMI_LIST.match(line):
        return Ev.NVIDIA_SMI_LIST
    if _TOPO_HEADER.match(line):
        return Ev.NVIDIA_SMI_TOPO
    if _PROC_VERSION.match(line):
        return Ev.PROC_DRIVER_VERSION
    if _NVCC.match(line):
        return Ev.NVCC
    if _LSPCI_DEVICE.match(line) or _LSPCI_FIELD.match(line):
        return Ev.LSPCI
    if _OS_RELEASE_LINE.match(line):
        return _KEY_VALUE
    if _TRACEBACK.match(line):
        return TRACEBACK
    if _PACKAGES.match(line):
        return PACKAGES
    return None


@functools.lru_cache(maxsize=1 << 15)
def _continues(kind: str, line: str) -> bool:
    """Whether a line (not the start of another output) still belongs to an output of ``kind``."""
    fits: dict[str, Callable[[str], object]] = {
        Ev.NVIDIA_SMI: lambda s: _SMI_TABLE_LINE.match(s) or _SMI_ERROR.search(s) or not s.strip(),
        Ev.NVIDIA_SMI_LIST: lambda s: _SMI_LIST.match(s) or _SMI_LIST_MIG.match(s),
        Ev.NVIDIA_SMI_TOPO: _TOPO_LINE.match,
        Ev.LSPCI: lambda s: _LSPCI_LINE.match(s) or _LSPCI_DEVICE.match(s) or _LSPCI_FIELD.match(s),
        Ev.PROC_DRIVER_VERSION: _PROC_VERSION_LINE.match,
        Ev.NVCC: _NVCC_LINE.match,
        Ev.OS_RELEASE: _OS_RELEASE_LINE.match,
    }
    test = fits.get(kind)
    return True if test is None else bool(test(line))


@dataclass
class _Section:
    kind: str
    lines: list[str]


# The longest a report without a line shape of its own runs (collect_env's new layout is ~150 lines with the
# lscpu block): past it, the lines are something else pasted after it, still scanned for errors.
_MAX_LOOSE_LINES = 600


def _cut(lines: list[str]) -> list[_Section]:
    sections: list[_Section] = []
    current = _Section(OTHER, [])
    for i, line in enumerate(lines):
        prompt = _PROMPT.match(line)
        if prompt:
            command = prompt.group(1)
            kind = next((k for pattern, k in _COMMAND_KINDS if pattern.search(command)), OTHER)
            sections.append(current)
            current = _Section(kind, [])
            continue
        started = _starts(lines, i)
        if started is not None and started != current.kind:
            # The table's top border and the timestamp above it come before the "| NVIDIA-SMI" header line.
            carried: list[str] = []
            while started == Ev.NVIDIA_SMI and current.lines and _SMI_TABLE_LINE.match(current.lines[-1]):
                carried.insert(0, current.lines.pop())
            if carried and current.lines and _SMI_TIMESTAMP.match(current.lines[-1]):
                carried.insert(0, current.lines.pop())
            sections.append(current)
            current = _Section(started, [*carried, line])
            continue
        loose_too_long = current.kind == Ev.TORCH_COLLECT_ENV and len(current.lines) >= _MAX_LOOSE_LINES
        if started is None and (loose_too_long or not _continues(current.kind, line)):
            sections.append(current)
            current = _Section(OTHER, [line])
            continue
        current.lines.append(line)
    sections.append(current)
    return [s for s in sections if any(line.strip() for line in s.lines)]


def split_paste(text: str) -> dict[str, str]:
    """The outputs found in a normalised paste, by snapshot file name (the first of each kind)."""
    lines = text.split("\n")
    found: dict[str, str] = {}
    for section in _cut(lines):
        if section.kind in (OTHER, TRACEBACK, PACKAGES, Ev.KERNEL_LOG) or section.kind in found:
            continue
        found[section.kind] = "\n".join(section.lines).strip("\n") + "\n"
    kernel = [line.strip() for line in lines if _KERNEL_LINE.match(line)]
    if kernel:
        found[Ev.KERNEL_LOG] = "\n".join(kernel) + "\n"
    if Ev.TENSORFLOW_LOG not in found and TENSORFLOW_LOG_MARKER.search(text):
        # TensorFlow interleaves its lines with the program's own output: the parser reads its markers anywhere.
        found[Ev.TENSORFLOW_LOG] = text
    return found
