"""Collection checks: every source answered in time (a hung nvidia-smi is itself a symptom)."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import MANIFEST
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor.words import counted

# Sources whose hang points at the GPU or driver itself, not at a slow helper program.
_DRIVER_SOURCES = (Ev.NVIDIA_SMI_XML, Ev.NVIDIA_SMI, Ev.NVIDIA_SMI_LIST, Ev.NVIDIA_SMI_TOPO, Ev.NVML)


@check("COL001", area="collection", title="Every source answered in time")
def sources_answered(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that no evidence command (nvidia-smi, the NVML query, lspci, ...) hung past the
    timeout (`--timeout`, 10 s by default) or crashed.

    Why it matters: nvidia-smi and NVML hang when the driver is stuck or a GPU is in a bad state (often
    after an Xid error); every CUDA program on the machine will hang the same way. gpudoctor stops such a
    command at the timeout and reports it here instead of hanging too.

    How to fix: look for Xid errors in the kernel log, stop the processes stuck on the GPU
    (`sudo fuser -v /dev/nvidia*`), and reset the GPU or reboot.
    """
    items = facts.source_runs
    if not items:
        return not_applicable("no evidence")
    timed_out = [i for i in items if i.timed_out]
    crashed = [i for i in items if i.killed_by_signal is not None]
    findings = []
    for item in timed_out:
        driver = item.key in _DRIVER_SOURCES
        command = item.command_words
        findings.append(
            Finding(
                Severity.PROBLEM if driver else Severity.WARNING,
                f"`{command}` did not answer within the timeout and was stopped"
                + (": the driver or a GPU is hung; CUDA programs will hang too" if driver else ""),
                Fix(
                    "Find the stuck processes and Xid errors, then reset the GPU or reboot.",
                    (
                        "sudo dmesg | grep -E 'NVRM|Xid'",
                        "sudo fuser -v /dev/nvidia*",
                        "sudo nvidia-smi -r  # or reboot",
                    ),
                    needs_root=True,
                )
                if driver
                else None,
                (item.name, MANIFEST),
                cause="gpu-in-use-or-hung" if driver else "",
            )
        )
    for item in crashed:
        findings.append(
            Finding(
                Severity.WARNING,
                f"`{item.command_words}` was killed by signal {item.killed_by_signal}",
                None,
                (item.name, MANIFEST),
            )
        )
    damaged = _damaged_xml(facts)
    if damaged is not None:
        findings.append(damaged)
    data = {
        "sources": len(items),
        "timed_out": [i.name for i in timed_out],
        "crashed": [i.name for i in crashed],
        "slowest": max(((i.duration_s or 0.0, i.name) for i in items), default=(0.0, None))[1],
    }
    if findings:
        summary = f"{counted(len(timed_out), 'source')} timed out, {len(crashed)} crashed"
        if damaged is not None:
            summary += ", the nvidia-smi -q -x output is damaged"
        return Outcome(summary, findings, data)
    return ok(f"{counted(len(items), 'source')} collected", data=data)


def _damaged_xml(facts: Facts) -> Finding | None:
    """The `nvidia-smi -q -x` output is there but damaged (cut off, garbled): its facts hold only what came
    before the damage, so the report must say so rather than read the silence as "nothing wrong"."""
    report = facts.smi_xml
    error = report.error if report is not None else None
    if error is None or error.kind not in ("truncated", "unparsable"):
        return None
    return Finding(
        Severity.WARNING,
        f"the `nvidia-smi -q -x` output is damaged ({error.message}): what the report says about the GPUs "
        "holds only what came before the damage",
        Fix("Collect it again on the machine.", ("nvidia-smi -q -x > nvidia-smi-q-x.xml",)),
        (Ev.NVIDIA_SMI_XML,),
    )
