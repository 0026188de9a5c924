"""SMOKE005 and SMOKE006: peer-to-peer copies and the all-reduce across the GPUs, against their links."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok, worst_finding
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.smoke_model import SmokeDevice, SmokeFacts
from gpudoctor.facts.topology_model import nvlink_count
from gpudoctor.results import Outcome
from gpudoctor_checks import _smoke
from gpudoctor_checks._smoke import BELOW_SPEC, number, one_line, percent
from gpudoctor_checks._smoke import finding as _finding
from gpudoctor_checks._smoke_causes import P2P_FIX, allreduce_fix


def _pair_expectation(
    facts: Facts, src: SmokeDevice | None, dst: SmokeDevice | None
) -> tuple[str | None, float | None, float, str]:
    """(topology cell, expected GB/s, fraction below which it is a finding, what the expectation is)."""
    topo = facts.topology
    a, b = _smoke.smi_index(facts, src), _smoke.smi_index(facts, dst)
    cell = topo.gpu_link(a, b) if topo is not None and a is not None and b is not None and a != b else None
    rates = []
    for found in (src, dst):
        link = _smoke.link_or_spec(facts, found)
        if link is not None and link.rate_at_full_speed:
            rates.append(link.rate_at_full_speed)
    pcie = min(rates) if rates else None
    links = nvlink_count(cell)
    if links:
        # NVLink must at least beat PCIe; how much more depends on how many links reach this peer.
        spec = _smoke.spec_for(facts, src)
        upper = spec.nvlink_gbps_per_direction if spec is not None else None
        words = f"{cell}: {links} NVLinks" + (
            f", up to {upper:g} GB/s per direction over all of the GPU's links" if upper else ""
        )
        return cell, pcie, 1.0, words
    if pcie is None:
        return cell, None, BELOW_SPEC, "unknown (no PCIe link in the evidence)"
    fraction = 0.25 if cell == "SYS" else BELOW_SPEC  # across the CPU interconnect P2P is slower by design
    return cell, pcie, fraction, f"{cell or 'PCIe'}: the PCIe link's {number(pcie, 'GB/s')} per direction"


@check("SMOKE005", area="smoke", title="GPUs reach each other peer-to-peer at the link's speed")
def peer_to_peer(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: for every pair of GPUs, that peer access is possible and the copy bandwidth between
    them fits the path `nvidia-smi topo -m` shows: an NVLink pair must beat the PCIe link, a PCIe pair
    should reach half its rate (a quarter across the CPU interconnect, SYS).

    Why it matters: data-parallel and model-parallel training move gradients and activations GPU to GPU.
    Without peer access (ACS or the IOMMU in the way, a VM, consumer cards) NCCL stages every copy through
    host memory; an NVLink pair that copies at PCIe speed is not using its NVLinks.

    How to fix: `nvidia-smi topo -p2p r` shows which pairs may talk; disable PCIe ACS on the bridges between
    the GPUs (BIOS), use iommu=pt on bare metal; check the NVLinks with `nvidia-smi nvlink -s`.
    """
    smoke = facts.smoke
    skipped = _smoke.no_measurements(smoke, "peer-to-peer copies")
    if skipped is not None:
        return skipped
    if len(_smoke.accelerator_ids(smoke)) < 2:
        return not_applicable("fewer than two GPUs: no peer-to-peer to test")
    if not smoke.p2p:
        return not_applicable(f"peer-to-peer copies were not measured{_smoke.stopped_note(smoke)}")
    findings: list[Finding] = []
    pairs, fine = [], []
    for row in smoke.p2p:
        src, dst = _smoke.device(smoke, row.src), _smoke.device(smoke, row.dst)
        cell, expected, fraction, words = _pair_expectation(facts, src, dst)
        pairs.append(
            {
                "src": row.src,
                "dst": row.dst,
                "access": row.access,
                "gbps": row.gbps,
                "topology": cell,
                "expected_gbps": expected,
                "error": row.error,
            }
        )
        pair = f"{row.src}→{row.dst}" + (f" ({cell})" if cell else "")
        if row.error:
            findings.append(_finding(Severity.PROBLEM, f'peer copy {pair} failed: "{one_line(row.error)}"', P2P_FIX))
        elif row.access is False:
            findings.append(
                _finding(Severity.WARNING, f"no peer access {pair}: copies go through host memory", P2P_FIX)
            )
        elif row.gbps is not None and expected and row.gbps < fraction * expected:
            if nvlink_count(cell):
                message = (
                    f"peer copy {pair} {number(row.gbps, 'GB/s')} is slower than even the PCIe link "
                    f"({number(expected, 'GB/s')}): the copies do not go over the NVLinks ({words})"
                )
            else:
                message = f"peer copy {pair} {number(row.gbps, 'GB/s')}, below what its path allows: {words}"
            fix = Fix(
                "Check the NVLinks and the PCIe path between the pair.",
                ("nvidia-smi nvlink -s", "nvidia-smi topo -m", "nvidia-smi topo -p2p r"),
            )
            findings.append(_finding(Severity.WARNING, message, fix))
        elif row.gbps is not None:
            fine.append(f"{pair} {number(row.gbps, 'GB/s')}")
    data = {"pairs": pairs}
    worst = worst_finding(findings)
    if worst is not None:
        if len(findings) > 1:
            return Outcome(f"{worst.message} (+{len(findings) - 1} more pair(s))", findings, data)
        return Outcome(worst.message, findings, data)
    if not fine:
        return not_applicable("peer access was tested but no copy bandwidth was measured", data)
    shown = "; ".join(fine[:4]) + (f"; +{len(fine) - 4} more" if len(fine) > 4 else "")
    return ok(f"peer access between every pair: {shown}", data)


def _allreduce_expectation(facts: Facts, smoke: SmokeFacts) -> tuple[float | None, str]:
    gpus = smoke.accelerators
    topo = facts.topology
    indices = [_smoke.smi_index(facts, d) for d in gpus]
    cells = (
        [
            topo.gpu_link(a, b)
            for i, a in enumerate(indices)
            for b in indices[i + 1 :]
            if topo is not None and a is not None and b is not None
        ]
        if topo is not None
        else []
    )
    if cells and all(nvlink_count(cell) for cell in cells):
        spec = _smoke.spec_for(facts, gpus[0]) if gpus else None
        if spec is not None and spec.nvlink_gbps_per_direction:
            return spec.nvlink_gbps_per_direction, f"NVLink ({spec.nvlink_gbps_per_direction:g} GB/s per direction)"
    rates = [
        link.rate_at_full_speed
        for link in (_smoke.link_or_spec(facts, d) for d in gpus)
        if link is not None and link.rate_at_full_speed
    ]
    if rates:
        return min(rates), f"PCIe ({min(rates):g} GB/s per direction)"
    return None, "unknown"


@check("SMOKE006", area="smoke", title="All-reduce and a data-parallel step work across the GPUs")
def allreduce_works(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the smoke run's all-reduce across all local GPUs (NCCL; gloo on CPU processes when
    there is no GPU) and a data-parallel training step: that both run, that the loss goes down, and that
    the all-reduce bus bandwidth (as nccl-tests defines it) is not far below what the GPUs' links allow
    (NVLink when every pair has it, else the PCIe link).

    Why it matters: multi-GPU training is an all-reduce per step. A failing NCCL transport, a container
    with a tiny /dev/shm, or traffic forced through host memory turns eight GPUs into a slow one, or
    hangs the job.

    How to fix: errors are quoted verbatim with the usual fix (larger /dev/shm with `--ipc=host`, another
    MASTER_PORT, `NCCL_DEBUG=INFO` to see the transport); low bandwidth: see SMOKE005 for peer access and
    SMOKE004 for the links.
    """
    smoke = facts.smoke
    skipped = _smoke.no_measurements(smoke, "an all-reduce")
    if skipped is not None:
        return skipped
    result = smoke.allreduce
    if result is None:
        return not_applicable(f"the all-reduce was not run{_smoke.stopped_note(smoke)}")
    data = {
        "backend": result.backend,
        "world_size": result.world_size,
        "device_kind": result.device_kind,
        "bytes": result.bytes,
        "busbw_gbps": result.busbw_gbps,
        "algbw_gbps": result.algbw_gbps,
        "ddp_step_s": result.ddp_step_s,
        "ddp_loss_decreased": result.ddp_loss_decreased,
    }
    findings: list[Finding] = []
    if result.error:
        text = one_line(result.error, 400)
        out_of_time = any(word in result.error.lower() for word in ("time left", "budget", "did not finish in"))
        if result.busbw_gbps is None:
            message = f'the {result.backend or ""} all-reduce failed: "{text}"'.replace("  ", " ")
            return Outcome(message, [_finding(Severity.PROBLEM, message, allreduce_fix(result.error))], data)
        if out_of_time:
            # The all-reduce was measured; only the data-parallel step ran out of the run's time.
            findings.append(_finding(Severity.INFO, f"the data-parallel step was not finished: {text}"))
        else:
            message = f'the all-reduce ran, but the data-parallel step failed: "{text}"'
            findings.append(_finding(Severity.PROBLEM, message, allreduce_fix(result.error)))
    elif result.skipped:
        return not_applicable(f"the all-reduce was skipped: {result.skipped}", data)
    ranks = f"{result.world_size} ranks" if result.world_size else "ranks"
    size = f"{result.bytes / 1e6:.0f} MB" if result.bytes else "a buffer"
    summary = f"{result.backend or '?'} all-reduce of {size} across {ranks}: busbw {number(result.busbw_gbps, 'GB/s')}"
    step = f"; data-parallel step {result.ddp_step_s * 1000:.0f} ms" if result.ddp_step_s is not None else ""
    if result.ddp_loss_decreased is False:
        message = (
            f"the data-parallel step runs across {ranks} but its loss did not go down: gradients are not "
            "averaged correctly or the step does not train"
        )
        findings.append(
            _finding(
                Severity.PROBLEM,
                message,
                Fix("Run the step on one GPU and on two and compare the losses.", ("gpudoctor smoke --full",)),
            )
        )
    if result.device_kind == "cpu" or result.backend == "gloo":
        if not any(f.severity is not Severity.INFO for f in findings):
            findings.append(
                _finding(
                    Severity.INFO,
                    "gloo on CPU processes: the figure describes host memory, not GPU links, and is informational",
                )
            )
    elif result.busbw_gbps is not None:
        expected, words = _allreduce_expectation(facts, smoke)
        data["expected_gbps"] = expected
        if expected and result.busbw_gbps < 0.25 * expected:
            message = (
                f"all-reduce busbw {number(result.busbw_gbps, 'GB/s')} across {ranks} is "
                f"{percent(result.busbw_gbps, expected)} of the GPUs' links, {words}: traffic goes through "
                "host memory or a slow path (see SMOKE005, SMOKE004)"
            )
            findings.append(
                _finding(
                    Severity.WARNING,
                    message,
                    Fix(
                        "Look at the transport NCCL picks and at peer access between the GPUs.",
                        ("NCCL_DEBUG=INFO gpudoctor smoke --full", "nvidia-smi topo -m", "nvidia-smi topo -p2p r"),
                    ),
                )
            )
        elif expected:
            summary += f" ({percent(result.busbw_gbps, expected)} of {words})"
    worst = worst_finding(findings)
    if worst is not None:
        return Outcome(worst.message, findings, data)
    summary += step
    if result.ddp_loss_decreased is True:
        summary += ", loss falls"
    return Outcome(summary + _smoke.stopped_note(smoke), findings, data)
