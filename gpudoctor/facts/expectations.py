"""Whether the evidence expects a working GPU, and which facts it leaves unsettled.

Missing evidence is not a healthy machine.  A GPU is *expected* when anything shows one should work here: a
CUDA build of a framework, GPU models named by any source, an ``nvidia-smi`` that printed something, NVIDIA
lines in the kernel log, a known GPU error message.  The machine is *cleared* only when the evidence shows
the driver seeing the GPUs and every framework shown reaching CUDA; each fact short of that is unsettled,
with the command that settles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.sources_state import Why

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

# The areas (keys of gpudoctor.areas) of the NVIDIA GPU stack itself, bus to the frameworks' CUDA use: an error
# about one of them means someone expected a working GPU, and on a machine whose PCI bus has no NVIDIA GPU it is
# what asking for one prints.
GPU_STACK_AREAS = frozenset(
    {"pci", "driver", "nvml", "gpus", "health", "cuda", "cudnn", "devices", "pytorch", "tensorflow"}
)


@dataclass(frozen=True)
class Unsettled:
    """One fact the evidence would need to clear the machine, why it is not known, and what settles it."""

    what: str
    why: str
    commands: tuple[str, ...]


def gpu_expectation(facts: Facts) -> str | None:
    """Why the evidence expects a working NVIDIA GPU (a few words), or None when nothing says so (or a PCI scan
    established there is none: then the GPU checks say so themselves)."""
    if facts.gpu_census.none_on_bus:
        return None
    torch = facts.torch
    if torch.cuda:
        return f"PyTorch {torch.version or ''} is a CUDA {torch.cuda} build".replace("  ", " ")
    tf = facts.tensorflow
    if tf.built_with_cuda or tf.log.lines:
        return "TensorFlow looks for its GPU libraries"
    if facts.gpus or facts.pci_gpus:
        return "NVIDIA GPUs are named in the evidence"
    if facts.machine_topology.gpus:
        return "the GPU topology lists GPUs"
    for key in (Ev.NVIDIA_SMI, Ev.NVIDIA_SMI_XML, Ev.NVML, Ev.PROC_DRIVER_VERSION):
        run = facts.source(key)
        if run.answered:
            return f"{key} was collected"
    if "NVRM" in (facts.evidence.text(Ev.KERNEL_LOG.value) or ""):
        return "the kernel log has NVIDIA driver lines"
    if any(
        m.signature.component in GPU_STACK_AREAS and m.signature.severity != "info" for m in facts.signature_matches
    ):
        return "the evidence holds NVIDIA GPU error messages"
    return None


def _driver_cleared(facts: Facts) -> bool:
    if facts.nvml.init_ok and (facts.nvml.device_count or facts.nvml.gpus):
        return True
    if facts.torch.is_available:
        return True
    tf = facts.tensorflow
    if tf.gpus_listed and tf.gpus:
        return True
    return bool(facts.gpus) and (facts.driver.kernel_module_loaded or facts.driver.userspace_version is not None)


def unsettled_facts(facts: Facts) -> list[Unsettled]:
    """Each fact needed to clear the machine that the evidence does not establish (empty: cleared)."""
    unsettled: list[Unsettled] = []
    if not _driver_cleared(facts):
        why = "no nvidia-smi, NVML or framework output shows the driver seeing a GPU"
        missing = facts.missing(Ev.NVIDIA_SMI)
        if missing is not None and missing.why is not Why.NOT_COLLECTED:
            why = f"nvidia-smi: {missing.words()}"
        unsettled.append(
            Unsettled(
                "whether the NVIDIA driver is loaded and sees the GPUs", why, ("nvidia-smi", "lsmod | grep nvidia")
            )
        )
    torch = facts.torch
    if torch.cuda and torch.is_available is None:
        unsettled.append(
            Unsettled(
                f"whether PyTorch {torch.version or ''} reaches CUDA".replace("  ", " "),
                "the evidence does not show torch.cuda.is_available()",
                ('python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"',),
            )
        )
    tf = facts.tensorflow
    if (tf.built_with_cuda or tf.log.lines) and not tf.gpus_listed and not tf.gpus:
        unsettled.append(
            Unsettled(
                "whether TensorFlow registers the GPU",
                "the evidence does not show TensorFlow listing a GPU device",
                ("python -c \"import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))\"",),
            )
        )
    return unsettled


def gpu_trouble(facts: Facts) -> bool:
    """Whether the evidence shows GPU work failing: a known error message, or a CUDA build that cannot reach CUDA."""
    if any(m.signature.severity != "info" for m in facts.signature_matches):
        return True
    torch = facts.torch
    return bool(torch.cuda) and torch.is_available is False
