"""AMD GPUs and the ROCm stack: the GPUs seen by amdgpu and ROCm, driver and ROCm versions (ROCM001-009)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, judged, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.sources_state import Why
from gpudoctor.results import Outcome
from gpudoctor.words import counted

if TYPE_CHECKING:
    from gpudoctor.facts.amd_model import AmdGpu

# AMD's install guide (ROCm/rocm-install-on-linux, docs/install/amdgpu-install.rst and prerequisites.rst).
_INSTALL_DOCS = "https://rocm.docs.amd.com/projects/install-on-linux/"
_TOOL_KEYS = {"amd-smi": (Ev.AMD_SMI, Ev.AMD_SMI_LIST), "rocm-smi": (Ev.ROCM_SMI,), "rocminfo": (Ev.ROCMINFO,)}


def _seen(gpu: AmdGpu) -> bool:
    """A tool or the KFD topology reports it: the driver has it (the bus alone does not say so)."""
    return any(source != "pci" for source in gpu.sources)


def _physical(gpu: AmdGpu) -> str | None:
    """The physical GPU of a record: its bus and device, whichever partition (function) it is."""
    return gpu.bus_id.rsplit(".", 1)[0] if gpu.bus_id else None


def _label(gpu: AmdGpu) -> str:
    name = gpu.name or gpu.pci_description or "AMD GPU"
    return f"{name} ({gpu.gfx_target})" if gpu.gfx_target and gpu.gfx_target not in name else name


def _describe(gpus: list[AmdGpu]) -> str:
    """ "2 × AMD Instinct MI210 (gfx90a)"; partitions of one GPU counted once, then named."""
    by_physical: dict[str, AmdGpu] = {}
    loose: list[AmdGpu] = []
    for gpu in gpus:
        key = _physical(gpu)
        if key is None:
            loose.append(gpu)
        else:
            by_physical.setdefault(key, gpu)
    physical = list(by_physical.values()) + loose
    labels = Counter(_label(gpu) for gpu in physical)
    text = ", ".join(f"{count} × {label}" for label, count in labels.items())
    if len(gpus) > len(physical):
        text += f" ({len(gpus)} partitions)"
    return text


def _bus_evidence(facts: Facts) -> tuple[Ev, ...]:
    return tuple(key for key in (Ev.PCI_DEVICES, Ev.LSPCI) if facts.collected(key))


def _tool_evidence(facts: Facts) -> tuple[Ev, ...]:
    keys = (Ev.AMD_SMI, Ev.AMD_SMI_LIST, Ev.ROCM_SMI, Ev.ROCMINFO, Ev.KFD_TOPOLOGY)
    return tuple(key for key in keys if facts.collected(key))


_INSTALL_DRIVER = Fix(
    "Load the amdgpu driver; where it is not installed, install AMD's kernel driver with amdgpu-install "
    "(its package for your distribution is in AMD's install guide), then reboot.",
    ("sudo modprobe amdgpu", "sudo amdgpu-install --usecase=dkms"),
    needs_root=True,
    url=_INSTALL_DOCS,
)


def _not_driven(facts: Facts, on_bus: list[AmdGpu]) -> Outcome:
    """AMD GPUs only the bus shows: amdgpu not loaded, bound elsewhere, or not known."""
    amd = facts.amd
    where = ", ".join(g.bus_id or "?" for g in on_bus)
    what = f"{counted(len(on_bus), 'AMD GPU')} on the PCI bus ({where})"
    evidence = _bus_evidence(facts) + ((Ev.PROC_MODULES,) if facts.collected(Ev.PROC_MODULES) else ())
    data = {"bus_ids": [g.bus_id for g in on_bus]}
    if all(g.integrated for g in on_bus) and not amd.tools:
        # A Ryzen's graphics beside another vendor's GPU: nothing to say unless ROCm is meant to use it.
        return not_applicable(f"{what}: integrated graphics, and no ROCm tool answered", data)
    others = sorted({g.kernel_driver for g in on_bus if g.kernel_driver and g.kernel_driver != "amdgpu"})
    if others:
        finding = Finding(
            Severity.WARNING,
            f"{what} bound to {', '.join(others)}, not amdgpu (passed through to a virtual machine?)",
            Fix("See which driver owns each AMD function.", ("lspci -nnk -d 1002:",)),
            evidence,
        )
        return judged([finding], data, "")
    if amd.driver.loaded is False:
        finding = Finding(Severity.PROBLEM, f"{what}, but the amdgpu driver is not loaded", _INSTALL_DRIVER, evidence)
        return judged([finding], data, "")
    if all(g.kernel_driver == "amdgpu" for g in on_bus):
        return ok(f"{what}, bound to amdgpu (no ROCm tool listed them)", data)
    if amd.driver.loaded and facts.pci_drivers_known:
        finding = Finding(
            Severity.PROBLEM,
            f"{what}: amdgpu is loaded but drives none of them (its probe failed?)",
            Fix("Read why amdgpu gave up on them in the kernel log.", ("sudo dmesg | grep -iE 'amdgpu|kfd'",)),
            evidence,
        )
        return judged([finding], data, "")
    return not_applicable(f"{what}; whether amdgpu drives them is not known (`lsmod | grep amdgpu` says)", data)


@check("ROCM001", area="rocm", title="AMD GPUs seen by the amdgpu driver", vendor="amd")
def amd_gpus_seen(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that every AMD GPU on the PCI bus (vendor 0x1002, display or accelerator class) is
    driven by the amdgpu kernel driver and listed by the ROCm tools (amd-smi, rocm-smi, rocminfo) or the KFD
    topology, and names them: "2 × AMD Instinct MI210 (gfx90a)".

    Why it matters: ROCm reaches a GPU only through amdgpu and its KFD interface. A GPU the bus shows but no
    tool lists is invisible to PyTorch and every ROCm program: the driver is not loaded, not installed,
    bound to another driver (vfio-pci for a virtual machine), or failed to initialise the card.

    How to fix: load the driver (`sudo modprobe amdgpu`); if it is not installed, install AMD's kernel driver
    with `sudo amdgpu-install --usecase=dkms` (AMD's install guide gives the amdgpu-install package for each
    distribution) and reboot. When the driver is loaded but a GPU is missing, its kernel-log lines
    (`sudo dmesg | grep -i amdgpu`) say why; known messages are matched by the error signatures.
    """
    gpus = list(facts.amd.gpus)
    if not gpus:
        return not_applicable("no AMD GPU on the PCI bus or in any AMD tool")
    seen = [g for g in gpus if _seen(g)]
    on_bus = [g for g in gpus if not _seen(g)]
    if not seen:
        return _not_driven(facts, on_bus)
    data = {"gpus": len(seen), "bus_only": [g.bus_id for g in on_bus]}
    seen_physical = {_physical(g) for g in seen}
    missing = [g for g in on_bus if _physical(g) not in seen_physical]
    findings: list[Finding] = []
    evidence = _tool_evidence(facts) + _bus_evidence(facts)
    discrete_missing = [g for g in missing if not g.integrated]
    if discrete_missing:
        findings.append(
            Finding(
                Severity.WARNING,
                f"the AMD tools list {counted(len(seen_physical), 'GPU')}, the PCI bus shows "
                f"{len(seen_physical) + len(discrete_missing)}: "
                f"{', '.join(g.bus_id or '?' for g in discrete_missing)} not seen by the driver",
                Fix("Read why amdgpu did not take them in the kernel log.", ("sudo dmesg | grep -iE 'amdgpu|kfd'",)),
                evidence,
            )
        )
    for gpu in missing:
        if gpu.integrated:
            findings.append(
                Finding(
                    Severity.INFO,
                    f"the integrated GPU at {gpu.bus_id} is not listed by the AMD tools",
                    evidence=_bus_evidence(facts),
                )
            )
    return judged(findings, data, _describe(seen))


def _rocm_findings(facts: Facts) -> list[Finding]:
    amd = facts.amd
    findings: list[Finding] = []
    rocm = amd.rocm
    if len(rocm.all_versions) > 1:
        findings.append(
            Finding(
                Severity.INFO,
                f"several ROCm versions side by side: {', '.join(rocm.all_versions)}"
                + (f"; {rocm.path} is the one in use" if rocm.path else ""),
                evidence=(Ev.ROCM_INSTALL,),
            )
        )
    for tool, error in amd.tool_errors.items():
        # A tool that could not open /dev/kfd is ROCM010's verdict (the group or the container flags): said once.
        kfd = "No such file" in error or "Permission denied" in error or "Operation not permitted" in error
        kfd = kfd and "/dev/kfd" in error
        findings.append(
            Finding(
                Severity.INFO if kfd else Severity.WARNING,
                f"{tool} failed: {error}" + (" (see ROCM010)" if kfd else ""),
                evidence=tuple(k for k in _TOOL_KEYS.get(tool, ()) if facts.collected(k)),
                quote=error,
            )
        )
    if "rocm-smi" in amd.tools and "amd-smi" not in amd.tools:
        findings.append(
            Finding(
                Severity.INFO,
                "rocm-smi is deprecated in favour of amd-smi",
                evidence=(Ev.ROCM_SMI,),
            )
        )
    return findings


@check("ROCM002", area="rocm", title="ROCm installed", vendor="amd")
def rocm_installed(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the ROCm user space found on the machine (/opt/rocm*/.info/version, package metadata,
    or the version a tool prints), several ROCm versions side by side, which AMD tools (amd-smi, rocm-smi,
    rocminfo) answered and, verbatim, how any of them failed.

    Why it matters: ROCm's libraries (HIP, rocBLAS, MIOpen) and tools must match the kernel driver and the
    framework build. A failing amd-smi or rocminfo usually names the broken layer: the driver, /dev/kfd
    permissions, or a mismatched install. rocm-smi is deprecated in favour of amd-smi.

    How to fix: install ROCm with AMD's installer (`sudo amdgpu-install --usecase=rocm`; the
    amdgpu-install package for each distribution is in AMD's install guide). PyTorch's ROCm wheels bring
    their own ROCm libraries, but the tools and the kernel driver come from AMD's packages.
    """
    amd = facts.amd
    rocm = amd.rocm
    if not amd.gpus and not rocm.version and not amd.tools and not amd.tool_errors:
        return not_applicable("no AMD GPU and no ROCm found")
    findings = _rocm_findings(facts)
    data = {"version": rocm.version, "path": rocm.path, "tools": list(amd.tools), "errors": dict(amd.tool_errors)}
    tools = f"; tools answering: {', '.join(amd.tools)}" if amd.tools else ""
    if rocm.version:
        where = f" ({rocm.path})" if rocm.path else ""
        return judged(findings, data, f"ROCm {rocm.version}{where}{tools}")
    missing = rocm.missing
    if not amd.tools and not amd.tool_errors and all(g.integrated for g in amd.gpus):
        return not_applicable("only integrated AMD graphics, and no ROCm found", data)
    if missing is not None and missing.why is Why.ABSENT and not amd.tools:
        findings.append(
            Finding(
                Severity.WARNING,
                "no ROCm installation found (no /opt/rocm, no AMD tool answered)",
                Fix(
                    "Install ROCm with AMD's installer (its package for your distribution is in AMD's guide).",
                    ("sudo amdgpu-install --usecase=rocm",),
                    needs_root=True,
                    url=_INSTALL_DOCS,
                ),
                (Ev.ROCM_INSTALL,),
            )
        )
        return judged(findings, data, "")
    unknown = "ROCm version not known" + (f" ({missing.words()})" if missing else "")
    if not amd.tools and all(f.severity is Severity.INFO for f in findings):
        # Unknown is not fine: without the version (not collected, say) there is nothing to clear.
        notes = "".join(f"; {f.message}" for f in findings)
        return not_applicable(unknown + tools + notes, data)
    return judged(findings, data, unknown + tools)


def _hip_indices(gpus: list[AmdGpu], keep: list[AmdGpu]) -> str | None:
    """The HIP device numbers of ``keep``: the GPUs' order in the KFD topology, when every one has a node."""
    nodes = [g.kfd_node for g in gpus]
    if any(node is None for node in nodes):
        if all(g.index is not None for g in keep):
            return ",".join(str(g.index) for g in keep)
        return None
    order = sorted(n for n in nodes if n is not None)
    return ",".join(str(order.index(g.kfd_node)) for g in keep if g.kfd_node is not None)


@check("ROCM003", area="rocm", title="No integrated AMD GPU beside the discrete one", vendor="amd")
def integrated_beside_discrete(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether an integrated AMD GPU (the Radeon graphics of a Ryzen APU, rocminfo's
    "Memory Properties: APU") is enumerated next to a discrete AMD GPU.

    Why it matters: AMD's ROCm prerequisites say to disable the integrated GPU in the BIOS, because the
    ROCm runtime may crash when the driver enumerates it; programs also count it as a device and may pick
    it (PyTorch's device 0 can be the iGPU).

    How to fix: disable the integrated graphics in the BIOS, or hide it from ROCm programs with
    `export HIP_VISIBLE_DEVICES=<the discrete GPUs' numbers>` (ROCR_VISIBLE_DEVICES works one layer lower).
    """
    gpus = list(facts.amd.gpus)
    integrated = [g for g in gpus if g.integrated]
    if not integrated:
        return not_applicable("no integrated AMD GPU")
    discrete = [g for g in gpus if not g.integrated]
    names = ", ".join(f"{_label(g)} at {g.bus_id or '?'}" for g in integrated)
    if not discrete:
        return ok(f"only an integrated AMD GPU: {names}")
    hidden = facts.env.get("HIP_VISIBLE_DEVICES") or facts.env.get("ROCR_VISIBLE_DEVICES")
    evidence = _tool_evidence(facts) + _bus_evidence(facts)
    data = {"integrated": [g.bus_id for g in integrated], "discrete": [g.bus_id for g in discrete]}
    if hidden is not None:
        note = Finding(
            Severity.INFO,
            f"integrated GPU {names} beside the discrete one; HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES is set "
            f"({hidden}), so ROCm programs see only the devices it names",
            evidence=evidence + (Ev.ENV,),
        )
        return judged([note], data, "integrated GPU hidden by HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES")
    indices = _hip_indices([g for g in gpus if _seen(g)], [g for g in discrete if _seen(g)])
    commands = (f"export HIP_VISIBLE_DEVICES={indices}",) if indices else ()
    finding = Finding(
        Severity.WARNING,
        f"integrated GPU {names} is enumerated beside the discrete {_describe(discrete)}: "
        "ROCm may crash on it or pick it",
        Fix(
            "Disable the integrated graphics in the BIOS (AMD's ROCm prerequisites), or hide it from ROCm "
            "programs in this shell.",
            commands,
            url=_INSTALL_DOCS,
        ),
        evidence,
    )
    return judged([finding], data, "")
