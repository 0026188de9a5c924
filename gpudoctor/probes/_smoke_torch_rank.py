"""One rank of the PyTorch smoke's distributed part: an all-reduce, checked and timed, then a DDP training step.

Runs inside the target Python with torch (untyped here: ``Any``), as ``smoke_torch.py --rank R ...``
started by the probe (``_smoke_torch_dist.py``).  Rank 0 writes one JSON line per phase on stdout as soon
as the phase is done, so that a later failure or the deadline still leaves the earlier numbers.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or __package__:
    from . import _probe_capture, _probe_common
    from . import _smoke_helpers as helpers
    from ._smoke_torch_device import Device, Trainer, make_net, train_steps
else:
    import _probe_capture
    import _probe_common
    import _smoke_helpers as helpers
    from _smoke_torch_device import Device, Trainer, make_net, train_steps

if TYPE_CHECKING:
    import argparse

    Report = Callable[[dict[str, Any]], None]


def add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    """The hidden arguments of one rank (started by the probe itself)."""
    parser.add_argument("--rank", type=int, default=None)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--bytes", type=int, default=helpers.MIB)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--deadline", type=float, default=0.0)
    parser.add_argument("--threads", type=int, default=0)


def _die_with_parent() -> None:
    """Linux: this rank gets SIGKILL when the probe that started it dies (even by SIGKILL)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - the probe's own kill and the deadline still stop us
        pass


def rank_main(args: argparse.Namespace) -> None:
    """One rank: init the process group, time all-reduces, then DDP-train the CNN for a few steps; leaves."""
    _die_with_parent()
    _probe_common.drop_probes_dir_from_path()
    out_fd = os.dup(1)
    os.dup2(2, 1)  # a framework's prints go to the log, never into the report lines

    def report(doc: dict[str, Any]) -> None:
        if args.rank == 0:
            data = (json.dumps(doc) + "\n").encode("utf-8")
            while data:
                data = data[os.write(out_fd, data) :]

    import threading

    # Whatever hangs (a collective waiting for a dead peer), this rank is gone shortly after the deadline.
    watchdog = threading.Timer(max(1.0, args.deadline - time.time() + 3.0), lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()
    try:
        _rank_work(args, report)
    except KeyboardInterrupt:
        os._exit(130)
    except BaseException as exc:  # noqa: BLE001 - report it, then leave
        report({"phase": "error", "error": _probe_capture.error_text(exc)})
        sys.stderr.write(_probe_capture.error_record(exc)["traceback_tail"] + "\n")
        sys.stderr.flush()
        os._exit(1)
    sys.stderr.flush()
    os._exit(0)


def _rank_work(args: argparse.Namespace, report: Report) -> None:
    import datetime

    import torch
    import torch.distributed as dist

    world: int = args.world_size
    rank: int = args.rank
    if args.backend == "nccl":
        torch.cuda.set_device(rank)
        device = Device(torch, "rocm" if getattr(torch.version, "hip", None) else "cuda", rank)
    else:
        if args.threads > 0:
            torch.set_num_threads(args.threads)
        device = Device(torch, "cpu")
    left = max(5.0, args.deadline - time.time())
    dist.init_process_group(
        args.backend,
        init_method="tcp://127.0.0.1:%d" % args.port,
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=left),
    )

    def agreed(count: int) -> int:
        """Rank 0's number for everyone: every rank must run the same number of collectives."""
        value = torch.tensor([count], dtype=torch.int64, device=device.torch_device)
        dist.broadcast(value, 0)
        return int(value.item())

    with device.activate():
        # Correctness first: the sum of (rank + 1) over ranks, everywhere.
        numel = max(1, args.bytes // 4)
        data = torch.full((numel,), float(rank + 1), dtype=torch.float32, device=device.torch_device)
        dist.all_reduce(data)
        expected = world * (world + 1) / 2.0
        wrong = None
        sample = data[:: max(1, numel // 1024)]
        if not bool(torch.all(sample == expected).item()):
            wrong = "all-reduce gave a wrong sum: expected %g, got values from %g to %g" % (
                expected,
                float(sample.min().item()),
                float(sample.max().item()),
            )
        data.zero_()  # zeros stay zeros through repeated sums: no overflow, however many repeats
        dist.all_reduce(data)  # warm-up
        device.sync()
        started = time.perf_counter()
        dist.all_reduce(data)
        device.sync()
        one = time.perf_counter() - started
        # Half of what is left for the all-reduce, the rest for DDP (its first step builds buckets).
        budget = max(0.0, args.deadline - time.time()) * 0.4
        repeats = agreed(max(1, min(args.repeats, int(budget / max(one, 1e-6)))))
        dist.barrier()
        times = []
        for _ in range(repeats):
            start = device.mark()
            dist.all_reduce(data)
            end = device.mark()
            device.sync()
            times.append(device.elapsed(start, end))
        # Each repeat lasts as long as its slowest rank.
        slowest = torch.tensor(times, dtype=torch.float64, device=device.torch_device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        times = slowest.tolist()
        del data, slowest
        report({"phase": "allreduce", "seconds": helpers.median(times), "repeats": repeats, "wrong": wrong})

        torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts rank 0's)
        model = make_net(torch).to(device.torch_device)
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank] if device.accelerator else None)
        trainer = Trainer(torch, device, "fp32", ddp, args.batch, seed=1000 + rank)

        def mean_loss(loss: Any) -> float:
            value = loss.detach().float().reshape(1).clone()
            dist.all_reduce(value)
            return float(value.item()) / world

        first_times, losses = train_steps(trainer, 0, 1, time.perf_counter() + 3600, after_step=mean_loss)
        # At least 3 more steps whatever the deadline: with dropout, one step's loss is noise, and a verdict
        # on "the loss went down" from two points would be a coin toss on a busy machine.
        per_step = max(first_times[0] if first_times else 1.0, 1e-6)
        affordable = int(max(0.0, args.deadline - time.time() - 0.5) * 0.8 / per_step)
        steps = agreed(max(3, min(args.steps - 1, affordable)))
        times, more = train_steps(trainer, 0, steps, time.perf_counter() + 3600, after_step=mean_loss)
        losses += more
        report(
            {
                "phase": "ddp",
                "step_s": helpers.median(times),
                "steps": len(losses),
                "loss_first": losses[0],
                "loss_last": losses[-1],
                "loss_decreased": (losses[-1] < losses[0]) if len(losses) >= 4 else None,
            }
        )
    dist.destroy_process_group()
