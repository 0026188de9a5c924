"""Why a source has nothing to say: every missing value in the model carries one of these reasons.

"Not known" and "known to be absent" must never look the same to a check: only ``ABSENT`` (we looked,
there is none) may clear a check; the other reasons make a verdict unknown and say what would settle it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import EvidenceItem


class Why(str, enum.Enum):
    """The reason a value is missing."""

    NOT_COLLECTED = "not_collected"  # this run or snapshot did not include the source
    FAILED = "failed"  # the source was asked and failed; ``error`` says how
    NOT_APPLICABLE = "not_applicable"  # the question does not arise on this machine
    ABSENT = "absent"  # we looked, and there is none (a command or file that does not exist)


@dataclass(frozen=True)
class Missing:
    """A value that is not known, and why."""

    why: Why
    source: EvidenceKey | None = None
    error: str | None = None

    def words(self) -> str:
        """A short phrase for a report: "nvidia-smi.txt not collected", "nvml.json failed: ..."."""
        what = self.source.value if self.source else "the value"
        text = {
            Why.NOT_COLLECTED: "not collected",
            Why.FAILED: "failed",
            Why.NOT_APPLICABLE: "not applicable",
            Why.ABSENT: "absent",
        }[self.why]
        return f"{what} {text}" + (f": {self.error}" if self.error else "")

    def settled_by(self) -> str:
        """The command that would settle the unknown on the machine the evidence came from."""
        return settling_command(self.source)


# The command a person types to collect one source by hand (``gpudoctor collect`` collects them all).  What a
# report says is unknown comes with the command that would settle it.
SETTLING_COMMANDS: dict[EvidenceKey, str] = {
    EvidenceKey.NVIDIA_SMI: "nvidia-smi",
    EvidenceKey.NVIDIA_SMI_XML: "nvidia-smi -q",
    EvidenceKey.NVIDIA_SMI_LIST: "nvidia-smi -L",
    EvidenceKey.NVIDIA_SMI_TOPO: "nvidia-smi topo -m",
    EvidenceKey.NVIDIA_SMI_P2P: "nvidia-smi topo -p2p r",
    EvidenceKey.NVIDIA_SMI_NVLINK: "nvidia-smi nvlink -s",
    EvidenceKey.FABRIC_MANAGER: "systemctl status nvidia-fabricmanager",
    EvidenceKey.NVML: "nvidia-smi",
    EvidenceKey.PROC_DRIVER_VERSION: "cat /proc/driver/nvidia/version",
    EvidenceKey.SYS_MODULE_VERSION: "cat /proc/driver/nvidia/version",
    EvidenceKey.PROC_MODULES: "lsmod | grep -E 'nvidia|nouveau'",
    EvidenceKey.KERNEL_LOG: "sudo dmesg | grep -E 'NVRM|Xid'",
    EvidenceKey.LSPCI: "lspci -nnk | grep -iA3 nvidia",
    EvidenceKey.PCI_DEVICES: "lspci -nnk | grep -iA3 nvidia",
    EvidenceKey.NVCC: "nvcc --version",
    EvidenceKey.CUDA_TOOLKITS: "ls -d /usr/local/cuda*",
    EvidenceKey.CUDNN: "ldconfig -p | grep libcudnn",
    EvidenceKey.LDCONFIG: "ldconfig -p | grep -E 'libcuda|libcudnn|libnvidia-ml'",
    EvidenceKey.DRIVER_LIBRARIES: "ldconfig -p | grep libnvidia-ml",
    EvidenceKey.DEVICE_NODES: "ls -l /dev/nvidia*",
    EvidenceKey.TORCH_COLLECT_ENV: "python -m torch.utils.collect_env",
    EvidenceKey.FRAMEWORK_TORCH: "python -m torch.utils.collect_env",
    EvidenceKey.PLATFORM: "cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name",
}


def settling_command(key: EvidenceKey | None) -> str:
    """The command that collects ``key`` by hand; ``gpudoctor collect`` for a source without one of its own."""
    return SETTLING_COMMANDS.get(key, "gpudoctor collect") if key is not None else "gpudoctor collect"


@dataclass(frozen=True)
class SourceRun:
    """How one evidence source answered: the typed record checks read instead of raw evidence."""

    key: EvidenceKey | None  # None for a source this version does not know (a newer snapshot's)
    name: str  # its snapshot file name
    argv: tuple[str, ...]
    answered: bool  # it produced output (possibly an error message worth reading)
    exit_code: int | None
    timed_out: bool
    duration_s: float | None
    error: str | None
    missing: Missing | None  # why there is no output, when there is none

    @property
    def killed_by_signal(self) -> int | None:
        """The signal number that ended a command (not by our timeout), else None."""
        if self.exit_code is not None and self.exit_code < 0 and not self.timed_out:
            return -self.exit_code
        return None

    @property
    def command_words(self) -> str:
        return " ".join(self.argv) if self.argv else self.name


# How the evidence layer says "this tool or file does not exist here" (runner and file readers).
_ABSENT_MARKERS = ("not found", "no such file", "not installed", "does not exist")


def source_run(name: str, item: EvidenceItem | None) -> SourceRun:
    """The typed record of one source; a source that is not in the evidence is ``NOT_COLLECTED``."""
    try:
        key: EvidenceKey | None = EvidenceKey(name)
    except ValueError:
        key = None
    if item is None:
        return SourceRun(key, name, (), False, None, False, None, None, Missing(Why.NOT_COLLECTED, key))
    answered = bool(item.text) or bool(item.stderr and item.exit_code not in (0, None))
    missing: Missing | None = None
    if not item.text:
        error = item.error or (item.stderr.strip() or None)
        lowered = (error or "").lower()
        if item.timed_out:
            missing = Missing(Why.FAILED, key, error or "timed out")
        elif any(marker in lowered for marker in _ABSENT_MARKERS):
            missing = Missing(Why.ABSENT, key, error)
        elif item.text == "" and not error and item.exit_code in (0, None):
            missing = Missing(Why.ABSENT, key, "empty")
        else:
            missing = Missing(Why.FAILED, key, error)
    return SourceRun(
        key,
        name,
        tuple(item.argv or ()),
        answered,
        item.exit_code,
        item.timed_out,
        item.duration_s,
        item.error,
        missing,
    )
