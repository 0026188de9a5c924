"""SMOKE004: host↔device bandwidth against the PCIe link the GPU is on, device memory against its spec."""

from __future__ import annotations

from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, worst_finding
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.predicates import gen_below_best, lanes_below_best
from gpudoctor.facts.smoke_model import BandwidthResult, SmokeFacts
from gpudoctor.results import Outcome
from gpudoctor_checks import _smoke, _smoke_instance
from gpudoctor_checks._smoke import BELOW_SPEC, device_words, number, one_line, percent
from gpudoctor_checks._smoke import finding as _finding
from gpudoctor_checks._smoke_causes import numa_hint


def _link_findings(
    facts: Facts, smoke: SmokeFacts, device_id: str, pinned: list[BandwidthResult], data: dict[str, Any]
) -> list[Finding]:
    found = _smoke.device(smoke, device_id)
    # The link as the evidence saw it; without it (only the plain table, say) the link the product is built
    # for, which is what it should have trained to.
    link = _smoke_instance.link_to_judge(facts, found)
    where = device_words(smoke, device_id)
    best = max(pinned, key=lambda r: r.gbps or 0.0)
    best_gbps = best.gbps or 0.0  # the rows passed in all measured a rate
    entry: dict[str, Any] = {"pinned_gbps": {r.direction: r.gbps for r in pinned}}
    data[device_id] = entry
    if link is None or link.rate_now is None:
        entry["link"] = None
        return [
            _finding(
                Severity.INFO,
                f"{where}: pinned {best.direction} {number(best_gbps, 'GB/s')}; the "
                "PCIe link it is on is not in the evidence, so there is nothing to compare",
            )
        ]
    entry["link"] = {
        "gen_now": link.gen_now,
        "width_now": link.width_now,
        "gen_max": link.gen_max,
        "width_max": link.width_max,
        "source": link.source,
        "rate_now_gbps": link.rate_now,
        "rate_max_gbps": link.rate_max,
    }
    findings: list[Finding] = []
    reference, link_words = link.rate_now, link.words()
    slower_gen = gen_below_best(link.gen_now, link.gen_max)
    if slower_gen and best_gbps > 1.1 * link.rate_now and link.rate_at_full_speed:
        # Faster than the link as read allows: it was read idle, at a lowered speed, and trained up under load.
        reference, link_words = link.rate_at_full_speed, link.words(link.gen_max, link.width_now)
        findings.append(
            _finding(
                Severity.INFO,
                (
                    f"{where}: the link showed {link.words()} when the evidence was read, slowed down while idle; under load "
                    f"it ran faster ({number(best_gbps, 'GB/s')} is more than {link.words()} carries), so it is judged as "
                    f"{link_words}"
                ),
            )
        )
    entry["judged_against_gbps"] = reference
    ratio = best_gbps / reference
    entry["fraction"] = round(ratio, 3)
    shown = ", ".join(f"{r.direction} {number(r.gbps, 'GB/s')}" for r in pinned)
    index = _smoke.smi_index(facts, found)
    flag = f" -i {index}" if index is not None else ""
    query = (
        "nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
        "pcie.link.width.max --format=csv"
    )
    narrow = lanes_below_best(link.width_now, link.width_max)
    stuck = slower_gen and reference == link.rate_now
    full = link.rate_max
    if ratio < BELOW_SPEC or ((narrow or stuck) and full and best_gbps < BELOW_SPEC * full):
        causes = []
        commands = [query, f"nvidia-smi -q -d PCIE{flag}"]
        if narrow:
            causes.append(
                f"the link trained down to x{link.width_now} of its x{link.width_max}: a card not seated "
                "fully, a riser or a slot wired with fewer lanes"
            )
        if stuck:
            causes.append(
                f"the link runs at Gen{link.gen_now} of its Gen{link.gen_max} and stayed there under load "
                "(GPUs slow an idle link, but a transfer should bring it to full speed): a riser or "
                "cable, or the slot's PCIe speed set in the BIOS"
            )
        hint, numactl = numa_hint(facts, found)
        if hint:
            causes.append(hint)
            if numactl:
                commands.append(numactl)
        if not causes:
            causes.append(
                "something else shares the link or the host memory (other transfers, an IOMMU in "
                "translation mode, a VM)"
            )
        if ratio < BELOW_SPEC:
            message = (
                f"{where}: pinned host↔device bandwidth {shown} is {percent(best_gbps, reference)} of the "
                f"{link_words} link ({number(reference, 'GB/s')} per direction)"
            )
        else:
            message = (
                f"{where}: pinned host↔device bandwidth {shown} fits the {link_words} link it is on, but "
                f"the GPU and slot can do {link.words(link.gen_max, link.width_max)} "
                f"({number(full, 'GB/s')})"
            )
        message += ". Likely: " + "; ".join(causes)
        if link.note:
            message += f" ({link.note})"
        fix = Fix(
            "Reseat the card in a full x16 slot (no riser), set the slot to its full PCIe generation in the "
            "BIOS, and keep the work on the GPU's NUMA node; then check the link under load.",
            tuple(commands),
        )
        findings.insert(0, _finding(Severity.WARNING, message, fix))
        entry["causes"] = causes
    else:
        built = (
            "; the link as trained is not in the evidence, so this is the link the product is built for"
            if link.source == "spec sheet"
            else f"; {link.note}"
            if link.note
            else ""
        )
        findings.insert(
            0,
            _finding(
                Severity.INFO,
                f"{where}: pinned {shown} = {percent(best_gbps, reference)} of "
                f"the {link_words} link ({number(reference, 'GB/s')}){built}",
            ),
        )
    return findings


@check("SMOKE004", area="smoke", title="Host↔device and device memory bandwidth match the link and the spec")
def bandwidth_vs_link(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: pinned host→device and device→host copy bandwidth against the theoretical rate of
    the PCIe link the GPU is on (generation × width from nvidia-smi/NVML, else sysfs; `gpudoctor kb pcie`),
    and device-memory copy bandwidth against the spec sheet. Below half of the link is a warning naming the
    cause: a link trained down in width (x8 of x16), a link stuck at a lower generation under load, a
    NUMA node away from the GPU. GPUs lower their link speed while idle, so a link read at idle below its
    maximum is judged at full speed when the transfer proves it trains up.

    Why it matters: every batch crosses this link. A card on a riser at Gen1, a x16 card in a x4 slot, or
    pinned buffers on the far NUMA node make data loading the bottleneck of an otherwise healthy GPU.

    How to fix: reseat the card in a full-width slot without a riser, set the slot's PCIe generation in
    the BIOS (Auto/Gen4/Gen5), check `nvidia-smi -q -d PCIE` while the GPU is busy; bind the job to the
    GPU's NUMA node (`numactl --cpunodebind=N --membind=N`).
    """
    smoke = facts.smoke
    skipped = _smoke.no_measurements(smoke, "bandwidth")
    if skipped is not None:
        return skipped
    accelerators = _smoke.accelerator_ids(smoke)
    if not accelerators:
        return not_applicable("no accelerator: host↔device bandwidth does not apply to a CPU-only run")
    rows = [r for r in smoke.bandwidth if r.device in accelerators]
    if not any(r.gbps is not None or r.error for r in rows):
        return not_applicable(f"no bandwidth was measured{_smoke.stopped_note(smoke)}")
    data: dict[str, Any] = {}
    findings: list[Finding] = []
    for row in rows:
        if row.error:
            message = (
                f"{row.direction} copy ({row.memory}) on {device_words(smoke, row.device)} failed: "
                f'"{one_line(row.error)}"'
            )
            findings.append(
                _finding(
                    Severity.PROBLEM,
                    message,
                    Fix(
                        "The copy error is the driver's; see the kernel log for Xid errors.",
                        ("sudo dmesg | grep -i -E 'NVRM|Xid'",),
                    ),
                )
            )
    for device_id in accelerators:
        found = _smoke.device(smoke, device_id)
        pinned = [
            r
            for r in rows
            if r.device == device_id and r.memory == "pinned" and r.direction in ("h2d", "d2h") and r.gbps
        ]
        if pinned:
            findings.extend(_link_findings(facts, smoke, device_id, pinned, data))
        pageable = [r for r in rows if r.device == device_id and r.memory == "pageable" and r.gbps]
        if pinned and pageable:
            data.setdefault(device_id, {})["pageable_gbps"] = {r.direction: r.gbps for r in pageable}
        d2d = next((r for r in rows if r.device == device_id and r.direction == "d2d" and r.gbps), None)
        spec = _smoke.spec_for(facts, found)
        if d2d is not None and d2d.gbps is not None and spec is not None and spec.memory_bandwidth_gbs:
            fraction = d2d.gbps / spec.memory_bandwidth_gbs
            data.setdefault(device_id, {}).update({"d2d_gbps": d2d.gbps, "memory_spec_gbps": spec.memory_bandwidth_gbs})
            # A device copy reads and writes every byte; counted once it shows 35-50% of the memory's rate.
            if fraction < 0.25:
                findings.append(
                    _finding(
                        Severity.WARNING,
                        (
                            f"{device_words(smoke, device_id)}: device memory copy {number(d2d.gbps, 'GB/s')} is "
                            f"{percent(d2d.gbps, spec.memory_bandwidth_gbs)} of the {spec.memory_bandwidth_gbs:g} GB/s of "
                            f"its memory ({spec.name}); a copy reads and writes each byte, but even so this is low: clocks "
                            "held down or another process on the GPU (see SMOKE002)"
                        ),
                        Fix(
                            "Look at memory clocks and processes while the work runs.",
                            (
                                "nvidia-smi -q -d CLOCK,PERFORMANCE",
                                "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                            ),
                        ),
                    )
                )
            else:
                findings.append(
                    _finding(
                        Severity.INFO,
                        (
                            f"{device_id}: device memory copy {number(d2d.gbps, 'GB/s')} "
                            f"({percent(d2d.gbps, spec.memory_bandwidth_gbs)} of the memory's {spec.memory_bandwidth_gbs:g} "
                            "GB/s; a copy reads and writes each byte)"
                        ),
                    )
                )
    worst = worst_finding(findings)
    if worst is not None:
        return Outcome(worst.message, findings, data)
    infos = [f.message for f in findings if f.severity is Severity.INFO]
    summary = infos[0] if infos else "bandwidth measured"
    if len(infos) > 1:
        summary += f" (+{len(infos) - 1} more)"
    return Outcome(summary + _smoke.stopped_note(smoke), findings, data)
