"""What the HEALTH checks share: GPU labels, the reset / reboot fixes, and the judgement of each signal."""

from __future__ import annotations

from gpudoctor.api import Finding, Fix, Severity
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.gpu_state import SLOWING_REASONS
from gpudoctor.facts.health_model import GpuHealth
from gpudoctor.facts.kernel_log import XidEvent
from gpudoctor.words import counted

EVIDENCE = (Ev.NVML, Ev.NVIDIA_SMI_XML, Ev.NVIDIA_SMI)
# Reasons that mean the hardware protects itself (heat, power delivery): worth a warning under any load.
HARDWARE_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")


def label(gpu: GpuHealth | None) -> str:
    if gpu is None:
        return "a GPU"
    where = f" ({gpu.bus_id})" if gpu.bus_id else ""
    return f"GPU {gpu.index}{where}" if gpu.index is not None else f"GPU {gpu.bus_id or '?'}"


def labels(gpus: list[GpuHealth]) -> str:
    return ", ".join(f"GPU {g.index}" if g.index is not None else f"GPU {g.bus_id or '?'}" for g in gpus)


def _index(gpu: GpuHealth | None) -> str:
    return str(gpu.index) if gpu is not None and gpu.index is not None else "N"


def reboot_fix(gpu: GpuHealth | None) -> Fix:
    return Fix(
        "Reboot (or reset the GPU when nothing uses it). If it recurs: check power cables and supply, "
        "risers, cooling and the slot, update the system BIOS; a GPU that keeps falling off the bus "
        "needs an RMA.",
        ("sudo reboot", f"# or: sudo nvidia-smi -r -i {_index(gpu)}", "sudo dmesg -T | grep -i xid"),
        needs_root=True,
    )


def reset_fix(gpu: GpuHealth | None) -> Fix:
    return Fix(
        "Stop (drain) the work on the GPU, then reset it; or reboot.",
        (
            f"nvidia-smi --query-compute-apps=pid,name --format=csv -i {_index(gpu)}",
            f"sudo nvidia-smi -r -i {_index(gpu)}",
        ),
        needs_root=True,
    )


def _rma_fix(gpu: GpuHealth) -> Fix:
    return Fix(
        "The GPU has run out of spare memory: take it out of service and ask the vendor for a "
        "replacement (RMA) with the bug report attached.",
        (f"# drain GPU {_index(gpu)} from the scheduler", "sudo nvidia-bug-report.sh"),
        needs_root=True,
        url="https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/",
    )


def datacenter(gpu: GpuHealth) -> bool:
    from gpudoctor.kb.health_limits import is_datacenter_brand

    return bool(is_datacenter_brand(gpu.brand, gpu.name))


# --------------------------------------------------------------------------- ECC


def ecc_counts_known(gpu: GpuHealth) -> bool:
    return any(value is not None for value in vars(gpu.ecc).values())


def ecc_findings(gpu: GpuHealth) -> list[Finding]:
    found = []
    counts = gpu.ecc
    name = label(gpu)
    if counts.volatile_uncorrected:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: {counted(counts.volatile_uncorrected, 'uncorrectable ECC error')} "
                "since the driver loaded — drain and reset it",
                reset_fix(gpu),
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    elif counts.aggregate_uncorrected:
        found.append(
            Finding(
                Severity.WARNING,
                f"{name}: {counted(counts.aggregate_uncorrected, 'uncorrectable ECC error')} "
                "in its lifetime (none since the driver loaded); watch for more",
                None,
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    if gpu.ecc_enabled is not None and gpu.ecc_pending is not None and gpu.ecc_enabled != gpu.ecc_pending:
        words = "on" if gpu.ecc_pending else "off"
        found.append(
            Finding(
                Severity.WARNING,
                f"{name}: ECC will be turned {words} at the next reboot (pending)",
                Fix("Reboot to apply the pending ECC mode.", ("sudo reboot",), needs_root=True),
                EVIDENCE,
            )
        )
    if gpu.ecc_enabled is False and datacenter(gpu):
        found.append(
            Finding(
                Severity.WARNING,
                f"{name}: ECC is off on a datacenter GPU: memory errors go "
                "undetected and page retirement / row remapping cannot work",
                Fix(
                    "Turn ECC on and reboot.",
                    (f"sudo nvidia-smi -i {_index(gpu)} -e 1", "sudo reboot"),
                    needs_root=True,
                ),
                EVIDENCE,
            )
        )
    corrected = counts.volatile_corrected or 0
    if corrected:
        found.append(
            Finding(
                Severity.INFO,
                f"{name}: {counted(corrected, 'corrected ECC error')} since the driver loaded (handled by the hardware)",
            )
        )
    return found


# --------------------------------------------------------------------------- retired pages, row remapping


def memory_repair_known(gpu: GpuHealth) -> bool:
    return any(
        value is not None
        for value in (
            gpu.retired_pages_sbe,
            gpu.retired_pages_dbe,
            gpu.retired_pages_pending,
            gpu.remapped_rows_correctable,
            gpu.remapped_rows_uncorrectable,
            gpu.remapped_rows_pending,
            gpu.remapped_rows_failure,
        )
    )


def memory_findings(gpu: GpuHealth) -> list[Finding]:
    from gpudoctor.kb.health_limits import retired_pages_limit

    found = []
    name = label(gpu)
    if gpu.remapped_rows_failure:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: a row remap failed — no spare rows left",
                _rma_fix(gpu),
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    if gpu.remapped_rows_pending:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: a row remap is pending; it takes effect at the next GPU "
                "reset, until then the faulty row is in use",
                reset_fix(gpu),
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    if gpu.retired_pages_pending:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: page retirement pending; it takes effect at the next GPU reset or reboot",
                reset_fix(gpu),
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    retired = (gpu.retired_pages_sbe or 0) + (gpu.retired_pages_dbe or 0)
    limit = retired_pages_limit()
    if limit and retired >= limit:
        found.append(
            Finding(
                Severity.PROBLEM,
                f"{name}: {retired} retired pages, at or past the limit of {limit}",
                _rma_fix(gpu),
                EVIDENCE,
                cause="gpu-hardware-error",
            )
        )
    elif retired:
        found.append(
            Finding(
                Severity.INFO,
                f"{name}: {counted(retired, 'retired page')} ({gpu.retired_pages_dbe or 0} for "
                f"double-bit errors); the limit is {limit}",
            )
        )
    if gpu.remapped_rows_uncorrectable:
        found.append(
            Finding(
                Severity.INFO,
                f"{name}: {counted(gpu.remapped_rows_uncorrectable, 'row')} remapped for uncorrectable errors (repaired)",
            )
        )
    return found


# --------------------------------------------------------------------------- clocks and temperature


def clock_findings(gpu: GpuHealth) -> list[Finding]:
    from gpudoctor.kb.health_limits import temperature_margin_c

    found = []
    name = label(gpu)
    hardware = [reason for reason in gpu.clock_reasons_active if reason in HARDWARE_REASONS]
    if hardware:
        found.append(
            Finding(
                Severity.WARNING,
                f"{name} is held back: " + "; ".join(SLOWING_REASONS[reason] for reason in hardware),
                Fix(
                    "Check cooling (fans, airflow, ambient temperature) and power delivery (cables, "
                    "supply); watch it under load.",
                    (f"nvidia-smi -i {_index(gpu)} -q -d PERFORMANCE,TEMPERATURE,POWER",),
                ),
                EVIDENCE,
                cause="gpu-thermal-power",
            )
        )
    if "sw_power_cap" in gpu.clock_reasons_active:
        found.append(
            Finding(Severity.INFO, f"{name}: at its power limit (software power cap) — normal under full load")
        )
    if gpu.temperature_c is not None and gpu.slowdown_temp_c:
        margin = gpu.slowdown_temp_c - gpu.temperature_c
        if margin <= 0:
            found.append(
                Finding(
                    Severity.WARNING,
                    f"{name}: {gpu.temperature_c} °C, at or above its slowdown threshold of {gpu.slowdown_temp_c} °C",
                    None,
                    EVIDENCE,
                    cause="gpu-thermal-power",
                )
            )
        elif margin <= temperature_margin_c():
            found.append(
                Finding(
                    Severity.WARNING,
                    f"{name}: {gpu.temperature_c} °C, within {margin} °C of its "
                    f"slowdown threshold ({gpu.slowdown_temp_c} °C)",
                    None,
                    EVIDENCE,
                    cause="gpu-thermal-power",
                )
            )
    return found


# --------------------------------------------------------------------------- Xid


def xid_finding(code: int, pci: str, events: list[XidEvent]) -> Finding:
    from gpudoctor.kb.xid import xid_info

    info = xid_info(code, gpu=pci if pci != "?" else None)
    where = f" on {pci}" if pci != "?" else ""
    times = f" ×{len(events)}" if len(events) > 1 else ""
    last = events[-1].message.strip().rstrip(".")
    if info is None:
        return Finding(
            Severity.WARNING,
            f"Xid {code}{where}{times}: not in the knowledge base ({last})",
            Fix("Look the code up in NVIDIA's Xid catalogue.", (), url="https://docs.nvidia.com/deploy/xid-errors/"),
            (Ev.KERNEL_LOG,),
        )
    severity = {"problem": Severity.PROBLEM, "warning": Severity.WARNING}.get(info.severity, Severity.INFO)
    commands = tuple(info.commands)
    said = f" ({last})" if last and last.lower() not in info.meaning.lower() else ""
    return Finding(
        severity,
        f"Xid {code}{where}{times}: {info.meaning}{said}",
        Fix(info.action, commands, needs_root=any(c.startswith("sudo") for c in commands)),
        (Ev.KERNEL_LOG,),
        cause=xid_cause(code, info.category) if severity is not Severity.INFO else "",
    )


# An Xid's category in the knowledge base -> the root cause it names (application and driver Xids name none:
# the program's own fault, or a driver state whose cause the Xid alone does not tell).
_XID_CATEGORY_CAUSES = {
    "memory": "gpu-hardware-error",
    "hardware": "gpu-hardware-error",
    "thermal": "gpu-thermal-power",
    "power": "gpu-thermal-power",
}


def xid_cause(code: int, category: str) -> str:
    """The causes-table id an Xid names ("" when it names none with certainty)."""
    if code == 79:  # fallen off the bus
        return "gpu-fallen-off-bus"
    return _XID_CATEGORY_CAUSES.get(category, "")
