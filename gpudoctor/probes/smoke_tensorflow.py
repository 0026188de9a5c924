"""TensorFlow smoke workloads: real matmuls, a Keras CNN training step and copies, timed on every device.

Run as ``TARGET_PYTHON smoke_tensorflow.py --mode quick|full --budget SECONDS [--devices all|cpu|cuda]``
(the same command line as ``smoke_torch.py``).  It prints exactly one JSON document on stdout, the smoke
contract of ``gpudoctor/facts/smoke_model.py`` with ``"framework": "tensorflow"``, and progress lines
(``@@gpudoctor-progress {...}``) on the real stderr while it runs.  Standard library and TensorFlow only.

This file plans the workloads; the rest lives beside it: ``_smoke_engine.py`` (command line, clock,
interrupt, task loop, JSON, shared with the torch smoke), ``_smoke_tf_devices.py`` (the CPU and the GPUs,
with memory growth and NVML's free memory), ``_smoke_tf_workloads.py`` (matmul, bandwidth, p2p) and
``_smoke_tf_cnn.py`` (the Keras CNN step).  The same code measures the CPU and the GPUs.  The all-reduce
is not measured here (``skipped``); the torch smoke does it.

Keys added to the contract: those of the framework probes' import (``installed``, ``import_ok``,
``import_s``, ``import_error``, ``module_file``), ``keras_version``, ``log_lines`` and ``warnings`` (what
TensorFlow logged or printed: fd 1/2 are captured from the import to the end), ``ops_per_sample`` in each matmul
entry (chained matmuls per timed call), ``policy`` in each CNN entry (the Keras dtype policy; null for
fp32) and ``tf32`` in each GPU CNN entry (whether TensorFlow's default TF32 was on while it ran).

The budget counts from the start of this process, TensorFlow's import included (the import is never
skipped: it says what is there).  A workload starts only when enough of the budget is left, repeats less
when it runs short, and is otherwise ``skipped`` "budget: ..." (then ``stopped_by`` is "budget"; a later,
cheaper workload still gets its chance).  SIGINT or SIGTERM stops the run: what finished is reported, the
rest is ``skipped`` "interrupted" and ``stopped_by`` is "interrupt".  Those texts are the torch smoke's.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
    from . import _smoke_engine as engine
    from . import _smoke_tf_workloads as workloads
    from ._smoke_tf_cnn import run_cnn
    from ._smoke_tf_devices import Device, cpu_device, gpu_devices, why_no_gpu
    from .tensorflow_probe import DISTRIBUTIONS
else:
    import _probe_common as common
    import _smoke_engine as engine
    import _smoke_tf_workloads as workloads
    from _smoke_tf_cnn import run_cnn
    from _smoke_tf_devices import Device, cpu_device, gpu_devices, why_no_gpu
    from tensorflow_probe import DISTRIBUTIONS

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ._smoke_engine import Clock

FRAMEWORK = "tensorflow"
PROG = "smoke_tensorflow.py"

# The least time left for a workload to be started at all: its warm-up (tracing, the first run) must fit.
MIN_LEFT_S = {"matmul": 0.3, "cnn": 1.5, "bandwidth": 0.3, "p2p": 0.3}
ALLREDUCE_SKIPPED = "not measured with TensorFlow; use the torch smoke"
MAX_ERROR_CHARS = 2000

# What a workload cut short must not report half-measured.
MEASURED_KEYS = (
    "repeats",
    "seconds",
    "tflops",
    "ops_per_sample",
    "warmup",
    "warmup_settled",
    "spread",
    "ended_by",
    "cpu_share",
    "threads",
    "steps",
    "seconds_per_step",
    "steps_per_s",
    "loss_first",
    "loss_last",
    "loss_decreased",
    "gbps",
)


def _allreduce_skipped() -> dict[str, Any]:
    keys = ("backend", "world_size", "device_kind", "bytes", "repeats", "seconds", "algbw_gbps", "busbw_gbps")
    record: dict[str, Any] = dict.fromkeys(keys + ("ddp_step_s", "ddp_loss_decreased", "error"))
    record["skipped"] = ALLREDUCE_SKIPPED
    return record


def _record(named: dict[str, Any], *unmeasured: str) -> dict[str, Any]:
    """A workload's record: the fields that name it, then ``unmeasured`` keys (None until measured)."""
    record = dict(named)
    record.update(dict.fromkeys(unmeasured))
    return record


def plan(
    tf: Any, keras: Any, doc: dict[str, Any], devices: Sequence[Device], params: dict[str, Any], clock: Clock
) -> list[engine.Task]:
    tasks: list[engine.Task] = []
    gpus = [d for d in devices if not d.is_cpu]
    ordered = gpus + [d for d in devices if d.is_cpu]  # the accelerators first: they are what the run is for

    def add(stage: str, detail: str, result: dict[str, Any], work: Any) -> None:
        doc[stage].append(result)
        tasks.append(engine.Task(stage, detail, result, work))

    for device in ordered:
        dtypes = ("fp32", "fp16", "bf16") if device.is_cpu else ("fp32", "tf32", "fp16", "bf16")
        for dtype in dtypes:
            result = _record({"device": device.id, "dtype": dtype}, "n", "repeats", "seconds", "tflops", "error")
            result["skipped"] = workloads.matmul_skip_reason(device, dtype)  # before it is planned
            add(
                "matmul",
                "%s %s" % (device.id, dtype),
                result,
                lambda stop, r=result, d=device, t=dtype: workloads.run_matmul(tf, d, t, params, clock, r),
            )
    for device in ordered:
        for precision in ("fp32", "amp"):
            result = _record(
                {"device": device.id, "precision": precision},
                *("batch", "steps", "seconds_per_step", "steps_per_s", "loss_first", "loss_last", "loss_decreased"),
                *("error", "skipped"),
            )
            add(
                "cnn",
                "%s %s" % (device.id, precision),
                result,
                lambda stop, r=result, d=device, p=precision: run_cnn(tf, keras, d, p, params, clock, r),
            )
    for device in gpus:
        for direction in ("h2d", "d2h"):
            named = {"device": device.id, "direction": direction, "memory": "pageable"}
            result = _record(named, "bytes", "repeats", "gbps", "error", "skipped")
            add(
                "bandwidth",
                "%s %s" % (device.id, direction),
                result,
                lambda stop, r=result, d=device, w=direction: workloads.run_bandwidth(tf, d, w, params, clock, r),
            )
    if len(gpus) >= 2:
        for source in gpus:
            for target in gpus:
                if source is not target:
                    result = _record({"src": source.id, "dst": target.id}, "access", "gbps", "error")
                    add(
                        "p2p",
                        "%s -> %s" % (source.id, target.id),
                        result,
                        lambda stop, r=result, s=source, t=target: workloads.run_p2p(tf, s, t, params, clock, r),
                    )
    return tasks


class TensorflowSmoke:
    """One run: import TensorFlow, find the devices, plan and run the workloads (the engine prints the JSON)."""

    def __init__(self) -> None:
        probe = common.Probe(
            "smoke",
            "tensorflow",
            candidates=DISTRIBUTIONS,
            conda_names=("tensorflow", "tensorflow-base", "tensorflow-cpu", "tensorflow-gpu"),
        )
        self.run = engine.SmokeRun(FRAMEWORK, probe, allreduce=_allreduce_skipped())
        self.errors = self.run.errors
        self.doc = self.run.doc
        self.doc.update({"keras_version": None, "errors": self.errors, "probe_error": None})
        self.run.on_interrupt = self.interrupted

    def interrupted(self) -> None:
        doc = self.doc
        if doc.get("installed") and doc["framework_version"] is None and "import" not in self.errors:
            self.errors["import"] = "interrupted while importing tensorflow"

    def body(self, args: argparse.Namespace) -> None:
        tf = self.run.import_framework(before_import=_before_import)
        if tf is None:
            return
        doc, errors = self.doc, self.errors
        doc["framework_version"] = common.guarded(
            errors, "version", lambda: str(getattr(tf, "__version__", None) or tf.version.VERSION)
        )
        self.run.say("devices")
        devices = gpu_devices(tf, errors, args.devices)
        if not devices and args.devices != "cpu":
            reason = why_no_gpu(tf, errors, args.devices)
            if reason:
                errors["cuda"] = reason
        if engine.wants_cpu(args.devices):
            devices.insert(0, cpu_device())
        doc["devices"] = [device.record for device in devices]
        keras = common.guarded(errors, "keras", lambda: tf.keras)
        doc["keras_version"] = common.guarded(errors, "keras_version", lambda: getattr(keras, "__version__", None))
        clock = self.run.clock
        tasks = plan(tf, keras, doc, devices, workloads.MODES[args.mode], clock)
        default_tf32 = workloads.tf32_enabled(tf)

        def window(task: engine.Task) -> tuple[float, float]:
            return clock.deadline, MIN_LEFT_S.get(task.stage, 0.0)

        def restore_tf32(task: engine.Task) -> None:
            if task.stage == "matmul" and default_tf32 is not None:
                common.guarded({}, "tf32", lambda: workloads.set_tf32(tf, default_tf32))

        self.run.new_runner(MEASURED_KEYS, MAX_ERROR_CHARS).run(tasks, window, restore_tf32)
        # A p2p entry has no "skipped" in the contract: the pairs never measured are left out (stopped_by says why).
        doc["p2p"][:] = [result for result in doc["p2p"] if not result.pop("skipped", None)]


def _before_import() -> None:
    # Evidence is the same whoever runs it: TensorFlow's C++ side says why it skips a GPU only at level 0.
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    # tf.keras is Keras 3 from TensorFlow 2.16 on, and Keras 3 follows KERAS_BACKEND: this smoke test is TensorFlow's.
    os.environ["KERAS_BACKEND"] = "tensorflow"


def main(argv: Sequence[str] | None = None) -> None:
    smoke = TensorflowSmoke()
    smoke.run.main(sys.argv[1:] if argv is None else argv, PROG, smoke.body)


if __name__ == "__main__":
    main()
