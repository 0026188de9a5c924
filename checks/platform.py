"""Where the machine runs: the cloud instance, and the GPUs its instance type should have (PLAT001-PLAT009).

The instance type comes from the machine itself (DMI, cloud-init, the metadata service with --cloud-metadata);
what the type should have comes from the knowledge base (``gpudoctor.kb.cloud_instances``).  PCI001 and the
smoke checks read the same expectation through :func:`expected_instance` and :func:`model_matches`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import Vendor, display_name, other_vendors
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK
from gpudoctor.facts.pci_address import normalize_bus_id
from gpudoctor.facts.platform_model import CloudInstance
from gpudoctor.results import Outcome
from gpudoctor.words import counted

if TYPE_CHECKING:
    from gpudoctor.kb.cloud_instances import InstanceType

_EVIDENCE = (Ev.PLATFORM, Ev.CLOUD_METADATA)
# The kb's gpu_vendor -> the vendor gpudoctor reads the devices of; Trainium/Inferentia ("aws") it does not read.
_READ_VENDORS = {v.value: v for v in Vendor}
# Stopping an instance gives up its host; starting it again places it on another one, while a reboot keeps the
# same host (and the same broken GPU).  The provider's page that says so, where one is known.
_STOP_START_DOCS = {
    "aws": "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/how-ec2-instance-stop-start-works.html",
}
_XID_FALLEN_OFF = 79
_SOURCE_WORDS = {"dmi": "DMI", "cloud-init": "cloud-init", "metadata": "the metadata service"}


def type_words(cloud: CloudInstance) -> str:
    """ "AWS p4d.24xlarge", or the provider's name alone when the type is not known."""
    return f"{cloud.provider_name} {cloud.instance_type}" if cloud.instance_type else cloud.provider_name


def expected_instance(facts: Facts) -> InstanceType | None:
    """The knowledge base's row for this machine's instance type; None when not a cloud instance, its type is not
    known, or the knowledge base does not list it."""
    from gpudoctor.kb.cloud_instances import instance_type

    cloud = facts.platform.cloud
    if cloud is None or not cloud.instance_type:
        return None
    return instance_type(cloud.provider, cloud.instance_type)


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[^0-9a-z]+", text.lower()) if t and t not in ("nvidia", "tesla", "amd", "instinct")]


def model_matches(name: str | None, model: str) -> bool | None:
    """Whether a device name the driver reports ("NVIDIA A100-SXM4-40GB") is the kb's model ("A100-SXM4-40GB"):
    the same model number, and the same memory where both say it.  None when the name is unknown."""
    if not name:
        return None
    have, want = _tokens(name), _tokens(model)
    primary = next((t for t in want if any(c.isdigit() for c in t)), want[0] if want else "")
    if primary not in have:
        return False
    memory = [t for t in want if re.fullmatch(r"\d+gb", t)]
    return all(m in have for m in memory) if any(re.fullmatch(r"\d+gb", t) for t in have) else True


@dataclass(frozen=True)
class _Visible:
    """The devices that show: their names (None where only the bus shows them) and bus ids, and from where."""

    names: tuple[str | None, ...]
    buses: tuple[str, ...]
    where: str


def _visible(facts: Facts, row: InstanceType) -> _Visible | None:
    """The type's devices that show on this machine; None when nothing that lists them was read."""
    if row.gpu_vendor == Vendor.NVIDIA.value:
        if facts.gpus:
            buses = tuple(b for g in facts.gpus if (b := normalize_bus_id(g.bus_id)))
            return _Visible(tuple(g.name for g in facts.gpus), buses, "the driver")
        if facts.pci_scan_available:
            placed = [d for d in facts.pci_gpus if d.address != UNPLACED_LSPCI_BLOCK]
            return _Visible(tuple(None for _ in placed), tuple(d.address for d in placed), "the PCI bus")
        return None
    vendor = _READ_VENDORS.get(row.gpu_vendor)
    if vendor is None:
        return None
    found = [a for a in other_vendors(facts.accelerators) if a.vendor is vendor]
    if not found and not facts.pci_scan_available:
        return None
    return _Visible(
        tuple(display_name(a) if a.driver_sees else None for a in found),
        tuple(b for a in found if (b := normalize_bus_id(a.bus_id))),
        "the driver and the PCI bus",
    )


def judges_instance_gpus(facts: Facts) -> bool:
    """PLAT002 judges this machine's GPUs: its instance type is known to have GPUs gpudoctor can count."""
    row = expected_instance(facts)
    return row is not None and row.gpu_count > 0 and _visible(facts, row) is not None


def _xid_lost(facts: Facts) -> list[str]:
    """The addresses the kernel log says fell off the bus (Xid 79), in the sysfs spelling."""
    lost: list[str] = []
    for event in facts.kernel_log.xid_events:
        if event.code != _XID_FALLEN_OFF and "fallen off the bus" not in event.message.lower():
            continue
        where = event.pci or ""
        bus = normalize_bus_id(where) or normalize_bus_id(f"{where}.0")
        if bus and bus not in lost:
            lost.append(bus)
    return lost


def _named(why: dict[str, str]) -> str:
    """ "0000:a0:1d.0 is missing (Xid 79: fallen off the bus)"; several: "a (why), b (why) are missing"."""
    if len(why) == 1:
        ((address, reason),) = why.items()
        return f"{address} is missing ({reason})"
    return ", ".join(f"{address} ({reason})" for address, reason in why.items()) + " are missing"


def _missing_words(facts: Facts, seen: _Visible, expected: int) -> tuple[str, list[str], bool]:
    """(words naming the missing GPUs, their addresses, whether the kernel log says they fell off the bus)."""
    count = expected - len(seen.names)
    lost = [b for b in _xid_lost(facts) if b not in seen.buses]
    absent: list[str] = []
    if seen.where == "the driver":
        on_bus = [d.address for d in facts.pci_gpus if d.address != UNPLACED_LSPCI_BLOCK]
        absent = [b for b in on_bus if (nb := normalize_bus_id(b)) and nb not in seen.buses]
    if absent:
        why = dict.fromkeys(absent, "on the PCI bus, not seen by the driver")
        why.update({b: why[b] + "; Xid 79: fallen off the bus" for b in absent if normalize_bus_id(b) in lost})
        return _named(why), absent, any(normalize_bus_id(b) in lost for b in absent)
    if lost:
        return _named(dict.fromkeys(lost, "Xid 79: fallen off the bus")), lost, True
    return (
        f"{counted(count, 'GPU')} {'is' if count == 1 else 'are'} missing (nothing in the evidence names which: "
        "`sudo dmesg | grep -i xid` and `lspci -d 10de:` do)",
        [],
        False,
    )


def stop_start_fix(cloud: CloudInstance, what: str, still: str = "the GPUs are still missing") -> Fix:
    """The fix for a fault of the instance's host: stop and start the instance (not a reboot), then support.
    ``what`` begins the sentence ("A GPU the instance type has but the machine does not show"); ``still`` says
    what sends it to the provider's support after the restart."""
    return Fix(
        f"{what} is a fault of the host the instance runs on, not of the driver: stop and start the instance "
        f"(a reboot keeps the same host) so that it starts on other hardware; if {still}, "
        f"report the instance to {cloud.provider_name} support.",
        url=_STOP_START_DOCS.get(cloud.provider),
    )


@check("PLAT001", area="platform", title="Where the machine runs")
def where_it_runs(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: which cloud this machine is an instance of and its instance type (from DMI, cloud-init,
    and with --cloud-metadata the provider's metadata service), the hosted notebook platform, and the container
    image, as far as the machine itself says them.

    Why it matters: the instance type says what the machine should have (its GPUs, their link, its network),
    the notebook platform and the image say how a GPU is obtained and which driver the software was built for.
    The other checks judge against these.

    How to fix: nothing to fix; where the instance type is not known, `gpudoctor check --cloud-metadata` asks
    the provider's metadata service for it.
    """
    platform = facts.platform
    cloud, notebook, image = platform.cloud, platform.notebook, platform.image
    data: dict[str, Any] = {
        "provider": cloud.provider if cloud else None,
        "instance_type": cloud.instance_type if cloud else None,
        "type_source": cloud.type_source if cloud else None,
        "notebook": notebook.name if notebook else None,
        "image": image.name if image else None,
    }
    metadata = platform.metadata
    # Asked with --cloud-metadata but got nothing: say why, so "no type" is never silent about the request.
    unanswered = f"--cloud-metadata: {metadata.error}" if metadata.asked and not metadata.ok and metadata.error else ""
    data["metadata_error"] = unanswered or None
    if cloud is None and notebook is None and image is None:
        dmi = platform.dmi.words or "not readable"
        return not_applicable(
            f"not a cloud instance, notebook platform or container image gpudoctor recognises (DMI: {dmi})"
            + (f"; {unanswered}" if unanswered else ""),
            data,
        )
    parts: list[str] = []
    if cloud is not None:
        if cloud.instance_type:
            read = _SOURCE_WORDS.get(cloud.type_source or "", cloud.type_source)
            source = f" (read from {read})" if read else ""
            parts.append(f"{type_words(cloud)}{source}")
        else:
            why = f": {cloud.why_unknown}" if cloud.why_unknown else ""
            parts.append(f"{cloud.provider_name}, instance type not known{why}")
    if notebook is not None:
        parts.append(f"notebook platform {notebook.name}")
    if image is not None:
        parts.append(f"image {image.name}")
    if unanswered:
        parts.append(unanswered)
    return ok("; ".join(parts), data)


@check("PLAT002", area="platform", title="GPUs the instance type should have")
def instance_gpus(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the GPUs that show on this machine (the driver's list; without a driver, the PCI bus)
    against the GPUs its cloud instance type has (`gpudoctor kb instances TYPE`): how many, and which model.
    A missing GPU is named: the PCI function the driver does not see, else the address the kernel log says
    fell off the bus (Xid 79).

    Why it matters: on 8-GPU instances a GPU that fell off the bus is common; the job then runs on 7 GPUs,
    fails its world size, or hangs in NCCL, while every remaining GPU looks healthy.

    How to fix: the fault is the host's, not the driver's: stop and start the instance (a reboot keeps the
    same host) so it starts on other hardware, and report it to the provider if the GPUs are still missing.
    """
    from gpudoctor.kb.cloud_instances import has_gpus

    cloud = facts.platform.cloud
    if cloud is None:
        return not_applicable("not a cloud instance gpudoctor recognises")
    if not cloud.instance_type:
        why = f" ({cloud.why_unknown})" if cloud.why_unknown else ""
        return not_applicable(f"{cloud.provider_name}: the instance type is not known{why}")
    row = expected_instance(facts)
    words = type_words(cloud)
    if row is None:
        if has_gpus(cloud.provider, cloud.instance_type) is False:
            return not_applicable(f"{words} is a type without GPUs (PCI001 says which types have them)")
        return not_applicable(f"{words} is not in gpudoctor's table of instance types (`gpudoctor kb instances`)")
    if row.gpu_count <= 0:
        return not_applicable(f"{words} is a type without GPUs (PCI001 says which types have them)")
    seen = _visible(facts, row)
    if seen is None:
        return not_applicable(
            f"{words} has {row.expected}; which GPUs show is not known (nothing that lists them was read)"
        )
    whole = row.gpu_count >= 1
    expected = int(row.gpu_count) if whole else 1
    data: dict[str, Any] = {
        "instance_type": cloud.instance_type,
        "expected_count": row.gpu_count,
        "expected_model": row.gpu_model,
        "visible": len(seen.names),
        "visible_from": seen.where,
        "missing": [],
    }
    findings: list[Finding] = []
    if len(seen.names) < expected:
        text, missing, fell = _missing_words(facts, seen, expected)
        data["missing"] = missing
        shown = f"{len(seen.names)} {'is' if len(seen.names) == 1 else 'are'} visible"
        if facts.container.in_container and missing and not fell:
            # A container is given some of the host's GPUs (--gpus 1, a pod's nvidia.com/gpu limit); the others
            # still show on the bus.  Not a host fault unless the kernel log says one fell off.
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{words} has {row.expected}; {shown} in this {facts.container.runtime} container: {text}. "
                    "It was given fewer GPUs than the host has, or the host lost them",
                    Fix(
                        "Start the container with the GPUs it should have (`docker run --gpus all ...`, the pod's "
                        "nvidia.com/gpu limit); `nvidia-smi` on the host shows whether the host sees them all."
                    ),
                    _EVIDENCE,
                )
            )
        else:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{words} has {row.expected}; {shown}: {text}",
                    stop_start_fix(cloud, "A GPU the instance type has but the machine does not show"),
                    (*_EVIDENCE, Ev.NVML, Ev.PCI_DEVICES, Ev.KERNEL_LOG),
                    cause="gpu-fallen-off-bus" if fell else "",
                )
            )
    elif whole and len(seen.names) > expected:
        findings.append(
            Finding(
                Severity.WARNING,
                f"{words} has {row.expected}, but {len(seen.names)} show ({seen.where}): the instance type "
                "recorded is not this machine's, or the snapshot mixes two machines",
                None,
                _EVIDENCE,
            )
        )
    others = sorted({n for n in seen.names if n and model_matches(n, row.gpu_model) is False})
    if others:
        findings.append(
            Finding(
                Severity.WARNING,
                f"{words} has {row.gpu_model}, but {seen.where} names {', '.join(others)}: the instance type "
                "recorded is not this machine's, or the snapshot mixes two machines",
                None,
                _EVIDENCE,
            )
        )
    worst = next((f for f in findings if f.severity is Severity.PROBLEM), None) or (findings[0] if findings else None)
    if worst is not None:
        return Outcome(worst.message, findings, data)
    if not whole:
        return ok(f"{words}: its share of one GPU is visible, as the type has ({row.expected})", data)
    return ok(f"{words}: {counted(len(seen.names), 'GPU')} visible, as the type has ({row.expected})", data)
