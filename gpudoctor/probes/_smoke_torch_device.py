"""The PyTorch smoke's device layer and its training step: what differs between the CPU and a GPU, in one place.

Runs inside the target Python with torch (the framework is untyped here: ``Any``).  A :class:`Device` says
where tensors live, how to synchronise, which clock times an operation and how much memory is free, so
that what runs on the CPU of a test machine is exactly what runs on a GPU.  On CUDA, operations are timed
by CUDA events on the device's stream (device-side timing, like NVIDIA's nvbandwidth); on the CPU by
``perf_counter`` around the synchronous call.

The CNN is PyTorch's MNIST example net on one fixed synthetic batch whose labels come from a fixed random
projection (seeded), trained with Adam (lr 1e-3): its loss falls from ~2.3 within a few steps on every
device and precision, so "the loss went down" proves real training in seconds.  Mixed precision is
autocast fp16 + GradScaler on GPUs, autocast bf16 on the CPU.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or __package__:
    from . import _smoke_helpers as helpers
else:
    import _smoke_helpers as helpers

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager


class Device:
    """One device the workloads run on: ``cpu`` or ``cuda:N`` (NVIDIA, or AMD through ROCm's HIP)."""

    def __init__(self, torch: Any, kind: str, index: int | None = None) -> None:
        self.torch = torch
        self.kind = kind  # "cpu", "cuda", "rocm"
        self.index = index
        self.id = "cpu" if index is None else "cuda:%d" % index
        self.torch_device = torch.device(self.id)
        self.capability: tuple[int, int] | None = None
        self.bf16 = False  # the CPU's native bf16 instructions (set by discovery)
        self.record: dict[str, Any] = {"id": self.id, "kind": kind}

    @property
    def accelerator(self) -> bool:
        return self.index is not None

    def activate(self) -> AbstractContextManager[object]:
        """A context in which this device is current: events, streams and default allocations land on it."""
        if self.accelerator:
            current: AbstractContextManager[object] = self.torch.cuda.device(self.index)
            return current
        import contextlib

        return contextlib.nullcontext()

    def sync(self) -> None:
        if self.accelerator:
            self.torch.cuda.synchronize(self.index)

    def mark(self) -> Any:
        """A point in time on this device's work queue: a recorded CUDA event, or the host clock (a float).

        The CPU's work is synchronous, so the host clock read after a call is the time the work ended.
        """
        if self.accelerator:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()  # on the current stream of the current device (see activate)
            return event
        return time.perf_counter()

    def elapsed(self, start: Any, end: Any) -> float:
        """Seconds between two marks; for CUDA events only after :meth:`sync`."""
        if self.accelerator:
            return float(start.elapsed_time(end)) / 1000.0
        return float(end - start)

    def free_bytes(self) -> int | None:
        if self.accelerator:
            return int(self.torch.cuda.mem_get_info(self.index)[0])
        return helpers.host_available_bytes()

    def release(self) -> None:
        """Give cached memory back (a shared GPU's other users need it more than our allocator cache does)."""
        if self.accelerator:
            try:
                self.torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a courtesy
                pass


def time_ops(devices: Sequence[Device], call: Callable[[], object], ops: int) -> float:
    """Seconds per call of ``ops`` back-to-back ``call()``s, timed on ``devices[0]``.

    The calls are queued between two marks with no host round trip (a GPU is fed as in real work), then
    every device in ``devices`` is synchronised (the destination of a peer copy too).
    """
    timer = devices[0]
    start = timer.mark()
    for _ in range(ops):
        call()
    end = timer.mark()
    for device in devices:
        device.sync()
    return timer.elapsed(start, end) / max(1, ops)


# --- the CNN: PyTorch's classic MNIST example network, on a learnable synthetic task --------------------


def make_net(torch: Any) -> Any:
    """PyTorch's MNIST example network (a ``torch.nn.Module``)."""
    nn = torch.nn
    functional = torch.nn.functional
    module: Any = nn.Module

    class MnistNet(module):  # type: ignore[misc]  # subclassing Any: torch.nn.Module is untyped at this boundary
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x: Any) -> Any:
            x = functional.relu(self.conv1(x))
            x = functional.relu(self.conv2(x))
            x = functional.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = functional.relu(self.fc1(x))
            x = self.dropout2(x)
            return self.fc2(x)

    return MnistNet()


def synthetic_batch(torch: Any, batch: int, seed: int, device: Any) -> tuple[Any, Any]:
    """A fixed batch of 28×28 images whose labels come from a fixed random projection: a task the net can fit.

    The projection is the same for every seed (every rank learns the same function); the images differ.
    Made on the CPU with seeded generators, so every device trains on the very same numbers.
    """
    images = torch.randn(batch, 1, 28, 28, generator=torch.Generator().manual_seed(seed))
    projection = torch.randn(28 * 28, 10, generator=torch.Generator().manual_seed(1234))
    labels = (images.flatten(1) @ projection).argmax(dim=1)
    return images.to(device), labels.to(device)


class Trainer:
    """One optimiser step of the CNN at a time, fp32 or mixed precision, on any device."""

    def __init__(self, torch: Any, device: Device, precision: str, model: Any, batch: int, seed: int = 7) -> None:
        self.torch = torch
        self.device = device
        self.model = model
        self.x, self.y = synthetic_batch(torch, batch, seed, device.torch_device)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.amp = precision == "amp"
        self.scaler: Any = None
        if self.amp and device.accelerator:
            # fp16 on GPUs needs loss scaling; bf16 (the CPU's autocast dtype) has fp32's range and does not.
            self.autocast_args: tuple[str, Any] = ("cuda", torch.float16)
            amp = getattr(torch, "amp", None)
            if amp is not None and hasattr(amp, "GradScaler"):
                self.scaler = amp.GradScaler("cuda")
            else:  # torch < 2.3
                self.scaler = torch.cuda.amp.GradScaler()
        else:
            self.autocast_args = ("cpu" if not device.accelerator else "cuda", torch.bfloat16)

    def step(self) -> Any:
        """One forward + backward + optimiser step; the loss tensor (not synchronised)."""
        torch = self.torch
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast(self.autocast_args[0], dtype=self.autocast_args[1], enabled=self.amp):
            loss = torch.nn.functional.cross_entropy(self.model(self.x), self.y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
        return loss


def train_steps(
    trainer: Trainer,
    warmup: int,
    steps: int,
    stop_at: float,
    after_step: Callable[[Any], float] | None = None,
    hard_stop: float | None = None,
    min_steps: int = 2,
) -> tuple[list[float], list[float]]:
    """Run up to warmup + steps steps; (step seconds, losses).

    Fewer once the host clock passes ``stop_at`` after ``min_steps`` steps (the loss needs a few steps to
    show that it goes down), or passes ``hard_stop`` after 2.  Every step is timed on the trainer's device;
    the timed set is what follows the warm-up.  ``after_step(loss)`` may turn the loss into the number to
    keep (an all-reduced mean in DDP).
    """
    device = trainer.device
    hard_stop = stop_at if hard_stop is None else hard_stop
    times: list[float] = []
    losses: list[float] = []
    for index in range(warmup + steps):
        start = device.mark()
        loss = trainer.step()
        end = device.mark()
        device.sync()
        times.append(device.elapsed(start, end))
        losses.append(float(after_step(loss) if after_step else loss.detach().float().item()))
        now = time.perf_counter()
        if (index + 1 >= min_steps and now >= stop_at) or (index + 1 >= 2 and now >= hard_stop):
            break
    timed = times[warmup:] if len(times) > warmup else times[1:]
    return timed, losses
