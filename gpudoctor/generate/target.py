"""What a generated file must fit, read from the facts of this machine or of a snapshot (or given as flags).

The driver that will run a container is the host's: the loaded kernel module's version, else the installed
user space's (a module not loaded yet loads that version).  Compute capabilities come from the driver's GPU
list, else from the GPU names on the PCI bus through the knowledge base (a machine with no driver yet still
says which GPUs it has).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.generate.model import MachineTarget

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

# The sources a generator reads: the driver, the GPUs, the distro, WSL.  Collected alone, they take as long as
# the NVML probe, not the whole check.
GENERATOR_SOURCES = (
    Ev.NVML,
    Ev.NVIDIA_SMI_XML,
    Ev.NVIDIA_SMI,
    Ev.PROC_DRIVER_VERSION,
    Ev.SYS_MODULE_VERSION,
    Ev.PROC_MODULES,
    Ev.PROC_VERSION,
    Ev.OS_RELEASE,
    Ev.PCI_DEVICES,
    Ev.LSPCI,
    Ev.CONTAINER,
    Ev.ENV,
    Ev.DRIVER_LIBRARIES,
    Ev.KERNEL_LOG,
    # AMD: the installed ROCm and the KFD topology (file reads, no tool), so an AMD machine gets a ROCm file.
    Ev.ROCM_INSTALL,
    Ev.KFD_TOPOLOGY,
)


def _amd(facts: Facts) -> tuple[tuple[str, ...], tuple[str, ...], str | None, bool]:
    """(GPU names, gfx targets, ROCm version, any AMD GPU) from ``facts.amd``: nothing is asked of the AMD facts
    where the evidence names no AMD GPU (an NVIDIA or no-GPU machine is never affected)."""
    if "amd" not in facts.vendors_in_evidence:
        return (), (), None, False
    amd = facts.amd  # the PCI bus's AMD functions are among its GPUs, named by lspci where no tool names them
    names = tuple(gpu.name or gpu.pci_description or "" for gpu in amd.gpus if gpu.name or gpu.pci_description)
    targets = tuple(sorted({gpu.gfx_target for gpu in amd.gpus if gpu.gfx_target}))
    return names, targets, amd.rocm.version, bool(amd.gpus)


def _capabilities(facts: Facts) -> tuple[tuple[str, ...], tuple[str, ...]]:
    from gpudoctor import kb

    capabilities, names = [], []
    for gpu in facts.gpus:
        names.append(gpu.name or "")
        if gpu.compute_capability:
            capabilities.append(gpu.compute_capability)
    if not facts.gpus:
        for device in facts.pci_gpus:
            known = kb.compute_capability_for_name(device.description or "")
            names.append(device.description or "")
            if known:
                capabilities.append(known.compute_capability)
    return tuple(sorted(set(capabilities))), tuple(name for name in names if name)


def resolve_for_driver(for_driver: str | None) -> tuple[str | None, str]:
    """(the driver release, where it comes from) of a ``--for-driver`` value: a release as given; a bare branch
    ("550") as its oldest release the knowledge base knows (every later release of the branch runs what that one
    runs), said so; GenerationRefused for a branch it knows no release of, so it never becomes "unknown"."""
    from gpudoctor.generate.model import GenerationRefused
    from gpudoctor.kb.driver_cuda import oldest_driver_release

    text = (for_driver or "").strip()
    if not text or "." in text:
        return for_driver, f"--for-driver {for_driver}"
    release = oldest_driver_release(text)
    if release is None:
        raise GenerationRefused(
            f"--for-driver {text[:12]!r}: no release of a {text[:12]} driver branch is in gpudoctor's knowledge base; "
            "give the whole release nvidia-smi prints, like 550.54.15"
        )
    return release, f"--for-driver {text}, read as {release}, the oldest {text} release the knowledge base knows"


def target_from_facts(facts: Facts, for_driver: str | None = None, source: str = "this machine") -> MachineTarget:
    """The MachineTarget of these facts; ``for_driver`` (a release, or a branch: see resolve_for_driver) replaces
    the driver they name."""
    for_driver, given = resolve_for_driver(for_driver)
    driver = facts.driver
    version = for_driver or driver.kernel_version or driver.userspace_version
    if driver.kernel_flavor == "l4t" and not for_driver:
        version = None  # Jetson's L4T numbers are not desktop driver versions
    capabilities, names = _capabilities(facts)
    release = facts.os_release
    log = facts.kernel_log
    amd_names, gfx, rocm, amd_present = _amd(facts)
    nvidia_present = bool(facts.gpus or facts.pci_gpus)
    vendor = "amd" if amd_present and not nvidia_present else "nvidia" if nvidia_present and not amd_present else None
    return MachineTarget(
        driver_version=version,
        compute_capabilities=capabilities,
        gpu_names=names,
        distro_id=(release.id or None) if release else None,
        distro_version=(release.version_id or None) if release else None,
        wsl=bool(facts.container.wsl),
        container=(facts.container.runtime or "unknown")
        if facts.container.in_container and not facts.container.wsl
        else None,
        secure_boot=True if log.secure_boot_rejected else None,
        source=given if for_driver else source,
        amd_gpu_names=amd_names,
        gfx_targets=gfx,
        rocm_version=rocm,
        gpu_vendor=vendor,
    )
