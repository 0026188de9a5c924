"""AMD's facts, merged from every source that names the GPUs: amd-smi, rocm-smi, rocminfo, KFD, the PCI bus.

One :class:`AmdGpu` per GPU (or compute partition), joined on the PCI bus id where the sources have it (then
the KFD node, the unique id, and finally the order the tools list them in, where nothing contradicts).
A value comes from the first source that knows it: amd-smi, rocm-smi, rocminfo, KFD sysfs, the PCI bus.
A GPU only the bus shows (no driver, or one the tools do not list) keeps ``sources == ("pci",)``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Callable

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import Accelerator, Vendor
from gpudoctor.facts.amd_model import AmdDriver, AmdFacts, AmdGpu, AmdToolReport, KfdTopology, RocmInstall
from gpudoctor.facts.pci_accelerators import functions_of
from gpudoctor.facts.sources_state import Missing, Why

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

# PCI device ids of AMD integrated GPUs (APU graphics), each seen in a real capture:
# 1681 Rembrandt [Radeon 680M] (shared fixture G-amd lspci-nn-rembrandt…, isc30/ryzen-gpu-passthrough-proxmox#119);
# 1900 Phoenix3 (Radeon 780M; fixture G-amd amd-smi-static-text-radeon-780m…, Meliox/PVE-mods#348);
# 164e and 13c0, gfx1036, rocminfo "Memory Properties: APU" beside a discrete Radeon (ROCm/ROCm#4257, #6126);
# 1586, gfx1151 Strix Halo, rocminfo "Memory Properties: APU" (ROCm/ROCm#6027).
INTEGRATED_DEVICE_IDS = frozenset({"1681", "1900", "164e", "13c0", "1586"})

# Tools in the order their word counts: amd-smi first (AMD's current tool), rocm-smi, rocminfo.
# (tool, its evidence, the module that parses it): a parser is imported only when its tool said something, so a
# machine without AMD GPUs loads none of them.
_TOOLS: tuple[tuple[str, Ev, str, str], ...] = (
    ("amd-smi", Ev.AMD_SMI, "gpudoctor.facts.amd_smi", "parse_amd_smi"),
    ("amd-smi", Ev.AMD_SMI_LIST, "gpudoctor.facts.amd_smi", "parse_amd_smi"),
    ("rocm-smi", Ev.ROCM_SMI, "gpudoctor.facts.rocm_smi", "parse_rocm_smi"),
    ("rocminfo", Ev.ROCMINFO, "gpudoctor.facts.rocminfo", "parse_rocminfo"),
)
_KERNEL_RELEASE = re.compile(r"^\d+\.\d+\.\d+-\S+$")  # "5.15.0-164-generic", "7.0.14-17-pve"; dkms: "6.3.6"


def _unique_number(unique_id: str | None) -> int | None:
    if not unique_id or not re.fullmatch(r"0x[0-9a-f]+", unique_id):
        return None
    return int(unique_id, 16) or None


def _same_bus(a: AmdGpu, b: AmdGpu) -> bool:
    """Both on one PCI function; rocminfo's BDFID has no domain (read as 0000), so with it the domain is not compared."""
    if a.bus_id is None or b.bus_id is None:
        return False
    if a.bus_id == b.bus_id:
        return True
    domainless = a.sources == ("rocminfo",) or b.sources == ("rocminfo",)
    return domainless and a.bus_id.split(":", 1)[1] == b.bus_id.split(":", 1)[1]


def _contradicts(a: AmdGpu, b: AmdGpu) -> bool:
    """Two records that cannot be the same GPU: a known value differs."""
    if a.bus_id is not None and b.bus_id is not None and not _same_bus(a, b):
        return True
    for left, right in ((a.device_id, b.device_id), (a.kfd_node, b.kfd_node)):
        if left is not None and right is not None and left != right:
            return True
    ua, ub = _unique_number(a.unique_id), _unique_number(b.unique_id)
    return ua is not None and ub is not None and ua != ub


def _same_key(a: AmdGpu, b: AmdGpu) -> bool:
    if _contradicts(a, b):
        return False
    if _same_bus(a, b):
        return True
    if a.kfd_node is not None and a.kfd_node == b.kfd_node:
        return True
    ua = _unique_number(a.unique_id)
    return ua is not None and ua == _unique_number(b.unique_id)


def _combine(first: AmdGpu, second: AmdGpu) -> AmdGpu:
    """``first``'s values, with ``second`` filling what it lacks; both sources named."""
    values = {f.name: getattr(first, f.name) for f in fields(AmdGpu)}
    for f in fields(AmdGpu):
        if values[f.name] is None:
            values[f.name] = getattr(second, f.name)
    values["sources"] = tuple(dict.fromkeys(first.sources + second.sources))
    if first.sources == ("rocminfo",) and second.bus_id:  # rocminfo's bus id lacks the PCI domain
        values["bus_id"] = second.bus_id
    if second.integrated is True:  # any source that saw an iGPU is believed over one that could not tell
        values["integrated"] = True
    return AmdGpu(**values)


def _merge(merged: list[AmdGpu], incoming: tuple[AmdGpu, ...]) -> list[AmdGpu]:
    """Join one source's GPUs into those known so far: by key, then in listing order where nothing differs."""
    result = list(merged)
    taken: set[int] = set()
    pending: list[AmdGpu] = []
    for gpu in incoming:
        at = next((i for i, known in enumerate(result) if i not in taken and _same_key(known, gpu)), None)
        if at is None:
            pending.append(gpu)
        else:
            result[at] = _combine(result[at], gpu)
            taken.add(at)
    for gpu in pending:
        # A source without a shared key (rocm-smi's concise table has no bus ids) pairs in listing order.
        at = next(
            (
                i
                for i, known in enumerate(result)
                if i not in taken and i < len(merged) and not _contradicts(known, gpu) and not _keyed_apart(known, gpu)
            ),
            None,
        )
        if at is None:
            result.append(gpu)
        else:
            result[at] = _combine(result[at], gpu)
            taken.add(at)
    return result


def _keyed_apart(a: AmdGpu, b: AmdGpu) -> bool:
    """Both carry a bus id (they would have matched on it): different GPUs."""
    return a.bus_id is not None and b.bus_id is not None


def _kfd(facts: Facts) -> KfdTopology | None:
    data = facts.evidence.json(Ev.KFD_TOPOLOGY.value)
    if not isinstance(data, dict) or not data.get("nodes"):
        return None
    from gpudoctor.facts.kfd_topology import parse_kfd_topology

    return parse_kfd_topology(data)


def _kfd_gpus(topology: KfdTopology | None) -> tuple[AmdGpu, ...]:
    if topology is None:
        return ()
    return tuple(
        AmdGpu(
            name=node.name if node.name and ("AMD" in node.name or "Radeon" in node.name) else None,
            gfx_target=node.gfx_target,
            device_id=node.device_id,
            bus_id=node.bus_id,
            vram_mib=node.vram_bytes // 1048576 if node.vram_bytes else None,
            compute_units=node.compute_units,
            numa_node=node.numa_node,
            render_minor=node.render_minor,
            hive_id=node.hive_id,
            sources=("kfd",),
            kfd_node=node.node_id,
        )
        for node in topology.gpu_nodes
    )


def _pci_gpus(facts: Facts) -> tuple[AmdGpu, ...]:
    return tuple(
        AmdGpu(
            device_id=(device.device_id or "").lower().removeprefix("0x") or None,
            bus_id=device.address.lower(),
            numa_node=device.numa_node if device.numa_node is not None and device.numa_node >= 0 else None,
            sources=("pci",),
            kernel_driver=device.driver,
            pci_description=device.description,
        )
        for device in functions_of(facts.pci_accelerators, "amd")
    )


def _reports(facts: Facts) -> list[tuple[str, Ev, AmdToolReport]]:
    reports = []
    for tool, key, module, function in _TOOLS:
        text = facts.evidence.output(key.value)
        report = AmdToolReport()
        if text and text.strip():
            parse: Callable[[str | None], AmdToolReport] = getattr(importlib.import_module(module), function)
            report = parse(text)
        reports.append((tool, key, report))
    return reports


def _tool_states(
    facts: Facts, reports: list[tuple[str, Ev, AmdToolReport]]
) -> tuple[tuple[str, ...], dict[str, str], tuple[str, ...]]:
    """The tools that answered, each failing tool's words (verbatim), and the tools not installed."""
    answered: list[str] = []
    errors: dict[str, str] = {}
    absent: list[str] = []
    for tool, key, report in reports:
        missing = facts.missing(key)
        if report.gpus or (missing is None and report.error is None):
            answered.append(tool)
        elif report.error:
            errors.setdefault(tool, report.error)
        elif missing is not None and missing.why is Why.ABSENT and missing.error != "empty":
            absent.append(tool)
        elif missing is not None and missing.why is Why.FAILED:
            errors.setdefault(tool, missing.error or "failed")
    answered = list(dict.fromkeys(answered))
    return (
        tuple(answered),
        {tool: text for tool, text in errors.items() if tool not in answered},
        tuple(t for t in dict.fromkeys(absent) if t not in answered and t not in errors),
    )


def _kernel_release_of(version: str) -> str | None:
    from gpudoctor.facts.amd_smi import kernel_release_of

    return kernel_release_of(version)


def looks_like_kernel_release(version: str | None) -> bool:
    """An inbox amdgpu reports the kernel's release ("6.8.0-45-generic"); amdgpu-dkms its own ("6.3.6")."""
    return bool(version and (_KERNEL_RELEASE.match(version) or _kernel_release_of(version)))


def _driver(facts: Facts, reports: list[tuple[str, Ev, AmdToolReport]], gpus: list[AmdGpu]) -> AmdDriver:
    by_tool = {key: report for _, key, report in reports}
    modules = facts.loaded_modules
    rocminfo = by_tool[Ev.ROCMINFO]
    loaded: bool | None
    if modules is not None:
        loaded = "amdgpu" in modules
    elif rocminfo.module_loaded is not None:
        loaded = rocminfo.module_loaded
    else:
        loaded = True if any(set(g.sources) - {"pci", "kfd"} for g in gpus) else None
    amd_smi = by_tool[Ev.AMD_SMI]
    stated = (
        by_tool[Ev.ROCM_SMI].driver_version,
        amd_smi.driver_version,
        rocminfo.driver_version,
    )
    version = next((v for v in stated if v), None)
    inbox: bool | None = None
    if version:
        release = _kernel_release_of(version)
        inbox = looks_like_kernel_release(version) or (amd_smi.kernel_release == version)
        version = release or version
    nodes = facts.accel_nodes
    kfd_present: bool | None = None
    if nodes.collected:
        kfd_present = "/dev/kfd" in nodes.nodes
    elif facts.collected(Ev.KFD_TOPOLOGY) and _kfd(facts) is not None:
        kfd_present = True
    return AmdDriver(loaded=loaded, version=version, inbox=inbox, kfd_present=kfd_present)


def _rocm_install(facts: Facts, reports: list[tuple[str, Ev, AmdToolReport]]) -> RocmInstall:
    """``/opt/rocm*`` as the install scan read it (its own parser, where this tree has it), else a tool's word."""
    unread = facts.missing(Ev.ROCM_INSTALL)  # not collected, failed or absent: the evidence layer's verdict
    from gpudoctor.facts.rocm_install import parse_rocm_install

    parsed = parse_rocm_install(facts.evidence.json(Ev.ROCM_INSTALL.value))
    install = parsed if parsed.version or unread is None else replace(parsed, missing=unread)
    if install.version:
        return install
    stated = next(((tool, r.rocm_version) for tool, _, r in reports if r.rocm_version), None)
    if stated:
        return replace(install, version=stated[1], source=stated[0], missing=None)
    if install.missing is None:
        return replace(install, missing=Missing(Why.ABSENT, Ev.ROCM_INSTALL, "no ROCm version found"))
    return install


_GFX_SUFFIX = re.compile(r"\s*\((gfx[0-9a-f]+)(?::([^)]*))?\)\s*$", re.IGNORECASE)


def _framework_gpus(facts: Facts) -> tuple[AmdGpu, ...]:
    """The AMD GPUs a ROCm build of torch names: collect_env's "GPU models" lines ("AMD Instinct MI250X/MI250
    (gfx90a:sramecc+:xnack-)"), else the probe's devices with their gcnArchName."""
    report = facts.collect_env
    if report is not None and (report.rocm_build or report.gpu_gfx):
        gpus = []
        for position, line in enumerate(report.gpu_names):
            match = _GFX_SUFFIX.search(line)
            name = line[: match.start()].strip() if match else line.strip()
            gpus.append(
                AmdGpu(
                    index=position,
                    name=name or None,
                    gfx_target=match.group(1).lower() if match else None,
                    gfx_features=match.group(2) if match and match.group(2) else None,
                    sources=("collect_env",),
                )
            )
        return tuple(gpus)
    torch = facts.torch
    if not torch.hip:
        return ()
    found = []
    for device in torch.devices:
        target, _, features = (device.arch_name or "").partition(":")
        found.append(
            AmdGpu(
                index=device.index,
                name=device.name,
                gfx_target=target or None,
                gfx_features=features or None,
                vram_mib=device.memory_total_mib,
                sources=("torch",),
            )
        )
    return tuple(found)


def _mark_integrated(gpu: AmdGpu) -> AmdGpu:
    if gpu.integrated is None and gpu.device_id in INTEGRATED_DEVICE_IDS:
        return replace(gpu, integrated=True)
    return gpu


def amd_facts(facts: Facts) -> AmdFacts:
    """Everything AMD the evidence says: the GPUs from every source, the driver, ROCm and the tools."""
    reports = _reports(facts)
    topology = _kfd(facts)
    merged: list[AmdGpu] = []
    for _, _, report in reports:
        merged = _merge(merged, report.gpus)
    merged = _merge(merged, _kfd_gpus(topology))
    if not merged:
        # Only a framework names them: a pasted ROCm collect_env report, or the torch probe of a ROCm build.
        merged = _merge(merged, _framework_gpus(facts))
    merged = _merge(merged, _pci_gpus(facts))
    gpus = [_mark_integrated(gpu) for gpu in merged]
    tools, errors, absent = _tool_states(facts, reports)
    return AmdFacts(
        gpus=tuple(gpus),
        driver=_driver(facts, reports, gpus),
        rocm=_rocm_install(facts, reports),
        kfd=topology,
        tools=tools,
        tool_errors=errors,
        tools_absent=absent,
    )


def amd_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    """One AMD accelerator per GPU (or partition); ``driver_sees`` is False for a GPU only the bus shows."""
    result = []
    for gpu in facts.amd.gpus:
        sees = any(source != "pci" for source in gpu.sources)
        result.append(
            Accelerator(
                vendor=Vendor.AMD,
                index=gpu.index,
                name=gpu.name or gpu.pci_description,
                bus_id=gpu.bus_id,
                memory_total_mib=gpu.vram_mib,
                architecture=gpu.gfx_target,
                driver_sees=sees,
                source="driver" if sees else "pci",
                amd=gpu,
            )
        )
    return tuple(result)
