"""SMOKE002 and SMOKE003: matmul against the spec sheet, and a CNN training step that really trains."""

from __future__ import annotations

from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor_checks import _smoke
from gpudoctor_checks._smoke import BELOW_SPEC, device_words, number, one_line, percent
from gpudoctor_checks._smoke import finding as _finding
from gpudoctor_checks._smoke_causes import LowMatmul, cnn_fix, matmul_causes


@check("SMOKE002", area="smoke", title="Matmul reaches the GPU's spec-sheet rate")
def matmul_vs_spec(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: each accelerator's measured matmul rate (fp32, tf32, fp16, bf16) against the peak of
    its spec sheet in the knowledge base (`gpudoctor kb specs`: dense tensor-core rates, no sparsity).
    Below half of the peak is a warning that names the likely causes the evidence shows: clock-event
    (throttle) reasons, a power limit below the default, other processes on the GPU, MIG, a dtype that
    misses the tensor cores, matrices too small for the GPU.

    Why it matters: a GPU that runs at a fraction of its rate passes every static check and wastes its
    price: a lowered power cap, a hot or power-braked board, or a neighbour's job on the same GPU are
    invisible until real work is timed.

    How to fix: watch the clock-event reasons and the processes while the work runs (`nvidia-smi -q -d
    PERFORMANCE`, `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`); restore
    the default power limit (`sudo nvidia-smi -i N -pl WATTS`); fix cooling; stop the other jobs; run
    `gpudoctor smoke --full` for sizes that saturate a big GPU.
    """
    smoke = facts.smoke
    skipped = _smoke.no_measurements(smoke, "matmul")
    if skipped is not None:
        return skipped
    accelerators = _smoke.accelerator_ids(smoke)
    if not accelerators:
        return not_applicable("no accelerator was measured (a CPU has no spec-sheet peak here)")
    findings: list[Finding] = []
    lines: list[str] = []
    unknown: list[str] = []
    per_device: dict[str, dict[str, Any]] = {}
    for device_id in accelerators:
        found = _smoke.device(smoke, device_id)
        rows = [r for r in smoke.matmul if r.device == device_id and r.tflops is not None and not r.error]
        if not rows:
            continue
        spec = _smoke.spec_for(facts, found)
        measured = ", ".join(f"{r.dtype} {number(r.tflops)}" for r in rows)
        if spec is None:
            unknown.append(f"{device_words(smoke, device_id)}: {measured} TFLOP/s")
            per_device[device_id] = {"spec": None, "measured": {r.dtype: r.tflops for r in rows}}
            continue
        judged: list[str] = []
        low: list[LowMatmul] = []
        for row in rows:
            peak = spec.peak_tflops(row.dtype)
            if not peak or row.tflops is None:
                continue
            judged.append(f"{row.dtype} {number(row.tflops)} TFLOP/s ({percent(row.tflops, peak)} of {peak:g})")
            if row.tflops < BELOW_SPEC * peak:
                low.append((row, row.tflops, peak))
        per_device[device_id] = {
            "spec": spec.name,
            "measured": {r.dtype: r.tflops for r in rows},
            "peak": {r.dtype: spec.peak_tflops(r.dtype) for r in rows},
        }
        if not judged:
            unknown.append(
                f"{device_words(smoke, device_id)}: {measured} TFLOP/s (the {spec.name} sheet has no "
                "figure for these dtypes)"
            )
            continue
        lines.append(f"{device_id} {spec.name}: " + ", ".join(judged))
        if low:
            causes, commands = matmul_causes(facts, found, rows, low, spec)
            shown = "; ".join(
                f"{row.dtype} {number(value)} TFLOP/s is {percent(value, peak)} of the {peak:g} of its spec"
                for row, value, peak in low
            )
            message = (
                f"{device_words(smoke, device_id)} runs matmul below half of its spec sheet ({spec.name}): {shown}"
            )
            message += (
                (". Likely: " + "; ".join(causes))
                if causes
                else ". The evidence shows no cause (it was read before the run): look while the work runs"
            )
            fix = Fix(
                "Look at the clock-event reasons and processes while `gpudoctor smoke --full` runs, restore "
                "the default power limit, fix cooling, stop other jobs on the GPU.",
                tuple(commands),
                needs_root=any(c.startswith("sudo") for c in commands),
            )
            findings.append(_finding(Severity.WARNING, message, fix))
            per_device[device_id]["causes"] = causes
    data = {"devices": per_device, "threshold": BELOW_SPEC}
    if not lines and not unknown:
        return not_applicable(f"no accelerator matmul finished{_smoke.stopped_note(smoke)}", data)
    if unknown:
        findings.append(
            _finding(
                Severity.INFO,
                "no spec sheet to compare in the knowledge base (`gpudoctor kb specs`) for " + "; ".join(unknown),
            )
        )
    if findings and findings[0].severity is Severity.WARNING:
        return Outcome(findings[0].message, findings, data)
    summary = "; ".join(lines) if lines else "measured, no spec sheet to compare: " + "; ".join(unknown)
    return Outcome(summary, [f for f in findings if not (not lines and f.severity is Severity.INFO)], data)


@check("SMOKE003", area="smoke", title="A CNN training step really trains")
def cnn_trains(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the small MNIST-shaped CNN of the smoke run (forward, backward, optimizer step on
    synthetic data) on every device and precision: that it ran without error and that its loss went down
    over the steps. Errors are quoted verbatim.

    Why it matters: kernels that launch are not yet a model that learns. cuDNN errors, missing kernels for
    the GPU's architecture, out-of-memory on a shared GPU, or numerics that turn the loss into NaN under
    mixed precision break training while `torch.cuda.is_available()` is True.

    How to fix: follow the error: `gpudoctor check` names the cuDNN / architecture / driver causes; free
    the GPU's memory; if only mixed precision fails to learn, train in fp32 and report the framework and
    GPU versions.
    """
    smoke = facts.smoke
    skipped = _smoke.no_measurements(smoke, "a CNN step")
    if skipped is not None:
        return skipped
    rows = list(smoke.cnn)
    ran = [r for r in rows if not r.skipped]
    data: dict[str, Any] = {
        "runs": [
            {
                "device": r.device,
                "precision": r.precision,
                "loss_first": r.loss_first,
                "loss_last": r.loss_last,
                "loss_decreased": r.loss_decreased,
                "steps_per_s": r.steps_per_s,
                "error": r.error,
                "skipped": r.skipped,
            }
            for r in rows
        ]
    }
    if not ran:
        reasons = "; ".join(f"{r.device} {r.precision}: {r.skipped}" for r in rows)
        return not_applicable(
            f"the CNN step did not run{_smoke.stopped_note(smoke)}" + (f" ({reasons})" if reasons else ""), data
        )
    findings: list[Finding] = []
    fine = []
    for row in ran:
        where = f"{device_words(smoke, row.device)} {row.precision}"
        if row.error:
            message = f'the CNN training step fails on {where}: "{one_line(row.error, 400)}"'
            findings.append(_finding(Severity.PROBLEM, message, cnn_fix(row.error)))
            continue
        decreased = row.loss_decreased
        if decreased is None and row.loss_first is not None and row.loss_last is not None:
            decreased = row.loss_last < row.loss_first
        losses = f"{number(row.loss_first)} → " + (
            number(row.loss_last) if row.loss_last is not None else "not a finite number"
        )
        if decreased is False:
            message = f"the CNN step runs on {where} but the loss did not go down ({losses}): it does not train"
            fix = Fix(
                "Compare with the CPU and with fp32: a model that does not learn on synthetic data only on one "
                "device or precision points at that device's numerics (mixed-precision overflow, a broken "
                "kernel).",
                ("gpudoctor smoke --full",),
            )
            findings.append(_finding(Severity.PROBLEM, message, fix))
        elif decreased is True:
            fine.append(f"{row.device} {row.precision} {losses}")
        else:
            findings.append(_finding(Severity.INFO, f"{where}: the loss was not reported, so learning is unproven"))
    problems = [f for f in findings if f.severity is Severity.PROBLEM]
    if problems:
        return Outcome(problems[0].message, findings, data)
    if not fine:
        return Outcome(f"the CNN step ran, but no loss was reported{_smoke.stopped_note(smoke)}", findings, data)
    return Outcome("the loss goes down: " + "; ".join(fine) + _smoke.stopped_note(smoke), findings, data)
