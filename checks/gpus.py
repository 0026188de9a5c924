"""GPU inventory checks: what the driver sees, and modes that stop CUDA programs."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, problem, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK
from gpudoctor.facts.model import GpuInfo
from gpudoctor.results import Outcome, gpu_record


def _memory(gpu: GpuInfo) -> str:
    return f"{gpu.memory_total_mib / 1024:.0f} GiB" if gpu.memory_total_mib else "memory unknown"


@check("GPU001", area="gpus", title="GPUs the driver sees")
def inventory(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the GPUs the driver reports (NVML, then nvidia-smi) with name, bus id, memory,
    compute capability and the highest CUDA version the driver supports; and that every NVIDIA GPU on
    the PCI bus is among them.

    A driver that lists no GPU ("No devices were found") is a problem where another source shows one, and a
    warning where nothing says whether one is on the bus.

    Why it matters: a GPU on the bus that the driver does not list is unusable (a failed initialisation,
    a GPU fallen off the bus, insufficient power, firmware settings such as Above-4G decoding / Resizable
    BAR). The compute capability decides which framework builds can run on it.

    How to fix: for a missing GPU, read the kernel log (`sudo dmesg | grep NVRM`) for RmInitAdapter
    failures or Xid errors, reseat it and check its power; enable Above 4G decoding in the BIOS.
    """
    gpus = facts.gpus
    driver = facts.driver
    records = [gpu_record(g, driver.cuda_max) for g in gpus]
    data: dict[str, object] = {
        "gpus": records,
        "cuda_driver_max": driver.cuda_max,
        "cuda_driver_max_source": driver.cuda_max_source,
    }
    if not gpus:
        return _no_gpu_listed(facts, data)
    lines = []
    for gpu in gpus:
        capability = f"compute {gpu.compute_capability}" if gpu.compute_capability else "compute capability unknown"
        lines.append(f"GPU {gpu.index}: {gpu.name or 'unknown'} ({_memory(gpu)}, {capability})")
    cuda = f"; driver supports CUDA ≤ {driver.cuda_max}" if driver.cuda_max else ""
    summary = f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}: " + "; ".join(lines) + cuda
    findings = []
    on_bus = {d.address for d in facts.pci_gpus if d.address != UNPLACED_LSPCI_BLOCK}
    seen = {g.bus_id for g in gpus if g.bus_id}
    missing = sorted(on_bus - seen) if seen else []
    if missing:
        findings.append(
            Finding(
                Severity.PROBLEM,
                f"{_count(len(missing), 'NVIDIA GPU')} on the bus {'is' if len(missing) == 1 else 'are'} not visible "
                f"to the driver: {', '.join(missing)}",
                Fix(
                    "Read the kernel log for the reason, reseat the card and check its power; "
                    "enable Above 4G decoding / Resizable BAR in the BIOS.",
                    ("sudo dmesg | grep -E 'NVRM|Xid'",),
                    needs_root=True,
                ),
                (Ev.PCI_DEVICES, Ev.NVML, Ev.NVIDIA_SMI_XML),
                cause="gpu-init-failed" if facts.kernel_log.rm_init_failed else "driver-no-devices",
                other_causes=("gpu-init-failed", "driver-unsupported-gpu", "gpu-fallen-off-bus"),
            )
        )
    if driver.cuda_max_source == "knowledge base":
        findings.append(
            Finding(
                Severity.INFO,
                f"highest CUDA version ({driver.cuda_max}) taken from the knowledge "
                "base for this driver version; the evidence did not report it",
            )
        )
    for gpu in gpus:
        if gpu.compute_capability_source == "knowledge base":
            findings.append(
                Finding(
                    Severity.INFO,
                    f"GPU {gpu.index}: compute capability {gpu.compute_capability} from the knowledge base (by name)",
                )
            )
    return Outcome(summary, findings, data)


def _no_gpu_listed(facts: Facts, data: dict[str, object]) -> Outcome:
    """GPU001 when the driver's inventory lists no GPU: none listed, the list not collected, or GPUs only others see."""
    census = facts.gpu_census
    fix = Fix(
        "Read the kernel log for the reason the driver skipped the GPU (RmInitAdapter, an unsupported GPU, "
        "nouveau); reseat the card and check its power; enable Above 4G decoding / Resizable BAR in the BIOS.",
        ("sudo dmesg | grep -E 'NVRM|Xid'", "lspci -nnk -d 10de:"),
        needs_root=True,
    )
    if census.driver_listed:
        evidence = (Ev.NVML, Ev.NVIDIA_SMI, Ev.NVIDIA_SMI_XML)
        message = 'the driver is loaded but lists no GPU (nvidia-smi: "No devices were found")'
        if census.none_on_bus:
            return not_applicable("the driver reports no GPU, and there is none on the PCI bus", data)
        if census.count:
            seen = ", ".join(census.shown_by)
            return problem(
                f"{message}, though {seen} shows {census.count}",
                fix,
                evidence,
                data,
                cause="gpu-init-failed" if facts.kernel_log.rm_init_failed else "driver-no-devices",
            )
        return warning(
            f"{message}; whether a GPU is on the PCI bus is not known (`lspci -nn | grep -i nvidia` settles it)",
            fix,
            evidence,
            data,
            cause="driver-no-devices",
        )
    if census.count:
        return not_applicable(
            f"the driver's GPU list was not collected (`nvidia-smi -L` prints it); {', '.join(census.shown_by)} "
            f"shows {census.count} GPU{'s' if census.count != 1 else ''}",
            data,
        )
    if census.none_on_bus:
        return not_applicable("no GPU: none on the PCI bus", data)
    return not_applicable("the driver's GPU list was not collected (`nvidia-smi -L` prints it)", data)


@check("GPU002", area="gpus", title="Compute mode allows CUDA programs")
def compute_mode(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: each GPU's compute mode (Default, Exclusive_Process, Prohibited), and in an exclusive
    mode whether a process already holds the GPU.

    Why it matters: Prohibited refuses every CUDA context; Exclusive_Process allows one process at a
    time, so a second program fails with "all CUDA-capable devices are busy or unavailable" (cudaError 46).

    How to fix: `sudo nvidia-smi -i <index> -c DEFAULT` (an administrator may have set it on purpose on
    shared nodes).
    """
    gpus = [g for g in facts.gpus if g.compute_mode]
    if not gpus:
        return not_applicable("no compute mode reported")
    findings = []
    for gpu in gpus:
        mode = (gpu.compute_mode or "").replace(" ", "_")
        fix = Fix(
            "Set the compute mode back to Default (shared).",
            (f"sudo nvidia-smi -i {gpu.index} -c DEFAULT",),
            needs_root=True,
        )
        if mode.lower() == "prohibited":
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"GPU {gpu.index} is in Prohibited compute mode: no CUDA program may use it",
                    fix,
                    (Ev.NVML, Ev.NVIDIA_SMI_XML),
                    cause="compute-mode-exclusive",
                )
            )
        elif mode.lower().startswith("exclusive"):
            holders = _compute_processes(facts, gpu)
            if holders:
                findings.append(
                    Finding(
                        Severity.PROBLEM,
                        f"GPU {gpu.index} is in {mode} mode and already held by "
                        f"{holders}: a new CUDA process fails with 'all CUDA-capable devices are "
                        "busy or unavailable'",
                        fix,
                        (Ev.NVML, Ev.NVIDIA_SMI_XML),
                        cause="compute-mode-exclusive",
                    )
                )
            else:
                findings.append(
                    Finding(
                        Severity.WARNING,
                        f"GPU {gpu.index} is in {mode} mode: one CUDA process at "
                        "a time; others fail with 'all CUDA-capable devices are busy or "
                        "unavailable'",
                        fix,
                        (Ev.NVML, Ev.NVIDIA_SMI_XML),
                        cause="compute-mode-exclusive",
                    )
                )
    modes = sorted({g.compute_mode for g in gpus if g.compute_mode})
    summary = "compute mode " + ", ".join(modes)
    return Outcome(summary, findings, {"modes": {g.index: g.compute_mode for g in gpus}})


def _compute_processes(facts: Facts, gpu: GpuInfo) -> str | None:
    """Who holds the GPU now, in words ("PID 4242 (python)"); None when nobody does or nobody said."""
    state = next((s for s in facts.gpu_states if s.bus_id and s.bus_id == gpu.bus_id), None)
    listed = [p for p in (state.processes if state else []) if p.type is None or "C" in p.type]
    if listed:
        return ", ".join(f"PID {p.pid} ({p.name or '?'})" for p in listed[:3]) + (
            " and more" if len(listed) > 3 else ""
        )
    health = next((h for h in facts.gpu_health if h.bus_id and h.bus_id == gpu.bus_id), None)
    if health is not None and health.compute_processes:
        return f"{health.compute_processes} CUDA process(es)"
    return None


def _mig_instances(facts: Facts, gpu: GpuInfo) -> int | None:
    health = next((h for h in facts.gpu_health if h.bus_id and h.bus_id == gpu.bus_id), None)
    if health is not None and health.mig_instances is not None:
        return health.mig_instances
    return len(gpu.mig_devices) if gpu.mig_devices else None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def mig_instances_text(gpu: GpuInfo, instances: int | None) -> str:
    """What the evidence says about a GPU's MIG instances, never a placeholder: '2 instances: 3g.40gb,
    1g.10gb'; where a source lists instances without their profiles (nvidia-smi -q -x does), their count,
    GPU instance IDs and memory, and that the profiles are not reported."""
    devices = gpu.mig_devices
    if not devices:
        if instances:
            return f"{_count(instances, 'instance')}; which profiles is not reported"
        return "no instance listed"
    named = [d.profile for d in devices if d.profile]
    parts = [_count(len(devices), "instance")]
    if named:
        counts: dict[str, int] = {}
        for profile in named:
            counts[profile] = counts.get(profile, 0) + 1
        parts[0] += ": " + ", ".join(p if n == 1 else f"{n}x {p}" for p, n in counts.items())
    unnamed = [d for d in devices if not d.profile]
    if unnamed:
        ids = sorted({d.gpu_instance_id for d in unnamed if d.gpu_instance_id is not None})
        sizes = sorted({d.memory_total_mib for d in unnamed if d.memory_total_mib is not None})
        known = []
        if ids:
            known.append("GPU instance ID" + ("s " if len(ids) > 1 else " ") + ", ".join(map(str, ids)))
        if sizes:
            known.append(" / ".join(f"{size} MiB" for size in sizes) + (" each" if len(unnamed) > 1 else ""))
        if named:
            missing = f"{len(unnamed)} without a reported profile"
        else:
            missing = "the profile is not reported" if len(unnamed) == 1 else "the profiles are not reported"
        parts.append("; ".join([*known, missing]))
    return "; ".join(parts)


@check("GPU003", area="gpus", title="MIG mode")
def mig_mode(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether Multi-Instance GPU (MIG) is enabled on each GPU, which MIG devices exist
    (none at all is a problem), and whether a MIG mode change is pending.

    Why it matters: with MIG on, CUDA sees MIG instances, not the whole GPU, and one process can use only
    one instance: `torch.cuda.device_count()` is 1 however many instances exist. A pending change takes
    effect only after a GPU reset.

    How to fix: select an instance with `CUDA_VISIBLE_DEVICES=MIG-<uuid>` (one process per instance);
    apply a pending mode change with `sudo nvidia-smi -i <index> -r` (no process may use the GPU).
    """
    gpus = [g for g in facts.gpus if g.mig_mode_current]
    if not gpus:
        return not_applicable("MIG not supported or not reported")
    findings = []
    enabled = [g for g in gpus if g.mig_mode_current == "Enabled"]
    for gpu in gpus:
        if gpu.mig_mode_pending and gpu.mig_mode_pending != gpu.mig_mode_current:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"GPU {gpu.index}: MIG mode change to {gpu.mig_mode_pending} is pending until the GPU is reset",
                    Fix(
                        "Reset the GPU (stop every process using it first).",
                        (f"sudo nvidia-smi -i {gpu.index} -r",),
                        needs_root=True,
                    ),
                )
            )
    for gpu in enabled:
        if _mig_instances(facts, gpu) == 0:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"GPU {gpu.index}: MIG is enabled but no MIG instance exists, so CUDA sees no device on it",
                    Fix(
                        "Create GPU and compute instances (list the profiles first), or turn MIG off.",
                        (
                            f"sudo nvidia-smi mig -i {gpu.index} -lgip",
                            f"sudo nvidia-smi mig -i {gpu.index} -cgi <profile ids> -C",
                            f"# or: sudo nvidia-smi -i {gpu.index} -mig 0 && sudo nvidia-smi -i {gpu.index} -r",
                        ),
                        needs_root=True,
                    ),
                    (Ev.NVML, Ev.NVIDIA_SMI_XML),
                    cause="mig-misconfigured",
                )
            )
            continue
        findings.append(
            Finding(
                Severity.INFO,
                f"GPU {gpu.index}: MIG enabled ({mig_instances_text(gpu, _mig_instances(facts, gpu))}); "
                "a CUDA process sees "
                "one MIG instance — pick it with CUDA_VISIBLE_DEVICES=MIG-<uuid> "
                "(see `nvidia-smi -L`)",
            )
        )
    summary = (
        f"MIG enabled on {len(enabled)} of {_count(len(gpus), 'GPU')}"
        if enabled
        else f"MIG disabled on {_count(len(gpus), 'GPU')}"
    )
    return Outcome(
        summary,
        findings,
        {"enabled": [g.index for g in enabled], "mig_devices": {g.index: len(g.mig_devices) for g in enabled}},
    )
