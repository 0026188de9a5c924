"""Hardware health checks: the signals NVIDIA's DCGM level-1 diagnostic reads, plus the kernel log's Xid events.

Each reads ``facts.gpu_health`` (NVML first, then ``nvidia-smi -q -x``) or ``facts.kernel_log``; the limits and
the meaning of each Xid come from the knowledge base, with their sources.
"""

from __future__ import annotations

from collections import defaultdict

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, judged, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.kernel_log import XidEvent
from gpudoctor.facts.sources_state import Why
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks import _health as h


@check("HEALTH001", area="health", title="Every GPU answers (none lost, none waiting for a reset)")
def gpu_answers(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: GPUs the driver has lost (NVML "GPU is lost", nvidia-smi "ERR!" / "Unable to determine
    the device handle ... GPU is lost", the kernel log's "GPU has fallen off the bus" / Xid 79), and GPUs whose
    driver asks for a reset (NVML "reset required", `gpu_reset_status` in `nvidia-smi -q`).

    Why it matters: a lost GPU is gone until the machine is rebooted or the GPU reset; every job placed on it
    fails, often after hanging. A GPU that fell off the bus once is likely to do it again under load.

    How to fix: reboot (or `sudo nvidia-smi -r -i N` when nothing uses it). If it recurs: check the power
    cables and supply, risers, cooling and the slot, update the system BIOS; a GPU that keeps falling off the
    bus is a hardware fault for the vendor (RMA).
    """
    health = facts.gpu_health
    log = facts.kernel_log
    fell_off = log.fallen_off_bus or any(event.code == 79 for event in log.xid_events)
    if not health and not fell_off:
        return not_applicable(_not_reported(facts, "no GPU health reported", "whether every GPU answers is"))
    findings: list[Finding] = []
    for gpu in health:
        label = h.label(gpu)
        if gpu.lost:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{label} is lost: {gpu.lost_detail or 'the driver cannot reach it'}",
                    h.reboot_fix(gpu),
                    h.EVIDENCE,
                    cause="gpu-fallen-off-bus",
                )
            )
        elif gpu.reset_required:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{label} needs a reset before it can be used again",
                    h.reset_fix(gpu),
                    h.EVIDENCE,
                    cause="gpu-hardware-error",
                )
            )
        elif gpu.drain_and_reset_recommended:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{label}: the driver recommends draining its work and resetting it",
                    h.reset_fix(gpu),
                    h.EVIDENCE,
                    cause="gpu-hardware-error",
                )
            )
    if fell_off:
        where = sorted({event.pci for event in log.xid_events if event.code == 79 and event.pci})
        findings.append(
            Finding(
                Severity.PROBLEM,
                "the kernel log says a GPU has fallen off the bus"
                + (f" ({', '.join(where)})" if where else "")
                + " since boot",
                h.reboot_fix(None),
                (Ev.KERNEL_LOG,),
                cause="gpu-fallen-off-bus",
            )
        )
    data = {
        "gpus": [
            {"index": g.index, "bus_id": g.bus_id, "lost": g.lost, "reset_required": g.reset_required} for g in health
        ],
        "fallen_off_bus_in_log": fell_off,
    }
    if findings:
        return Outcome(findings[0].message, findings, data)
    return ok(f"{counted(len(health), 'GPU')} answer", data)


# The sources of per-GPU health: NVML, then nvidia-smi's full query (XML or text).
_HEALTH_SOURCES = (Ev.NVML, Ev.NVIDIA_SMI_XML)


def _not_reported(facts: Facts, reported: str, what: str) -> str:
    """Why a health signal is missing: ``reported`` when a source that would show it answered (the GPUs do not
    report it), else that ``what`` is not known because nothing that would show it was collected."""
    if any(facts.source(key).answered for key in _HEALTH_SOURCES):
        return reported
    return f"{what} not known: neither NVML nor `nvidia-smi -q` was collected (`nvidia-smi -q` shows it)"


@check("HEALTH002", area="health", title="Persistence mode on datacenter GPUs")
def persistence(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: persistence mode on each datacenter GPU (Tesla / data-center brands, A100, H100, ...)
    on Linux.

    Why it matters: without it the driver tears the GPU state down whenever no process holds it, so every job
    pays a slow initialisation (seconds on multi-GPU machines) and settings such as clocks and ECC counters reset.
    NVIDIA recommends the persistence daemon on datacenter GPUs; DCGM warns when it is off.

    How to fix: `sudo systemctl enable --now nvidia-persistenced` (the supported way), or
    `sudo nvidia-smi -pm 1` (lost at reboot).
    """
    health = [g for g in facts.gpu_health if g.persistence_mode is not None]
    if not health:
        return not_applicable(
            _not_reported(facts, "persistence mode not reported (Windows, or not collected)", "persistence mode")
        )
    datacenter = [g for g in health if h.datacenter(g)]
    off = [g for g in datacenter if g.persistence_mode is False]
    data = {
        "persistence": {str(g.index): g.persistence_mode for g in health},
        "datacenter": [g.index for g in datacenter],
    }
    if off:
        return Outcome(
            f"persistence mode off on {counted(len(off), 'datacenter GPU')}: {h.labels(off)}",
            [
                Finding(
                    Severity.WARNING,
                    f"persistence mode is off on {h.labels(off)}: each job pays the "
                    "driver's initialisation and GPU settings reset when the GPU is idle",
                    Fix(
                        "Start NVIDIA's persistence daemon and keep it enabled.",
                        (
                            "sudo systemctl enable --now nvidia-persistenced",
                            "# or, until reboot: sudo nvidia-smi -pm 1",
                        ),
                        needs_root=True,
                        url="https://docs.nvidia.com/deploy/driver-persistence/",
                    ),
                    (Ev.NVML, Ev.NVIDIA_SMI_XML),
                )
            ],
            data,
        )
    on = sum(1 for g in health if g.persistence_mode)
    note = "" if datacenter else " (not a datacenter GPU: optional)"
    return ok(f"persistence mode on for {on} of {counted(len(health), 'GPU')}{note}", data)


@check("HEALTH003", area="health", title="ECC: enabled, no uncorrectable errors")
def ecc(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: ECC mode (current and pending) and ECC error counts, volatile (since the driver loaded)
    and aggregate (the GPU's lifetime), corrected and uncorrected.

    Why it matters: an uncorrectable (double-bit) error corrupts data or kills the job that hit it (Xid 48 /
    94 / 95); a GPU with volatile uncorrectable errors should be drained and reset. A pending ECC mode change
    takes effect only after a reboot. Corrected errors are handled by the hardware and are information.

    How to fix: drain the GPU and reset it (`sudo nvidia-smi -r -i N`); errors that come back, or a growing
    aggregate count, are a hardware fault for the vendor. Turn ECC back on with `sudo nvidia-smi -i N -e 1`
    and reboot.
    """
    health = [g for g in facts.gpu_health if g.ecc_enabled is not None or h.ecc_counts_known(g)]
    if not health:
        return not_applicable(_not_reported(facts, "ECC not supported or not reported on these GPUs", "ECC state"))
    findings = []
    for gpu in health:
        findings += h.ecc_findings(gpu)
    data = {str(g.index): {"enabled": g.ecc_enabled, "pending": g.ecc_pending, **vars(g.ecc)} for g in health}
    enabled = sum(1 for g in health if g.ecc_enabled)
    summary = f"ECC on for {enabled} of {counted(len(health), 'GPU')}"
    return judged(findings, data, summary + ", no uncorrectable errors")


@check("HEALTH004", area="health", title="Memory: no retired pages or row remaps pending or failed")
def memory_repairs(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: page retirement (Kepler to Volta: pages retired for single- and double-bit errors,
    retirements pending) and row remapping (Ampere and newer: rows remapped, a remap pending, a remap that
    failed), the counters DCGM's level-1 memory check reads.

    Why it matters: a pending retirement or remap takes effect only at the next GPU reset; until then the bad
    memory is still in use. Past the limit of retired pages, or with a failed remap, the GPU has run out of
    spare memory and must be replaced.

    How to fix: drain the GPU and reset it (`sudo nvidia-smi -r -i N`) or reboot to apply pending repairs; a
    failed remap or retired pages at the limit mean RMA (collect `nvidia-bug-report.sh`).
    """
    health = [g for g in facts.gpu_health if h.memory_repair_known(g)]
    if not health:
        return not_applicable(
            _not_reported(
                facts,
                "page retirement and row remapping not reported (not supported on these GPUs)",
                "page retirement and row remapping",
            )
        )
    findings = []
    for gpu in health:
        findings += h.memory_findings(gpu)
    data = {
        str(g.index): {
            "retired_sbe": g.retired_pages_sbe,
            "retired_dbe": g.retired_pages_dbe,
            "retired_pending": g.retired_pages_pending,
            "remapped_correctable": g.remapped_rows_correctable,
            "remapped_uncorrectable": g.remapped_rows_uncorrectable,
            "remap_pending": g.remapped_rows_pending,
            "remap_failure": g.remapped_rows_failure,
        }
        for g in health
    }
    return judged(findings, data, f"no memory repair pending or failed on {counted(len(health), 'GPU')}")


@check("HEALTH005", area="health", title="InfoROM is valid")
def inforom(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: NVML's validation of each GPU's InfoROM (the on-board store of ECC counts, retired pages
    and configuration).

    Why it matters: a corrupted InfoROM loses the GPU's error history and page-retirement list; the driver may
    refuse features that depend on it. DCGM's level-1 check fails the GPU for it.

    How to fix: update the GPU's firmware/InfoROM through the vendor; if it stays corrupt, RMA the GPU.
    """
    health = [g for g in facts.gpu_health if g.inforom_valid is not None]
    if not health:
        return not_applicable(_not_reported(facts, "InfoROM validity not reported (needs NVML)", "InfoROM validity"))
    bad = [g for g in health if g.inforom_valid is False]
    data = {
        str(g.index): {"valid": g.inforom_valid, "error": g.inforom_error, "image": g.inforom_image} for g in health
    }
    if bad:
        return Outcome(
            f"InfoROM invalid on {h.labels(bad)}",
            [
                Finding(
                    Severity.PROBLEM,
                    f"{h.label(g)}: InfoROM invalid ({g.inforom_error or 'corrupted'})",
                    Fix(
                        "Ask the system vendor for an InfoROM/firmware update; if it stays corrupt, "
                        "RMA the GPU. Keep `nvidia-bug-report.sh` output for them.",
                        ("sudo nvidia-bug-report.sh",),
                        needs_root=True,
                    ),
                    (Ev.NVML,),
                    cause="gpu-hardware-error",
                )
                for g in bad
            ],
            data,
        )
    return ok(f"InfoROM valid on {counted(len(health), 'GPU')}", data)


@check("HEALTH006", area="health", title="No hardware slowdown, thermal or power throttling")
def clocks(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the clock-event ("throttle") reasons active on each GPU (hardware slowdown, thermal
    slowdown, power brake, software thermal, power cap), its temperature against its slowdown threshold, and a
    power limit set below the board's default.

    Why it matters: a GPU held back by its hardware runs far below its rating with no error: a failing fan or
    blocked airflow (thermal), an external power-brake signal or a weak supply (power brake), or an
    administrator's lower power limit. Hardware slowdown is also what DCGM reports as a clocks violation.

    How to fix: check cooling (fans, airflow, ambient temperature) and power (cables, supply); raise a lowered
    power limit with `sudo nvidia-smi -i N -pl <watts>`; for HW slowdown with normal temperatures, check the
    power supply and the board's power-brake wiring.
    """
    health = [g for g in facts.gpu_health if g.clock_reasons_active or g.temperature_c is not None]
    states = {s.bus_id: s for s in facts.gpu_states if s.bus_id}
    if not health and not states:
        return not_applicable(
            _not_reported(facts, "no clock reasons or temperatures reported", "clock reasons and temperatures")
        )
    findings = []
    for gpu in health:
        findings += h.clock_findings(gpu)
    for state in states.values():
        if state.power_capped:
            findings.append(
                Finding(
                    Severity.INFO,
                    f"GPU {state.index if state.index is not None else state.bus_id}: "
                    f"power limit {state.power_limit_w:g} W, below the default "
                    f"{state.default_power_limit_w:g} W",
                    Fix(
                        "Restore the default power limit if the lower one is not intended.",
                        (
                            f"sudo nvidia-smi -i {state.index if state.index is not None else 0} "
                            f"-pl {state.default_power_limit_w:g}",
                        ),
                        needs_root=True,
                    ),
                )
            )
    data = {
        str(g.index): {
            "reasons": g.clock_reasons_active,
            "temperature_c": g.temperature_c,
            "slowdown_temp_c": g.slowdown_temp_c,
            "shutdown_temp_c": g.shutdown_temp_c,
        }
        for g in health
    }
    return judged(findings, data, f"no GPU held back by heat or power ({counted(len(health) or len(states), 'GPU')})")


@check("HEALTH007", area="health", title="Xid errors in the kernel log, by meaning")
def xid_events(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the NVIDIA driver's Xid reports in the kernel log since boot, each named by its meaning
    from NVIDIA's Xid catalogue (e.g. 79: fell off the bus; 48: double-bit ECC error; 31: GPU memory page
    fault; 74: NVLink error; 119/120: GSP firmware errors), grouped by GPU and code.

    Why it matters: Xids are the driver's record of what went wrong. Some are the application's fault (13, 31,
    43: a bad kernel or memory access), some mean the GPU must be reset or replaced (48, 63/64, 79, 92-95, 119,
    120). The same code many times on one GPU is a pattern, not an accident.

    How to fix: follow the action for each code (the knowledge base's, from NVIDIA's catalogue):
    `gpudoctor kb xid` lists them. Read the lines with `sudo dmesg -T | grep -i xid`.
    """
    if not facts.kernel_log_readable and not facts.kernel_log.xid_events:
        missing = facts.missing(Ev.KERNEL_LOG)
        if missing is not None and missing.why is Why.NOT_COLLECTED:
            return not_applicable(
                "Xid errors are not known: the kernel log was not collected (`sudo dmesg | grep Xid`)"
            )
        return not_applicable("the kernel log was not readable (dmesg needs root on most systems)")
    events = facts.kernel_log.xid_events
    if not events:
        return ok("no Xid events in the kernel log since boot", {"events": 0})
    groups: dict[tuple[int, str], list[XidEvent]] = defaultdict(list)
    for event in events:
        groups[(event.code, event.pci or "?")].append(event)
    findings = [h.xid_finding(code, pci, items) for (code, pci), items in sorted(groups.items())]
    data = {
        "events": len(events),
        "by_code": [
            {"code": code, "pci": pci, "count": len(items), "last": items[-1].message}
            for (code, pci), items in sorted(groups.items())
        ],
    }
    return judged(
        findings,
        data,
        f"{counted(len(events), 'Xid event')}: "
        + ", ".join(f"{code}×{len(items)}" for (code, _), items in sorted(groups.items())),
    )
