"""PyTorch smoke workloads: run as ``TARGET_PYTHON smoke_torch.py --mode quick|full --budget S [--devices D]``.

Real work on every visible accelerator and on the CPU, measured in one run: matmul TFLOP/s per dtype,
a CNN training step (fp32 and mixed precision), host/device copy bandwidth, peer-to-peer copies and an
all-reduce plus a DistributedDataParallel step across local GPUs (NCCL) or two CPU processes (gloo).
Prints ONE JSON document on stdout (the contract is in ``gpudoctor/facts/smoke_model.py``) and
``@@gpudoctor-progress`` lines on the real stderr while it runs.  Standard library + torch only.

This file finds the devices, plans the workloads and gives each its share of the budget; the rest lives
beside it: ``_smoke_engine.py`` (command line, clock, interrupt, task loop, JSON, shared with the
TensorFlow smoke), ``_smoke_torch_device.py`` (the one layer that differs between the CPU and a GPU, and
the CNN), ``_smoke_torch_workloads.py`` (matmul, CNN, bandwidth, p2p), ``_smoke_torch_dist.py`` and
``_smoke_torch_rank.py`` (the all-reduce and DDP step, one process per rank).

Behaving well on someone else's machine: matrices and buffers are sized to at most a quarter of the
device's *free* memory, every workload stops at its share of ``--budget`` (the whole run, distributed
part included, ends within it), SIGINT aborts the workload in progress and still prints what finished,
and the rank processes of the distributed part die with the probe.

Beyond the contract the document carries: ``installed``, ``import_ok``, ``import_error``, ``import_s``,
``module_file`` (from ``_probe_common.Probe``), ``log_lines`` and ``warnings`` (what torch printed or
warned while captured), ``errors["import"]`` (torch absent or failing to import) and ``errors["cuda"]``
(a CUDA/ROCm build with no usable GPU: the init error); ``allreduce`` adds ``ddp_loss_first``,
``ddp_loss_last`` and ``ddp_steps``; ``p2p`` rows add ``bytes``, ``repeats`` and ``skipped``.

With ``--rank R`` the script is one rank of the distributed part (started by the probe itself).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
    from . import _smoke_engine as engine
    from . import _smoke_helpers as helpers
    from . import _smoke_torch_workloads as workloads
    from ._smoke_torch_device import Device
    from ._smoke_torch_dist import RankProcesses, distributed_plan, run_allreduce
    from ._smoke_torch_rank import add_rank_arguments, rank_main
else:
    import _probe_common as common
    import _smoke_engine as engine
    import _smoke_helpers as helpers
    import _smoke_torch_workloads as workloads
    from _smoke_torch_device import Device
    from _smoke_torch_dist import RankProcesses, distributed_plan, run_allreduce
    from _smoke_torch_rank import add_rank_arguments, rank_main

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

PROG = "smoke_torch.py"
# The least time a task needs to be worth starting, seconds.
TASK_MIN_S = {"matmul": 0.2, "cnn": 0.8, "bandwidth": 0.1, "p2p": 0.1}
# The numbers a workload fills in; an unfinished workload reports none of them.
MEASURED_KEYS = (
    "n",
    "repeats",
    "seconds",
    "tflops",
    "batch",
    "steps",
    "seconds_per_step",
    "steps_per_s",
    "loss_first",
    "loss_last",
    "loss_decreased",
    "bytes",
    "gbps",
    "algbw_gbps",
    "busbw_gbps",
    "ddp_step_s",
    "ddp_loss_decreased",
    "ddp_loss_first",
    "ddp_loss_last",
    "ddp_steps",
    "warmup",
    "warmup_settled",
    "spread",
    "ended_by",
    "cpu_share",
    "ops_per_sample",
    "threads",
)
# Each workload's share of the time left, relative to the others still to run (CPU workloads are also
# capped by the mode's ``cpu_cap_s``): a slow CPU baseline must not leave the GPU workloads no time.
PHASE_WEIGHTS = {"matmul": 1.0, "cnn": 1.6, "bandwidth": 0.3, "p2p": 0.5, "allreduce": 2.5}


def _record(**fields: Any) -> dict[str, Any]:
    """A workload's record: the fields that name it, then its numbers (None until measured)."""
    return dict(fields, error=None, skipped=None)


class Smoke:
    """One smoke run: discover devices, plan the tasks, run them within the budget (the engine prints the JSON)."""

    def __init__(self) -> None:
        probe = common.Probe("smoke", "torch", candidates=("torch",), conda_names=("pytorch",))
        # SIGINT raises KeyboardInterrupt: a torch call in progress is abandoned at once, not at its end.
        self.run = engine.SmokeRun("torch", probe, allreduce=None, interrupt_signals=("SIGINT",), raise_interrupt=True)
        self.run.mark_unfinished = True
        self.doc = self.run.doc
        self.errors = self.run.errors
        self.ranks = RankProcesses()
        self.run.on_finish.append(self.ranks.close)
        self.devices: list[Device] = []
        self.select = "all"
        self.params: dict[str, Any] = {}
        self.soft_deadline = float("inf")  # the end of the single-process workloads' time (set by execute)

    def body(self, args: argparse.Namespace) -> None:
        self.select = args.devices
        self.params = workloads.MODES[args.mode]
        torch = self.run.import_framework()
        if torch is None:
            return
        self.doc["framework_version"] = common.guarded(self.errors, "version", lambda: str(torch.__version__))
        self.run.say("devices")
        self.devices = self.discover(torch)
        self.doc["devices"] = [d.record for d in self.devices]
        self.execute(self.plan(torch))

    # -- devices

    def discover(self, torch: Any) -> list[Device]:
        devices = []
        if engine.wants_cpu(self.select):
            cpu = Device(torch, "cpu")
            cpuinfo = helpers.cpuinfo()
            cpu.record.update(
                name=helpers.cpu_name(cpuinfo, machine_fallback=True),
                threads=common.guarded(self.errors, "cpu threads", torch.get_num_threads),
            )
            cpu.bf16 = helpers.cpu_has_native_bf16(cpuinfo)
            devices.append(cpu)
        if engine.wants_gpus(self.select):
            devices.extend(self.discover_gpus(torch))
        return devices

    def discover_gpus(self, torch: Any) -> list[Device]:
        build = getattr(torch, "version", None)
        hip = getattr(build, "hip", None)
        if not (getattr(build, "cuda", None) or hip):
            if self.select == "cuda":
                self.errors["cuda"] = "this torch build has no CUDA or ROCm support (%s)" % torch.__version__
            return []
        available = common.guarded(self.errors, "cuda", torch.cuda.is_available, False)
        if not available:
            reason = "torch.cuda.is_available() is False"
            try:
                torch.cuda.init()
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                reason = common.error_text(exc)
            self.errors.setdefault("cuda", "%s build, but no GPU is usable: %s" % ("ROCm" if hip else "CUDA", reason))
            return []
        found = []
        count = common.guarded(self.errors, "device_count", torch.cuda.device_count, 0) or 0
        for index in range(count):
            device = Device(torch, "rocm" if hip else "cuda", index)
            props = common.guarded(self.errors, "device %d" % index, lambda: torch.cuda.get_device_properties(index))  # noqa: B023 - called at once, inside the loop
            if props is not None:
                device.capability = (props.major, props.minor)
                device.record.update(
                    name=props.name,
                    capability="%d.%d" % (props.major, props.minor),
                    memory_total_mib=int(props.total_memory) // helpers.MIB,
                )
                parts = [getattr(props, attr, None) for attr in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
                pci = [part for part in parts if isinstance(part, int)]
                if len(pci) == len(parts):
                    device.record["pci_bus_id"] = "%04x:%02x:%02x.0" % tuple(pci)
            free = common.guarded(self.errors, "memory %s" % device.id, device.free_bytes)
            if free is not None:
                device.record["memory_free_mib"] = int(free) // helpers.MIB
            found.append(device)
        return found

    # -- the plan

    def plan(self, torch: Any) -> list[engine.Task]:
        """Every task of the run, in the contract's order, each with the record it fills."""
        doc, params = self.doc, self.params
        tasks: list[engine.Task] = []

        def add(stage: str, detail: str, record: dict[str, Any], work: Any) -> None:
            doc[stage].append(record)
            if not record["skipped"]:
                tasks.append(engine.Task(stage, detail, record, work))

        for device in self.devices:
            for dtype in workloads.DTYPES:
                record = _record(device=device.id, dtype=dtype, n=None, repeats=None, seconds=None, tflops=None)
                record["skipped"] = workloads.dtype_unsupported(device, dtype, device.bf16)
                add(
                    "matmul",
                    "%s %s" % (device.id, dtype),
                    record,
                    lambda stop, d=device, t=dtype, r=record: workloads.run_matmul(
                        torch, d, t, params, stop, r, self.soft_deadline
                    ),
                )
        for device in self.devices:
            for precision in ("fp32", "amp"):
                record = _record(
                    device=device.id,
                    precision=precision,
                    batch=None,
                    steps=None,
                    seconds_per_step=None,
                    steps_per_s=None,
                    loss_first=None,
                    loss_last=None,
                    loss_decreased=None,
                )
                add(
                    "cnn",
                    "%s %s" % (device.id, precision),
                    record,
                    lambda stop, d=device, p=precision, r=record: workloads.run_cnn(
                        torch, d, p, params, stop, r, self.soft_deadline
                    ),
                )
        gpus = [d for d in self.devices if d.accelerator]
        for device in gpus:
            for direction, memory in workloads.BANDWIDTH_KINDS:
                record = _record(
                    device=device.id, direction=direction, memory=memory, bytes=None, repeats=None, gbps=None
                )
                add(
                    "bandwidth",
                    "%s %s %s" % (device.id, direction, memory),
                    record,
                    lambda stop, d=device, di=direction, m=memory, r=record: workloads.run_bandwidth(
                        torch, d, di, m, params, stop, r
                    ),
                )
        for src in gpus:
            for dst in gpus:
                if src is not dst:
                    record = _record(src=src.id, dst=dst.id, access=None, gbps=None)
                    add(
                        "p2p",
                        "%s -> %s" % (src.id, dst.id),
                        record,
                        lambda stop, s=src, d=dst, r=record: workloads.run_p2p(torch, s, d, params, stop, r),
                    )
        task = self.plan_allreduce(torch)
        if task is not None:
            tasks.append(task)
        return tasks

    def plan_allreduce(self, torch: Any) -> engine.Task | None:
        def available(backend: str) -> bool:
            dist = torch.distributed
            return bool(dist.is_available() and getattr(dist, "is_%s_available" % backend)())

        nccl = bool(common.guarded(self.errors, "nccl", lambda: available("nccl"), False))
        gloo = bool(common.guarded(self.errors, "gloo", lambda: available("gloo"), False))
        backend, world, kind, why = distributed_plan(self.devices, self.select, nccl)
        record = _record(
            backend=backend,
            world_size=world or None,
            device_kind=kind,
            bytes=None,
            repeats=None,
            seconds=None,
            algbw_gbps=None,
            busbw_gbps=None,
            ddp_step_s=None,
            ddp_loss_decreased=None,
        )
        record["skipped"] = why
        if backend == "gloo" and not gloo:
            record["skipped"] = "torch.distributed with gloo is not available in this torch build"
        self.doc["allreduce"] = record
        if record["skipped"] or backend is None:
            return None
        script = os.path.abspath(__file__)
        return engine.Task(
            "allreduce",
            "%s x%d" % (backend, world),
            record,
            lambda stop: run_allreduce(script, self.params, self.devices, self.ranks, record, backend, world, stop),
        )

    def distributed_reserve(self) -> float:
        """Seconds kept for the distributed part: its ranks start a Python and import torch before any work."""
        import_s = self.doc.get("import_s") or 3.0
        return float(import_s * 1.3 + 1.5 + self.params["dist_work_s"])

    def distributed_is_primary(self) -> bool:
        """Whether the all-reduce gets time set aside: across GPUs, or on a machine without one.

        On a single-GPU machine it falls back to gloo on the CPU, which says nothing about the GPU: it runs in
        the time the GPU workloads leave, and is skipped (with the reason) when that is too short.
        """
        record = self.doc.get("allreduce") or {}
        return record.get("device_kind") != "cpu" or not any(d.accelerator for d in self.devices)

    # -- running

    def execute(self, planned: Sequence[engine.Task]) -> None:
        clock = self.run.clock
        # The accelerators' workloads first (they are what the run is for, as in the TensorFlow smoke), then the
        # CPU baseline, capped, then the distributed part; the JSON keeps the contract's order.
        tasks = sorted(planned, key=lambda t: 2 if t.stage == "allreduce" else int(t.record.get("device") == "cpu"))
        has_dist = any(task.stage == "allreduce" for task in tasks)
        reserved = has_dist and self.distributed_is_primary()
        reserve = self.distributed_reserve() if reserved else 0.0
        self.soft_deadline = soft_deadline = clock.deadline - reserve - 0.3
        position = {id(task): index for index, task in enumerate(tasks)}
        cpu_caps = self.params["cpu_cap_s"]

        def weight(task: engine.Task) -> float:
            if task.stage == "allreduce" and reserved:
                return 0.0  # its time is the reserve, after the soft deadline
            return PHASE_WEIGHTS.get(task.stage, 1.0)

        def window(task: engine.Task) -> tuple[float, float]:
            if task.stage == "allreduce":
                # Room to kill the ranks and print the JSON within the budget; the ranks must import torch.
                needed = float(self.doc.get("import_s") or 3.0)
                # Not reserved (a CPU fallback beside one GPU): it starts only with time for the ranks' import and
                # a moment of work, so that it measures something rather than only starting.
                return clock.deadline - 0.5, needed if reserved else needed + 1.0
            now = time.perf_counter()
            rest = sum(weight(t) for t in tasks[position[id(task)] :] if not t.record.get("skipped"))
            share = (soft_deadline - now) * weight(task) / rest if rest else 0.0
            if task.record.get("device") == "cpu":
                share = min(share, cpu_caps.get(task.stage, share))
            return min(soft_deadline, now + share), TASK_MIN_S.get(task.stage, 0.2)

        def release(task: engine.Task) -> None:
            named = (task.record.get("device"), task.record.get("src"), task.record.get("dst"))
            for device in self.devices:
                if device.id in named:
                    device.release()

        self.run.new_runner(MEASURED_KEYS).run(tasks, window, release)


def main(argv: Sequence[str] | None = None) -> None:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = engine.parse_args(args_list, PROG, add_rank_arguments)
    except engine.ArgumentError:
        args = None  # the run below parses again and reports the bad arguments in its JSON
    if args is not None and args.rank is not None:
        engine.install_interrupt_flag(engine.Clock(), ("SIGINT",), raise_interrupt=True)
        rank_main(args)
        return
    smoke = Smoke()
    smoke.run.main(args_list, PROG, smoke.body, add_rank_arguments)


if __name__ == "__main__":
    main()
