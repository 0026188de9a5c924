"""SMOKE001: did the smoke workloads run on the accelerator, and how much faster than the CPU?"""

from __future__ import annotations

import shlex
from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.facts.environment import resolve_visible_devices
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.smoke_model import CnnResult, MatmulResult, SmokeFacts
from gpudoctor.results import Outcome
from gpudoctor_checks import _smoke, _smoke_instance
from gpudoctor_checks._frameworks import gpu_names, gpus_present, python_words
from gpudoctor_checks._smoke import best, device_words, number, one_line, times
from gpudoctor_checks._smoke import finding as _finding
from gpudoctor_checks._smoke_causes import install_command

# --------------------------------------------------------------------------- SMOKE001


def _run_failed(facts: Facts, smoke: SmokeFacts) -> Outcome | None:
    """The outcome when the run measured nothing at all; None when there is something to judge."""
    run, label = smoke.run, _smoke.LABELS.get(smoke.framework or "torch", smoke.framework or "the framework")
    where = python_words(smoke.python)
    data = {"status": run.status, "error": run.error, "output_tail": run.output_tail}
    measured = smoke.matmul or smoke.cnn or smoke.bandwidth or smoke.allreduce is not None
    python = shlex.quote(smoke.python.executable) if smoke.python and smoke.python.executable else "python"
    if run.status == "not_installed":
        module = smoke.framework or "torch"
        message = f"{label} is not installed in {where}: the smoke workloads have nothing to run on"
        fix = Fix(
            f"Install {label} into the Python to test, or point gpudoctor at the one that has it "
            "(`--python /path/to/venv/bin/python`).",
            (install_command(facts, smoke, python, module),),
        )
        return Outcome(message, [_finding(Severity.WARNING, message, fix)], data)
    if run.status == "import_error":
        message = f"`import {smoke.framework or 'torch'}` fails in {where}: {run.error or 'unknown error'}"
        return Outcome(
            message,
            [
                _finding(
                    Severity.PROBLEM,
                    message,
                    Fix(
                        "Fix the import first: the PyTorch/TensorFlow checks of `gpudoctor check` name the cause.",
                        ("gpudoctor check",),
                    ),
                )
            ],
            data,
        )
    if run.status in ("crashed", "timed_out") and not measured:
        if run.error and "interrupt" in run.error.lower():
            message = "the smoke run was interrupted before any workload finished"
            return Outcome(
                message,
                [
                    _finding(
                        Severity.WARNING, message, Fix("Run it again and let it finish.", ("gpudoctor smoke --quick",))
                    )
                ],
                data,
            )
        if run.status == "timed_out":
            message = (
                f"the smoke run did not finish within its limit ({number(run.duration_s, 's')}) and "
                "reported nothing: a workload hangs, often on a GPU that is stuck or shared"
            )
        else:
            message = f"the smoke run crashed: {run.error or 'no result'}"
            last = one_line(run.output_tail or "")
            if last and last not in message:
                message += f" (last output: {last[:200]})"
        fix = Fix(
            "Run the workloads again with a smaller budget and look at the whole output; check "
            "`nvidia-smi` for a GPU that is stuck or busy.",
            ("gpudoctor smoke --quick -v", "nvidia-smi"),
        )
        return Outcome(message, [_finding(Severity.PROBLEM, message, fix)], data)
    return None


def _cpu_only_outcome(
    facts: Facts, smoke: SmokeFacts, data: dict[str, Any], cpu_mm: MatmulResult | None, cpu_cnn: CnnResult | None
) -> Outcome:
    baseline = []
    if cpu_mm is not None:
        baseline.append(f"{number(cpu_mm.tflops)} TFLOP/s {cpu_mm.dtype} matmul")
    if cpu_cnn is not None:
        baseline.append(f"CNN {number(cpu_cnn.steps_per_s)} steps/s")
    threads = _smoke.threads_words(smoke)
    baseline_text = ", ".join(baseline) + (f" {threads}" if threads else "") if baseline else "nothing measured"
    if not gpus_present(facts):
        return ok(
            f"CPU baseline: {baseline_text} (no GPU on this machine)"
            f"{_smoke.busy_cpu_note(smoke)}{_smoke.stopped_note(smoke)}",
            data,
        )
    raw = facts.env.get("CUDA_VISIBLE_DEVICES") if facts.env else None
    visible = resolve_visible_devices(raw, len(facts.gpus), [g.uuid for g in facts.gpus if g.uuid])
    message = (
        f"the workloads ran only on the CPU though this machine has {gpu_names(facts)}: "
        f"{smoke.framework or 'the framework'} does not use the GPU"
    )
    if smoke.errors:
        question, text = next(iter(smoke.errors.items()))
        message += f'; it said ({question}): "{one_line(text)}"'
    commands = ["gpudoctor check"]
    summary = (
        "The framework checks of `gpudoctor check` (TORCH002–TORCH005, TF, JAX) name why the framework "
        "does not see the GPU and print the command that fixes it."
    )
    if visible.set and visible.hides_all and facts.gpus:
        message += f" (CUDA_VISIBLE_DEVICES={raw!r} hides every GPU)"
        commands.insert(0, "unset CUDA_VISIBLE_DEVICES")
        summary = "CUDA_VISIBLE_DEVICES hides the GPUs from every CUDA program; unset it. " + summary
    data["cpu_baseline"] = baseline_text
    return Outcome(message, [_finding(Severity.PROBLEM, message, Fix(summary, tuple(commands)))], data)


def _tflops(row: MatmulResult) -> float | None:
    return row.tflops


def _steps(row: CnnResult) -> float | None:
    return row.steps_per_s


@check("SMOKE001", area="smoke", title="Acceleration is real (accelerator against CPU on real work)")
def acceleration_real(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the smoke run's matmul (TFLOP/s) and CNN training step (steps/s) on the best
    accelerator against the CPU measured in the same run: the speedup in fp32 against fp32, and with the
    accelerator's best dtype. On a machine without a GPU the CPU figures are reported as a baseline.

    Why it matters: a GPU the driver lists is not yet a GPU the framework uses. A CPU-only wheel, a
    CUDA_VISIBLE_DEVICES that hides the GPUs or a failed CUDA initialisation leave every workload on the
    CPU, tens of times slower, without an error; a GPU slower than the CPU is broken or throttled.

    How to fix: when the work ran only on the CPU, `gpudoctor check` (TORCH002–TORCH005) names why the
    framework does not see the GPU and prints the install command; a GPU slower than the CPU: see SMOKE002
    for clocks, power limit and other processes.
    """
    smoke = facts.smoke
    skipped = _smoke.not_run(smoke)
    if skipped is not None:
        return skipped
    failed = _run_failed(facts, smoke)
    if failed is not None:
        return failed
    accelerators = _smoke.accelerator_ids(smoke)
    cpu_mm = best([r for r in smoke.matmul if r.device == "cpu" and r.dtype == "fp32"], _tflops) or best(
        [r for r in smoke.matmul if r.device == "cpu"], _tflops
    )
    cpu_cnn = best([r for r in smoke.cnn if r.device == "cpu" and r.precision == "fp32"], _steps)
    data: dict[str, Any] = {
        "framework": smoke.framework,
        "framework_version": smoke.framework_version,
        "accelerators": accelerators,
        "cpu_matmul_tflops": cpu_mm.tflops if cpu_mm is not None else None,
        "cpu_cnn_steps_per_s": cpu_cnn.steps_per_s if cpu_cnn is not None else None,
        "cpu_threads": _smoke.cpu_threads(smoke),
        "cpu_share": _smoke.cpu_share(smoke),
        "cpu_matmul_spread": cpu_mm.spread if cpu_mm is not None else None,
        "cpu_cnn_spread": cpu_cnn.spread if cpu_cnn is not None else None,
        "mode": smoke.mode,
        "stopped_by": smoke.stopped_by,
        "measurements": _smoke.measurements(smoke),
    }
    if not accelerators:
        return _cpu_only_outcome(facts, smoke, data, cpu_mm, cpu_cnn)

    acc_mm_rows = [r for r in smoke.matmul if r.device in accelerators]
    acc_best = best(acc_mm_rows, _tflops)
    acc_fp32 = best([r for r in acc_mm_rows if r.dtype == "fp32"], _tflops)
    acc_cnn_rows = [r for r in smoke.cnn if r.device in accelerators]
    acc_cnn = best(acc_cnn_rows, _steps)
    acc_cnn_fp32 = best([r for r in acc_cnn_rows if r.precision == "fp32"], _steps)
    data.update(
        {
            "best_matmul": {"device": acc_best.device, "dtype": acc_best.dtype, "tflops": acc_best.tflops}
            if acc_best
            else None,
            "accelerator_fp32_tflops": acc_fp32.tflops if acc_fp32 is not None else None,
            "best_cnn": {"device": acc_cnn.device, "precision": acc_cnn.precision, "steps_per_s": acc_cnn.steps_per_s}
            if acc_cnn
            else None,
        }
    )
    findings: list[Finding] = []
    ran: list[MatmulResult | CnnResult] = [*acc_mm_rows, *acc_cnn_rows]
    failures = [r for r in ran if r.error]
    lead: MatmulResult | CnnResult | None = acc_best or acc_cnn
    if lead is None:
        if failures:
            first = failures[0]
            message = f'no workload ran on {device_words(smoke, first.device)}: "{one_line(first.error or "")}"'
            fix = Fix(
                "The error is the framework's own; the PyTorch/CUDA checks of `gpudoctor check` match the "
                "usual ones (no kernel image for this GPU, driver too old, out of memory).",
                ("gpudoctor check",),
            )
            return Outcome(message, [_finding(Severity.PROBLEM, message, fix)], data)
        return not_applicable(f"no accelerator workload finished{_smoke.stopped_note(smoke)}", data)

    slower = []
    if (
        acc_fp32 is not None
        and cpu_mm is not None
        and cpu_mm.dtype == "fp32"
        and acc_fp32.tflops is not None
        and cpu_mm.tflops is not None
        and acc_fp32.tflops < cpu_mm.tflops
    ):
        slower.append(
            f"fp32 matmul {number(acc_fp32.tflops)} TFLOP/s on {device_words(smoke, acc_fp32.device)} "
            f"vs {number(cpu_mm.tflops)} on the CPU"
        )
    if (
        acc_cnn_fp32 is not None
        and cpu_cnn is not None
        and acc_cnn_fp32.steps_per_s is not None
        and cpu_cnn.steps_per_s is not None
        and acc_cnn_fp32.steps_per_s < cpu_cnn.steps_per_s
    ):
        slower.append(
            f"CNN step {number(acc_cnn_fp32.steps_per_s)} steps/s on {acc_cnn_fp32.device} vs "
            f"{number(cpu_cnn.steps_per_s)} on the CPU"
        )
    if slower:
        message = "the accelerator was slower than the CPU: " + "; ".join(slower)
        fix = Fix(
            "A GPU slower than the CPU is held back (clocks, power limit, another process, a link "
            "trained down) or is not doing the work: see SMOKE002 and SMOKE004.",
            (
                "nvidia-smi -q -d PERFORMANCE",
                "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
            ),
        )
        findings.append(_finding(Severity.PROBLEM, message, fix))

    parts = []
    if acc_best is not None and acc_best.tflops is not None and cpu_mm is not None and cpu_mm.tflops:
        ratio = acc_best.tflops / cpu_mm.tflops
        data["matmul_speedup"] = round(ratio, 2)
        part = f"matmul {times(ratio)} the CPU"
        if acc_fp32 is not None and acc_fp32.tflops is not None and cpu_mm.dtype == "fp32":
            data["matmul_speedup_fp32"] = round(acc_fp32.tflops / cpu_mm.tflops, 2)
            if acc_best.dtype != "fp32":
                part += f" ({acc_best.dtype}; fp32 against fp32 {times(acc_fp32.tflops / cpu_mm.tflops)})"
        parts.append(part)
    if acc_cnn is not None and acc_cnn.steps_per_s is not None and cpu_cnn is not None and cpu_cnn.steps_per_s:
        ratio = acc_cnn.steps_per_s / cpu_cnn.steps_per_s
        data["cnn_speedup"] = round(ratio, 2)
        parts.append(f"CNN step {times(ratio)}" + (f" ({acc_cnn.precision})" if acc_cnn.precision != "fp32" else ""))
    where = device_words(smoke, lead.device)
    other_model = _smoke_instance.type_model_note(facts, smoke, lead.device)
    if other_model is not None:
        findings.append(other_model)
    if findings and findings[0].severity is not Severity.INFO:
        return Outcome(findings[0].message, findings, data)
    if parts:
        summary = f"Acceleration confirmed on {where}: " + ", ".join(parts)
    else:
        shown = (
            f"matmul {number(acc_best.tflops)} TFLOP/s {acc_best.dtype}"
            if acc_best
            else f"CNN {number(acc_cnn.steps_per_s if acc_cnn is not None else None)} steps/s"
        )
        summary = f"{where} runs the workloads ({shown}); no CPU baseline was measured to compare"
    for failure in failures:
        findings.append(
            _finding(
                Severity.WARNING,
                f"{failure.dtype if isinstance(failure, MatmulResult) else failure.precision} on "
                f'{device_words(smoke, failure.device)} failed: "{one_line(failure.error or "")}"',
            )
        )
    listed = len(facts.gpus)
    if listed > len(accelerators):
        findings.append(
            _finding(
                Severity.INFO,
                f"the framework used {len(accelerators)} of the {listed} GPUs the "
                "driver lists (CUDA_VISIBLE_DEVICES, or GPUs it cannot use)",
            )
        )
    if parts:
        threads = _smoke.threads_words(smoke)
        summary += (f"; CPU baseline {threads}" if threads else "") + _smoke.busy_cpu_note(smoke)
    return Outcome(summary + _smoke.stopped_note(smoke), findings, data)
