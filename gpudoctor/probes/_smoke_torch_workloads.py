"""The PyTorch smoke's single-process workloads: matmul per dtype, the CNN step, copy bandwidth, peer copies.

Runs inside the target Python with torch (untyped here: ``Any``).  Each workload fills the record it was
planned with and stops at ``stop_at`` (host clock).  Choices, and why:

- Matmul dtypes: fp32 everywhere; tf32 on NVIDIA GPUs of compute capability 8.0+ (cuBLAS's
  ``allow_tf32`` switched on for that run only, off for fp32 so fp32 is true fp32); fp16 on GPUs; bf16 on
  GPUs of capability 8.0+ (and ROCm), and on CPUs with native bf16 instructions (avx512_bf16 / amx_bf16,
  Arm bf16), where oneDNN runs it several times faster than fp32 (measured here: ~0.6-0.9 TFLOP/s against
  0.19 in fp32 on the 2 cores of a virtual Xeon with AMX); on other CPUs bf16 is emulated and slower than
  fp32, and fp16 has no fast CPU kernels, so they are listed as skipped with the reason rather than timed.
- Matmul size: the mode's n, halved until three n×n matrices fit in a quarter of the free memory, halved
  further if one op is too slow for the budget, doubled while one op is so fast the size cannot fill
  the device.
- Every figure is measured the same way (``_smoke_measure.py``): warm-up until two samples agree, then
  samples of at least ``min_sample_s`` until their spread is small or the workload's window ends; the
  median is reported with its spread, repetitions and warm-up count, and on the CPU the thread count.
- A d2d bandwidth row is bytes copied per second, as nvbandwidth reports it: device memory moves twice that.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _smoke_helpers as helpers
    from . import _smoke_measure as measuring
    from ._smoke_torch_device import Device, Trainer, make_net, time_ops
else:
    import _smoke_helpers as helpers
    import _smoke_measure as measuring
    from _smoke_torch_device import Device, Trainer, make_net, time_ops

MIB = helpers.MIB

# What each mode does (its budget is protocol.SMOKE_BUDGET_S).
MODES: dict[str, dict[str, Any]] = {
    "quick": {
        # Matmul n per device kind: 8192 saturates any data-centre GPU (1.1 TFLOP per fp32 matmul); on a CPU
        # 1536 is past the cache-bound sizes (a 2-core AVX-512 machine gives the same rate at 1536 and 2048,
        # less steady at 1024).
        "matmul_n": {"cpu": 1536, "gpu": 8192},
        "matmul_max_op_s": 0.25,  # one op slower than this: halve n (a small GPU must not eat the budget)
        "matmul_min_op_s": 0.005,  # one op faster than this: double n, up to matmul_max_n (a big CPU, a fast GPU)
        "matmul_max_n": {"cpu": 4096, "gpu": 16384},
        # The least time one timed sample lasts (several ops per sample when one is shorter): scheduler
        # jitter on a shared CPU, launch cost and timer resolution on a GPU stay small parts of it.
        "min_sample_s": {"cpu": 0.15, "gpu": 0.02},
        "max_samples": 25,
        # The most one CPU workload may take: the CPU baseline must not starve the GPU workloads.
        "cpu_cap_s": {"matmul": 2.5, "cnn": 3.5},
        "cnn_batch": 64,
        "bw_bytes": 64 * MIB,
        "p2p_bytes": 32 * MIB,
        "ar_bytes": {"gpu": 64 * MIB, "cpu": 8 * MIB},
        "ar_repeats": 5,
        "ddp_steps": 6,
        "dist_work_s": 3.0,  # estimate of the distributed part's work after start-up
    },
    "full": {
        "matmul_n": {"cpu": 2048, "gpu": 8192},
        "matmul_max_op_s": 1.0,
        "matmul_min_op_s": 0.01,
        "matmul_max_n": {"cpu": 8192, "gpu": 16384},
        "min_sample_s": {"cpu": 0.3, "gpu": 0.05},
        "max_samples": 60,
        "cpu_cap_s": {"matmul": 12.0, "cnn": 20.0},
        "cnn_batch": 256,
        "bw_bytes": 256 * MIB,
        "p2p_bytes": 256 * MIB,
        "ar_bytes": {"gpu": 256 * MIB, "cpu": 64 * MIB},
        "ar_repeats": 20,
        "ddp_steps": 15,
        "dist_work_s": 20.0,
    },
}

DTYPES = ("fp32", "tf32", "fp16", "bf16")
CPU_DTYPE_SKIPS = {
    "tf32": "TF32 is a mode of NVIDIA tensor cores (compute capability 8.0+), not of CPUs",
    "fp16": "fp16 is not a CPU training dtype (most CPUs have no fast fp16 matmul kernels)",
}
BANDWIDTH_KINDS = (("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned"), ("d2d", "device"))


def _torch_dtype(torch: Any, name: str) -> Any:
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def dtype_unsupported(device: Device, dtype: str, cpu_bf16: bool) -> str | None:
    """Why ``dtype`` is not measured on ``device``, or None when it is."""
    if not device.accelerator:
        if dtype in CPU_DTYPE_SKIPS:
            return CPU_DTYPE_SKIPS[dtype]
        if dtype == "bf16" and not cpu_bf16:
            return "this CPU has no native bf16 instructions (avx512_bf16, amx_bf16): bf16 would be emulated"
        return None
    major = device.capability[0] if device.capability else None
    if dtype == "tf32":
        if device.kind != "cuda":
            return "TF32 is measured on NVIDIA GPUs only"
        if major is None or major < 8:
            return "TF32 needs compute capability 8.0+ (Ampere or newer)"
    if dtype == "bf16" and device.kind == "cuda" and (major is None or major < 8):
        return "bf16 needs compute capability 8.0+ (older GPUs only emulate it)"
    if dtype == "fp16" and device.kind == "cuda" and device.capability and tuple(device.capability) < (5, 3):
        return "fp16 arithmetic needs compute capability 5.3+"
    return None


class _Tf32:
    """Sets cuBLAS's TF32 switch for one measurement and puts it back (fp32 must be measured as true fp32)."""

    def __init__(self, torch: Any, device: Device, enabled: bool) -> None:
        self.matmul = torch.backends.cuda.matmul if device.accelerator else None
        self.enabled = enabled
        self.saved: bool | None = None

    def __enter__(self) -> _Tf32:
        if self.matmul is not None:
            self.saved = self.matmul.allow_tf32
            self.matmul.allow_tf32 = self.enabled
        return self

    def __exit__(self, *exc: object) -> None:
        if self.matmul is not None and self.saved is not None:
            self.matmul.allow_tf32 = self.saved


def _kind(device: Device) -> str:
    return "gpu" if device.accelerator else "cpu"


def _measure(
    devices: list[Device],
    time_ops_of: Any,
    params: dict[str, Any],
    stop_at: float,
    hard_stop: float | None,
    max_samples: int | None = None,
    threads: int | None = None,
) -> tuple[measuring.Measured, dict[str, Any]]:
    """Measure with the shared method; the record fields it fills (repeats, warm-up, spread, ops per sample,
    and with ``threads`` (a CPU workload) the share of their CPU time it got)."""
    share = measuring.CpuShare(threads) if threads else None
    sampler = measuring.Sampler(
        share.wrap(time_ops_of) if share else time_ops_of, params["min_sample_s"][_kind(devices[0])]
    )
    measured = measuring.measure(
        sampler, stop_at, max_samples=max_samples or params["max_samples"], hard_stop=hard_stop
    )
    fields = measured.fields()
    fields["ops_per_sample"] = sampler.ops
    if share is not None:
        fields["cpu_share"] = share.median
    return measured, fields


def cpu_threads(torch: Any, device: Device) -> int | None:
    """The intra-op threads a CPU workload runs with (None on a GPU): the CPU baseline says what it used."""
    return None if device.accelerator else int(torch.get_num_threads())


def run_matmul(
    torch: Any,
    device: Device,
    dtype: str,
    params: dict[str, Any],
    stop_at: float,
    record: dict[str, Any],
    hard_stop: float | None = None,
) -> None:
    kind = _kind(device)
    torch_dtype = _torch_dtype(torch, dtype)
    elem = torch.tensor([], dtype=torch_dtype).element_size()
    n = helpers.choose_matmul_n(params["matmul_n"][kind], device.free_bytes(), elem)
    if n is None:
        record["skipped"] = "not enough free memory for the smallest matrices (%d)" % helpers.MIN_MATMUL_N
        return
    largest = helpers.choose_matmul_n(params["matmul_max_n"][kind], device.free_bytes(), elem) or n
    grown = shrunk = False
    with device.activate(), _Tf32(torch, device, dtype == "tf32"):
        while True:
            a = torch.randn(n, n, device=device.torch_device, dtype=torch_dtype)
            b = torch.randn(n, n, device=device.torch_device, dtype=torch_dtype)
            call = functools.partial(
                torch.matmul, a, b, out=torch.empty(n, n, device=device.torch_device, dtype=torch_dtype)
            )
            del a, b  # the call holds them; dropping it frees them
            call()  # library handles, kernel choice, first-touch of the output
            first = time_ops([device], call, 1)
            if first > params["matmul_max_op_s"] and n // 2 >= helpers.MIN_MATMUL_N and not grown:
                n //= 2  # too slow a device for this size within the budget: a smaller one still measures it
                shrunk = True
            elif (
                first < params["matmul_min_op_s"] and n * 2 <= largest and not shrunk and time.perf_counter() < stop_at
            ):
                n *= 2  # so fast that the size may not fill the device (many CPU cores, a big GPU)
                grown = True
            else:
                break
            del call
        threads = cpu_threads(torch, device)
        timed = functools.partial(time_ops, [device], call)
        measured, fields = _measure([device], timed, params, stop_at, hard_stop, threads=threads)
        del call, timed
    seconds = measured.median
    record.update(fields)
    record.update(n=n, seconds=seconds, tflops=helpers.matmul_tflops(n, seconds), threads=threads)


def run_cnn(
    torch: Any,
    device: Device,
    precision: str,
    params: dict[str, Any],
    stop_at: float,
    record: dict[str, Any],
    hard_stop: float | None = None,
) -> None:
    """``stop_at``: this task's share of the budget; ``hard_stop``: the end of the time for all the
    single-process workloads.  One sample is one or more training steps; every step's loss is kept."""
    torch.manual_seed(0)
    losses: list[float] = []
    with device.activate():
        model = make_net(torch).to(device.torch_device)
        trainer = Trainer(torch, device, precision, model, params["cnn_batch"])

        def steps(count: int, trainer: Trainer = trainer) -> float:
            total = 0.0
            for _ in range(count):
                start = device.mark()
                loss = trainer.step()
                end = device.mark()
                device.sync()
                total += device.elapsed(start, end)
                losses.append(float(loss.detach().float().item()))
            return total / max(1, count)

        threads = cpu_threads(torch, device)
        measured, fields = _measure([device], steps, params, stop_at, hard_stop, threads=threads)
        del trainer, model, steps
    seconds = measured.median
    record.update(fields)
    record.update(
        batch=params["cnn_batch"],
        steps=len(losses),
        seconds_per_step=seconds,
        steps_per_s=(1.0 / seconds) if seconds else None,
        loss_first=losses[0] if losses else None,
        loss_last=losses[-1] if losses else None,
        loss_decreased=(losses[-1] < losses[0]) if len(losses) >= 2 else None,
        threads=threads,
    )


def run_bandwidth(
    torch: Any,
    device: Device,
    direction: str,
    memory: str,
    params: dict[str, Any],
    stop_at: float,
    record: dict[str, Any],
) -> None:
    """One copy direction, timed by CUDA events on the device's stream (nvbandwidth's method).

    h2d/d2h: between a host buffer (pageable, or pinned with ``non_blocking`` so the copy is a true DMA)
    and a device buffer; d2d: between two buffers on the device.  ``gbps`` is bytes copied per second
    (a d2d copy reads and writes each byte, so it moves twice that through device memory).
    """
    buffers = 2 if direction == "d2d" else 1
    nbytes = helpers.choose_bytes(params["bw_bytes"], device.free_bytes(), buffers=buffers)
    if nbytes is None:
        record["skipped"] = "not enough free device memory"
        return
    pinned = memory == "pinned"
    with device.activate():
        on_device = torch.empty(nbytes, dtype=torch.uint8, device=device.torch_device)
        on_device.fill_(1)
        if direction == "d2d":
            call = functools.partial(torch.empty_like(on_device).copy_, on_device)
        else:
            host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
            host.fill_(1)  # touch every page: first-touch faults are not transfer time
            if direction == "h2d":
                call = functools.partial(on_device.copy_, host, non_blocking=pinned)
            else:
                call = functools.partial(host.copy_, on_device, non_blocking=pinned)
        measured, fields = _measure([device], lambda ops: time_ops([device], call, ops), params, stop_at, None)
    seconds = measured.median
    record.update(fields)
    record.update(bytes=nbytes, gbps=(nbytes / seconds / 1e9) if seconds else None)


def run_p2p(
    torch: Any, src: Device, dst: Device, params: dict[str, Any], stop_at: float, record: dict[str, Any]
) -> None:
    """Peer access as CUDA reports it, then a copy from ``src`` to ``dst`` timed on the source device.

    torch copies between GPUs on the source device's current stream (after syncing with the destination's),
    so events recorded there bracket the copy; without peer access it is staged through the host.
    """
    torch_cuda = torch.cuda
    record["access"] = bool(torch_cuda.can_device_access_peer(src.index, dst.index))
    known = [b for b in (src.free_bytes(), dst.free_bytes()) if b is not None]
    free = min(known) if known else None
    nbytes = helpers.choose_bytes(params["p2p_bytes"], free, buffers=1)
    if nbytes is None:
        record["error"] = "not enough free device memory"
        return
    with src.activate():
        source = torch.empty(nbytes, dtype=torch.uint8, device=src.torch_device)
        source.fill_(1)
        target = torch.empty(nbytes, dtype=torch.uint8, device=dst.torch_device)
        call = functools.partial(target.copy_, source, non_blocking=True)
        del source, target  # the call holds them; dropping it frees them
        measured, fields = _measure([src, dst], functools.partial(time_ops, [src, dst], call), params, stop_at, None)
        del call
    seconds = measured.median
    record.update(fields)
    record.update(bytes=nbytes, gbps=(nbytes / seconds / 1e9) if seconds else None)
