"""SMOKE checks: did real workloads prove acceleration, and did the hardware deliver what it is built for?

The measurements come from the smoke workloads (``gpudoctor smoke``, ``check --smoke``), run in the
target Python: matmul, a CNN training step, host/device/peer bandwidth and an all-reduce, on every
accelerator and on the CPU.  These checks judge them against the CPU measured in the same run, the
GPU's spec sheet (knowledge base) and the PCIe link the GPU is on (the machine's evidence).  Every
check is not applicable when no smoke run is in the evidence.
"""

from __future__ import annotations

import shlex
from typing import Any

from gpudoctor import kb
from gpudoctor.api import Finding, Fix, Severity, check, not_applicable, ok, worst_finding
from gpudoctor.facts.environment import resolve_visible_devices
from gpudoctor.facts.gpu_state import SLOWING_REASONS
from gpudoctor.facts.topology_model import nvlink_count
from gpudoctor.results import Outcome
from gpudoctor_checks import _smoke
from gpudoctor_checks._frameworks import (
    capabilities,
    driver_version,
    gpu_names,
    gpus_present,
    os_and_machine,
    python_words,
)
from gpudoctor_checks._smoke import EVIDENCE, device_words, number, percent, times

BELOW_SPEC = 0.5  # a measurement below half of what the hardware is built for is a finding
SMALL_MATMUL = 4096  # below this n a big GPU is not kept busy by one matmul


def _finding(severity: Severity, message: str, fix: Fix | None = None) -> Finding:
    return Finding(severity, message, fix, EVIDENCE)


def _one_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _best(rows: list[Any], value: str) -> Any:
    measured = [r for r in rows if getattr(r, value) is not None and not r.error]
    return max(measured, key=lambda r: getattr(r, value)) if measured else None


# --------------------------------------------------------------------------- SMOKE001


def _install_command(facts: Any, smoke: Any, python: str, module: str) -> str:
    """pip for the framework the smoke needs: torch from the index this machine needs, never a blind download."""
    if module != "torch":
        return f"{python} -m pip install {module}"
    if not gpus_present(facts):
        return f"{python} -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    target = smoke.python
    os_name, machine = os_and_machine(target)
    choice = kb.choose_torch_wheel(
        driver_version=driver_version(facts),
        compute_capabilities=capabilities(facts),
        python_version=getattr(target, "version", None),
        os=os_name,
        machine=machine,
    )
    if choice.status == "ok" and choice.requirement:
        index = f" --index-url {choice.index_url}" if choice.index_url else ""
        return f'{python} -m pip install "{choice.requirement}"{index}'
    return f"{python} -m pip install torch"


def _run_failed(facts: Any, smoke: Any) -> Outcome | None:
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
            (_install_command(facts, smoke, python, module),),
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
            last = _one_line(run.output_tail or "")
            if last and last not in message:
                message += f" (last output: {last[:200]})"
        fix = Fix(
            "Run the workloads again with a smaller budget and look at the whole output; check "
            "`nvidia-smi` for a GPU that is stuck or busy.",
            ("gpudoctor smoke --quick -v", "nvidia-smi"),
        )
        return Outcome(message, [_finding(Severity.PROBLEM, message, fix)], data)
    return None


def _cpu_only_outcome(facts: Any, smoke: Any, data: dict[str, Any], cpu_mm: Any, cpu_cnn: Any) -> Outcome:
    baseline = []
    if cpu_mm is not None:
        baseline.append(f"{number(cpu_mm.tflops)} TFLOP/s {cpu_mm.dtype} matmul")
    if cpu_cnn is not None:
        baseline.append(f"CNN {number(cpu_cnn.steps_per_s)} steps/s")
    baseline_text = ", ".join(baseline) or "nothing measured"
    if not gpus_present(facts):
        return ok(f"CPU baseline: {baseline_text} (no GPU on this machine){_smoke.stopped_note(smoke)}", data)
    raw = facts.env.get("CUDA_VISIBLE_DEVICES") if facts.env else None
    visible = resolve_visible_devices(raw, len(facts.gpus), [g.uuid for g in facts.gpus if g.uuid])
    message = (
        f"the workloads ran only on the CPU though this machine has {gpu_names(facts)}: "
        f"{smoke.framework or 'the framework'} does not use the GPU"
    )
    if smoke.errors:
        question, text = next(iter(smoke.errors.items()))
        message += f'; it said ({question}): "{_one_line(text)}"'
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


@check("SMOKE001", area="smoke", title="Acceleration is real (accelerator against CPU on real work)")
def acceleration_real(facts, ctx) -> Outcome:
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
    cpu_mm = _best([r for r in smoke.matmul if r.device == "cpu" and r.dtype == "fp32"], "tflops") or _best(
        [r for r in smoke.matmul if r.device == "cpu"], "tflops"
    )
    cpu_cnn = _best([r for r in smoke.cnn if r.device == "cpu" and r.precision == "fp32"], "steps_per_s")
    data: dict[str, Any] = {
        "framework": smoke.framework,
        "framework_version": smoke.framework_version,
        "accelerators": accelerators,
        "cpu_matmul_tflops": getattr(cpu_mm, "tflops", None),
        "cpu_cnn_steps_per_s": getattr(cpu_cnn, "steps_per_s", None),
        "mode": smoke.mode,
        "stopped_by": smoke.stopped_by,
    }
    if not accelerators:
        return _cpu_only_outcome(facts, smoke, data, cpu_mm, cpu_cnn)

    acc_mm_rows = [r for r in smoke.matmul if r.device in accelerators]
    acc_best = _best(acc_mm_rows, "tflops")
    acc_fp32 = _best([r for r in acc_mm_rows if r.dtype == "fp32"], "tflops")
    acc_cnn = _best([r for r in smoke.cnn if r.device in accelerators], "steps_per_s")
    acc_cnn_fp32 = _best([r for r in smoke.cnn if r.device in accelerators and r.precision == "fp32"], "steps_per_s")
    data.update(
        {
            "best_matmul": {"device": acc_best.device, "dtype": acc_best.dtype, "tflops": acc_best.tflops}
            if acc_best
            else None,
            "accelerator_fp32_tflops": getattr(acc_fp32, "tflops", None),
            "best_cnn": {"device": acc_cnn.device, "precision": acc_cnn.precision, "steps_per_s": acc_cnn.steps_per_s}
            if acc_cnn
            else None,
        }
    )
    findings: list[Finding] = []
    failures = [r for r in acc_mm_rows + [r for r in smoke.cnn if r.device in accelerators] if r.error]
    if acc_best is None and acc_cnn is None:
        if failures:
            first = failures[0]
            message = f'no workload ran on {device_words(smoke, first.device)}: "{_one_line(first.error)}"'
            fix = Fix(
                "The error is the framework's own; the PyTorch/CUDA checks of `gpudoctor check` match the "
                "usual ones (no kernel image for this GPU, driver too old, out of memory).",
                ("gpudoctor check",),
            )
            return Outcome(message, [_finding(Severity.PROBLEM, message, fix)], data)
        return not_applicable(f"no accelerator workload finished{_smoke.stopped_note(smoke)}", data)

    slower = []
    if acc_fp32 is not None and cpu_mm is not None and cpu_mm.dtype == "fp32" and acc_fp32.tflops < cpu_mm.tflops:
        slower.append(
            f"fp32 matmul {number(acc_fp32.tflops)} TFLOP/s on {device_words(smoke, acc_fp32.device)} "
            f"vs {number(cpu_mm.tflops)} on the CPU"
        )
    if acc_cnn_fp32 is not None and cpu_cnn is not None and acc_cnn_fp32.steps_per_s < cpu_cnn.steps_per_s:
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
    if acc_best is not None and cpu_mm is not None and cpu_mm.tflops:
        ratio = acc_best.tflops / cpu_mm.tflops
        data["matmul_speedup"] = round(ratio, 2)
        part = f"matmul {times(ratio)} the CPU"
        if acc_fp32 is not None and cpu_mm.dtype == "fp32":
            data["matmul_speedup_fp32"] = round(acc_fp32.tflops / cpu_mm.tflops, 2)
            if acc_best.dtype != "fp32":
                part += f" ({acc_best.dtype}; fp32 against fp32 {times(acc_fp32.tflops / cpu_mm.tflops)})"
        parts.append(part)
    if acc_cnn is not None and cpu_cnn is not None and cpu_cnn.steps_per_s:
        ratio = acc_cnn.steps_per_s / cpu_cnn.steps_per_s
        data["cnn_speedup"] = round(ratio, 2)
        parts.append(f"CNN step {times(ratio)}" + (f" ({acc_cnn.precision})" if acc_cnn.precision != "fp32" else ""))
    where = device_words(smoke, (acc_best or acc_cnn).device)
    if findings:
        return Outcome(findings[0].message, findings, data)
    if parts:
        summary = f"Acceleration confirmed on {where}: " + ", ".join(parts)
    else:
        shown = (
            f"matmul {number(acc_best.tflops)} TFLOP/s {acc_best.dtype}"
            if acc_best
            else f"CNN {number(acc_cnn.steps_per_s)} steps/s"
        )
        summary = f"{where} runs the workloads ({shown}); no CPU baseline was measured to compare"
    for failure in failures:
        findings.append(
            _finding(
                Severity.WARNING,
                f"{getattr(failure, 'dtype', None) or failure.precision} on "
                f'{device_words(smoke, failure.device)} failed: "{_one_line(failure.error)}"',
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
    return Outcome(summary + _smoke.stopped_note(smoke), findings, data)


# --------------------------------------------------------------------------- SMOKE002


def _matmul_causes(
    facts: Any, smoke: Any, found: Any, rows: list[Any], low: list[tuple[Any, float, float]], spec: kb.GpuSpec
) -> tuple[list[str], list[str]]:
    """Likely causes of a slow matmul from what the evidence shows, and the commands that check or fix them."""
    causes: list[str] = []
    index = _smoke.smi_index(facts, found)
    flag = f" -i {index}" if index is not None else ""
    commands = [
        f"nvidia-smi -q -d PERFORMANCE{flag}",
        "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
    ]
    state = _smoke.state_for(facts, found)
    if state is not None:
        slowing = state.slowing_reasons
        if slowing:
            causes.append(
                "clocks were held back when the evidence was read: "
                + "; ".join(SLOWING_REASONS[reason] for reason in slowing)
            )
        if state.power_capped:
            causes.append(
                f"the power limit is {state.power_limit_w:g} W, below the board's default "
                f"{state.default_power_limit_w:g} W"
            )
            commands.append(f"nvidia-smi -q -d POWER{flag}")
            commands.append(f"sudo nvidia-smi{flag} -pl {state.default_power_limit_w:g}")
        others = [p for p in state.processes if p.type is None or "C" in p.type]
        if others:
            shown = ", ".join(
                f"{p.name or '?'} (PID {p.pid}{', ' + str(p.used_mib) + ' MiB' if p.used_mib else ''})"
                for p in others[:3]
            )
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            causes.append(f"other processes were using this GPU: {shown}{more}")
        if state.mig_enabled:
            causes.append("MIG is enabled: the work ran on a MIG slice, a fraction of the GPU")
    gpu = _smoke.gpu_for_device(facts, found)
    if (state is None or not state.mig_enabled) and gpu is not None and gpu.mig_mode_current == "Enabled":
        causes.append("MIG is enabled: the work ran on a MIG slice, a fraction of the GPU")
    if (
        found is not None
        and found.memory_total_mib
        and found.memory_free_mib is not None
        and found.memory_free_mib < 0.5 * found.memory_total_mib
    ):
        causes.append(
            f"only {found.memory_free_mib} of {found.memory_total_mib} MiB were free: something else holds this GPU"
        )
    by_dtype = {r.dtype: r for r in rows if r.tflops is not None}
    low_dtypes = {r.dtype for r, _, _ in low}
    fp32 = by_dtype.get("fp32")
    fp32_fine = fp32 is not None and spec.fp32_tflops and fp32.tflops >= BELOW_SPEC * spec.fp32_tflops
    if fp32_fine and low_dtypes & {"fp16", "bf16", "tf32"}:
        causes.append(
            f"{'/'.join(sorted(low_dtypes))} ran far below the tensor-core rate while fp32 is fine: the "
            "matmuls may not use tensor cores (a dtype or shape the kernels do not cover, or a framework "
            "build without tensor-core kernels for this GPU)"
        )
    tf32 = by_dtype.get("tf32")
    if "tf32" in low_dtypes and tf32 is not None and fp32 is not None and tf32.tflops < 1.2 * fp32.tflops:
        override = facts.env.get("NVIDIA_TF32_OVERRIDE") if facts.env else None
        causes.append(
            "tf32 ran at the fp32 rate: TF32 is switched off"
            + (
                f" (NVIDIA_TF32_OVERRIDE={override})"
                if override is not None
                else " (torch.backends.cuda.matmul.allow_tf32 / NVIDIA_TF32_OVERRIDE=0)"
            )
        )
    small = [r.n for r, _, _ in low if r.n is not None and r.n < SMALL_MATMUL]
    if small:
        causes.append(
            f"n={min(small)} may be too small to keep this GPU busy (quick mode): "
            "`gpudoctor smoke --full` uses larger matrices"
        )
    return causes, commands


@check("SMOKE002", area="smoke", title="Matmul reaches the GPU's spec-sheet rate")
def matmul_vs_spec(facts, ctx) -> Outcome:
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
    lines, per_device, unknown = [], {}, []
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
        judged, low = [], []
        for row in rows:
            peak = spec.peak_tflops(row.dtype)
            if not peak:
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
            causes, commands = _matmul_causes(facts, smoke, found, rows, low, spec)
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


# --------------------------------------------------------------------------- SMOKE003


def _cnn_fix(error: str) -> Fix:
    lowered = error.lower()
    if "out of memory" in lowered:
        return Fix(
            "The GPU ran out of memory for a small model: other processes hold its memory.",
            ("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",),
        )
    if "cudnn" in lowered:
        return Fix(
            "cuDNN failed: the cuDNN the framework loaded does not fit this GPU or driver; the cuDNN and "
            "PyTorch checks of `gpudoctor check` show which one it loaded.",
            ("gpudoctor check",),
        )
    if "no kernel image" in lowered:
        return Fix(
            "The framework has no kernels for this GPU's architecture: TORCH004 prints the wheel that has.",
            ("gpudoctor check",),
        )
    return Fix("The error is the framework's own; `gpudoctor check` matches the usual causes.", ("gpudoctor check",))


@check("SMOKE003", area="smoke", title="A CNN training step really trains")
def cnn_trains(facts, ctx) -> Outcome:
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
            message = f'the CNN training step fails on {where}: "{_one_line(row.error, 400)}"'
            findings.append(_finding(Severity.PROBLEM, message, _cnn_fix(row.error)))
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


# --------------------------------------------------------------------------- SMOKE004


def _numa_hint(facts: Any, found: Any) -> tuple[str | None, str | None]:
    nodes = _smoke.numa_nodes(facts)
    node = _smoke.numa_node_of(facts, found)
    if len(nodes) < 2:
        return None, None
    if node is None:
        return "this machine has several NUMA nodes: a copy from memory on the far node is slower", None
    return (
        f"this machine has {len(nodes)} NUMA nodes and the GPU hangs off node {node}: pinned memory on the "
        "other node crosses the CPU interconnect"
    ), f"numactl --cpunodebind={node} --membind={node} gpudoctor smoke"


def _link_findings(facts: Any, smoke: Any, device_id: str, pinned: list[Any], data: dict[str, Any]) -> list[Finding]:
    found = _smoke.device(smoke, device_id)
    # The link as the evidence saw it; without it (only the plain table, say) the link the product is built
    # for, which is what it should have trained to.
    link = _smoke.link_or_spec(facts, found)
    where = device_words(smoke, device_id)
    best = max(pinned, key=lambda r: r.gbps)
    entry: dict[str, Any] = {"pinned_gbps": {r.direction: r.gbps for r in pinned}}
    data[device_id] = entry
    if link is None or link.rate_now is None:
        entry["link"] = None
        return [
            _finding(
                Severity.INFO,
                f"{where}: pinned {best.direction} {number(best.gbps, 'GB/s')}; the "
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
    slower_gen = bool(link.gen_max and link.gen_now and link.gen_now < link.gen_max)
    if slower_gen and best.gbps > 1.1 * link.rate_now and link.rate_at_full_speed:
        # Faster than the link as read allows: it was read idle, at a lowered speed, and trained up under load.
        reference, link_words = link.rate_at_full_speed, link.words(link.gen_max, link.width_now)
        findings.append(
            _finding(
                Severity.INFO,
                (
                    f"{where}: the link showed {link.words()} when the evidence was read, slowed down while idle; under load "
                    f"it ran faster ({number(best.gbps, 'GB/s')} is more than {link.words()} carries), so it is judged as "
                    f"{link_words}"
                ),
            )
        )
    entry["judged_against_gbps"] = reference
    ratio = best.gbps / reference
    entry["fraction"] = round(ratio, 3)
    shown = ", ".join(f"{r.direction} {number(r.gbps, 'GB/s')}" for r in pinned)
    index = _smoke.smi_index(facts, found)
    flag = f" -i {index}" if index is not None else ""
    query = (
        "nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
        "pcie.link.width.max --format=csv"
    )
    narrow = bool(link.width_max and link.width_now and link.width_now < link.width_max)
    stuck = slower_gen and reference == link.rate_now
    full = link.rate_max
    if ratio < BELOW_SPEC or ((narrow or stuck) and full and best.gbps < BELOW_SPEC * full):
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
        hint, numactl = _numa_hint(facts, found)
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
                f"{where}: pinned host↔device bandwidth {shown} is {percent(best.gbps, reference)} of the "
                f"{link_words} link ({number(reference, 'GB/s')} per direction)"
            )
        else:
            message = (
                f"{where}: pinned host↔device bandwidth {shown} fits the {link_words} link it is on, but "
                f"the GPU and slot can do {link.words(link.gen_max, link.width_max)} "
                f"({number(full, 'GB/s')})"
            )
        message += ". Likely: " + "; ".join(causes)
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
            else ""
        )
        findings.insert(
            0,
            _finding(
                Severity.INFO,
                f"{where}: pinned {shown} = {percent(best.gbps, reference)} of "
                f"the {link_words} link ({number(reference, 'GB/s')}){built}",
            ),
        )
    return findings


@check("SMOKE004", area="smoke", title="Host↔device and device memory bandwidth match the link and the spec")
def bandwidth_vs_link(facts, ctx) -> Outcome:
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
                f'"{_one_line(row.error)}"'
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
        if d2d is not None and spec is not None and spec.memory_bandwidth_gbs:
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


# --------------------------------------------------------------------------- SMOKE005

_P2P_FIX = Fix(
    "Peer access needs a PCIe path that allows it: turn off ACS on the bridges between the GPUs (a BIOS option), "
    "boot with iommu=pt or the IOMMU off on bare metal, and in a VM use a hypervisor that passes P2P through. "
    "Consumer GeForce cards often have peer access disabled by the driver (`nvidia-smi topo -p2p r` shows GNS). "
    "Without it NCCL stages copies through host memory: it works, slower.",
    ("nvidia-smi topo -p2p r", "nvidia-smi topo -m", "sudo lspci -vvv | grep -i acsctl", "cat /proc/cmdline"),
)


def _pair_expectation(facts: Any, smoke: Any, src: Any, dst: Any) -> tuple[str | None, float | None, float, str]:
    """(topology cell, expected GB/s, fraction below which it is a finding, what the expectation is)."""
    topo = _smoke.topology(facts)
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
def peer_to_peer(facts, ctx) -> Outcome:
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
        cell, expected, fraction, words = _pair_expectation(facts, smoke, src, dst)
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
            findings.append(_finding(Severity.PROBLEM, f'peer copy {pair} failed: "{_one_line(row.error)}"', _P2P_FIX))
        elif row.access is False:
            findings.append(
                _finding(Severity.WARNING, f"no peer access {pair}: copies go through host memory", _P2P_FIX)
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


# --------------------------------------------------------------------------- SMOKE006


def _allreduce_fix(error: str) -> Fix:
    lowered = error.lower()
    if "shm" in lowered or "shared memory" in lowered or "bus error" in lowered:
        return Fix(
            "NCCL and gloo need shared memory; a container's default /dev/shm (64 MB) is too small. Start "
            "the container with --ipc=host or a larger --shm-size.",
            ("df -h /dev/shm", "docker run --ipc=host ...  # or --shm-size=16g"),
        )
    if "address already in use" in lowered:
        return Fix("The rendezvous port is taken; pick another.", ("export MASTER_PORT=29533",))
    return Fix(
        "Run it again with NCCL's own log to see which transport fails.", ("NCCL_DEBUG=INFO gpudoctor smoke --full",)
    )


def _allreduce_expectation(facts: Any, smoke: Any) -> tuple[float | None, str]:
    gpus = smoke.accelerators
    topo = _smoke.topology(facts)
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
def allreduce_works(facts, ctx) -> Outcome:
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
        text = _one_line(result.error, 400)
        out_of_time = any(word in result.error.lower() for word in ("time left", "budget", "did not finish in"))
        if result.busbw_gbps is None:
            message = f'the {result.backend or ""} all-reduce failed: "{text}"'.replace("  ", " ")
            return Outcome(message, [_finding(Severity.PROBLEM, message, _allreduce_fix(result.error))], data)
        if out_of_time:
            # The all-reduce was measured; only the data-parallel step ran out of the run's time.
            findings.append(_finding(Severity.INFO, f"the data-parallel step was not finished: {text}"))
        else:
            message = f'the all-reduce ran, but the data-parallel step failed: "{text}"'
            findings.append(_finding(Severity.PROBLEM, message, _allreduce_fix(result.error)))
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
