"""PCI bus checks: is there an NVIDIA GPU at all, and which kernel driver holds it."""

from __future__ import annotations

from collections import Counter

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import other_vendors, vendor_words
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK
from gpudoctor.facts.model import PciDevice
from gpudoctor.facts.platform_model import DmiIdentity
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks import _fixes
from gpudoctor_checks._cause_fixes import fix_for
from gpudoctor_checks.platform import judges_instance_gpus, type_words

_VM_VENDORS = (
    "qemu",
    "kvm",
    "vmware",
    "virtualbox",
    "xen",
    "amazon ec2",
    "google",
    "microsoft corporation",
    "openstack",
    "bochs",
    "red hat",
    "standard pc",
)


def _describe(device: PciDevice) -> str:
    return device.description or (f"[10de:{device.device_id}]" if device.device_id else "NVIDIA device")


def _placed(facts: Facts) -> list[PciDevice]:
    """The NVIDIA GPUs a scan of the bus found (not a pasted link excerpt that names no device)."""
    return [d for d in facts.pci_gpus if d.address != UNPLACED_LSPCI_BLOCK]


def _not_read(facts: Facts) -> str:
    """Why the bus's devices are not known: nothing read it, or only a link-status excerpt of lspci was given."""
    if facts.source(Ev.LSPCI).answered:
        return (
            "which devices are on the PCI bus is not known: the lspci text lists no device (a LnkCap/LnkSta "
            "excerpt?); `lspci -nnk | grep -iA3 nvidia` lists them"
        )
    return "PCI bus not read (sysfs and lspci not collected): `lspci -nnk | grep -iA3 nvidia` lists the GPUs"


def _looks_like_vm(dmi: DmiIdentity) -> str | None:
    text = dmi.words
    return text if any(v in text.lower() for v in _VM_VENDORS) else None


def _type_without_gpus(facts: Facts) -> tuple[str, Fix] | None:
    """(the message's detail, the fix) on a cloud instance whose type has no GPU; None elsewhere."""
    from gpudoctor.kb.cloud_instances import gpu_type_suggestions, has_gpus

    cloud = facts.platform.cloud
    if cloud is None or not cloud.instance_type:
        return None
    gpus = has_gpus(cloud.provider, cloud.instance_type)
    if gpus is True:
        return None
    words = type_words(cloud)
    picks = gpu_type_suggestions(cloud.provider)[:3]
    choice = f", e.g. {'; '.join(picks)}" if picks else " (`gpudoctor kb instances` lists them)"
    if gpus is None:
        # A family gpudoctor cannot place (GCP's N1 takes attached GPUs): the choices, without a verdict.
        return f" ({words})", Fix(f"Pick a GPU type, or attach GPUs where {cloud.provider_name} allows it{choice}.")
    # No driver, container flag or passthrough gives a GPU to a type that has none: only another type does.
    return f" ({words}, an instance type without GPUs)", Fix(f"{words} has no GPU: pick a GPU type{choice}.")


@check("PCI001", area="pci", title="NVIDIA GPU on the PCI bus")
def gpu_on_bus(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether an NVIDIA display or 3D controller is on the PCI bus, read from sysfs (and
    lspci where present). This works with no driver installed at all.

    Why it matters: everything else depends on it. "GPUs on the bus but no driver" is fixed by installing
    a driver; "no GPU on the bus" is fixed only by the machine (a GPU instance type, PCI passthrough, a
    container started with GPU access). In a container it is the one verdict on "no GPU reachable from
    here" (ENV004 defers to it), so the device nodes that happen to exist do not change the report.

    On a cloud instance whose type has GPUs PLAT002 judges them (and names a missing one); on a hosted notebook
    platform PLAT010 judges its GPU setting.

    How to fix: on a cloud VM, pick a GPU instance type (on a type without GPUs the fix names some); on a
    hypervisor, pass the GPU through to the VM; in a container, start it with GPU access
    (`docker run --gpus all ...`); on bare metal, reseat the card and check its power cables.
    """
    if facts.container.wsl and facts.container.wsl_version == 2:
        return not_applicable("WSL2 exposes the GPU through /dev/dxg, not the PCI bus")
    if not facts.pci_scan_available:
        return not_applicable(_not_read(facts))
    gpus = _placed(facts)
    if gpus:
        names = Counter(_describe(d) for d in gpus)
        listing = ", ".join(f"{n}× {name}" if n > 1 else name for name, n in names.items())
        noun = "GPU" if len(gpus) == 1 else "GPUs"
        return ok(
            f"{len(gpus)} NVIDIA {noun} on the bus: {listing}",
            data={
                "count": len(gpus),
                "devices": [
                    {
                        "address": d.address,
                        "device_id": d.device_id,
                        "description": d.description,
                        "driver": d.driver,
                        "numa_node": d.numa_node,
                    }
                    for d in gpus
                ],
            },
        )
    others = other_vendors(facts.accelerators)
    if others:
        # Another vendor's GPUs or TPUs are this machine's accelerators: their own area's checks judge them.
        return not_applicable(
            f"no NVIDIA GPU; this machine's accelerators are {vendor_words(others)}'s "
            f"({counted(len(others), 'device')}): their own checks cover them",
            data={"count": 0, "other_accelerators": len(others)},
        )
    notebook = facts.platform.notebook
    if notebook is not None:
        # The GPU of a hosted notebook comes from the platform's own setting, not from a machine's bus.
        return not_applicable(f"{notebook.name} is a notebook platform: PLAT010 judges its GPU setting", {"count": 0})
    if judges_instance_gpus(facts):
        return not_applicable("PLAT002 judges this instance's GPUs", {"count": 0})
    where = "this machine"
    cause = "no-nvidia-gpu"
    fix = Fix(
        "Run on a machine that has an NVIDIA GPU: choose a GPU instance type on a cloud, or pass the "
        "GPU through to this VM."
    )
    if facts.container.in_container:
        where = f"this {facts.container.runtime} container"
        cause = "container-no-gpu-flag"
        fix = fix_for("container-gpus", facts) or fix
    vm = _looks_like_vm(facts.dmi)
    detail = (
        f" (a virtual machine: {vm.strip()} — no GPU passed through)" if vm and not facts.container.in_container else ""
    )
    without = _type_without_gpus(facts)
    if without is not None:
        detail, fix, cause = *without, "no-nvidia-gpu"
    return warning(
        f"No GPU or TPU on the PCI bus of {where}{detail}: no NVIDIA, AMD or Intel GPU, no Google TPU",
        fix=fix,
        evidence=[Ev.PCI_DEVICES, Ev.LSPCI],
        data={"count": 0},
        cause=cause,
    )


@check("PCI002", area="pci", title="Kernel driver bound to each GPU")
def driver_bound(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: which kernel driver owns each NVIDIA GPU on the bus (sysfs `driver` link, lspci
    "Kernel driver in use"). An lspci output without any "Kernel driver in use" line (run without `-k`, or a
    pasted excerpt) leaves the binding unknown, and the check says so instead of calling the GPU driverless.

    Why it matters: CUDA works only when the `nvidia` driver owns the GPU. No driver means it isn't
    installed or failed to load; `nouveau` (the open-source display driver) blocks the NVIDIA driver;
    `vfio-pci` means the GPU is reserved for passthrough to a virtual machine.

    How to fix: install and load the NVIDIA driver; blacklist nouveau and reboot; or unbind vfio-pci if
    the GPU is meant for this host.
    """
    gpus = _placed(facts)
    if not facts.pci_scan_available:
        return not_applicable(_not_read(facts))
    if not gpus:
        return not_applicable("no NVIDIA GPU on the bus")
    if not facts.pci_drivers_known:
        # lspci without -k prints no "Kernel driver in use" line for any device: the binding is unknown, not none.
        listing = ", ".join(f"{d.address} ({_describe(d)})" for d in gpus)
        return not_applicable(
            f'which kernel driver owns {listing} is not known: the lspci output has no "Kernel driver in use" '
            "lines (`lspci -nnk -d 10de:` shows them)",
            {"drivers": None},
        )
    findings = []
    by_driver = Counter(d.driver or "none" for d in gpus)
    for device in gpus:
        if device.driver == "nvidia":
            continue
        if device.driver is None:
            installed = bool(facts.driver.userspace_version)
            fix = _fixes.load_kernel_module() if installed else _fixes.install_driver_for(facts)
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{device.address} ({_describe(device)}) has no kernel driver "
                    "bound: the NVIDIA driver is not installed or not loaded",
                    fix,
                    (Ev.PCI_DEVICES,),
                    cause="driver-not-loaded" if installed else "driver-not-installed",
                    other_causes=() if installed else ("driver-not-loaded",),
                )
            )
        elif device.driver == "nouveau":
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{device.address} is held by nouveau, the open-source "
                    "display driver; CUDA needs the NVIDIA driver",
                    _fixes.blacklist_nouveau(facts.os_release),
                    (Ev.PCI_DEVICES,),
                    cause="nouveau-bound",
                )
            )
        elif device.driver.startswith("vfio"):
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{device.address} is bound to {device.driver}: reserved "
                    "for passthrough to a virtual machine, unusable on this host",
                    Fix(
                        "If the GPU is meant for this host, remove it from the vfio-pci ids "
                        "(kernel command line or /etc/modprobe.d) and reboot.",
                        needs_root=True,
                    ),
                    (Ev.PCI_DEVICES,),
                )
            )
        else:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{device.address} is bound to {device.driver}, not to nvidia",
                    None,
                    (Ev.PCI_DEVICES,),
                )
            )
    summary = ", ".join(f"{n} on {drv}" for drv, n in by_driver.items())
    data = {"drivers": dict(by_driver)}
    if not findings:
        return ok(f"every GPU is driven by nvidia ({len(gpus)})", data=data)
    return Outcome(f"GPU drivers: {summary}", findings, data)
