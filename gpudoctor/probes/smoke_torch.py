"""PyTorch smoke workloads: run as ``TARGET_PYTHON smoke_torch.py --mode quick|full --budget S [--devices D]``.

Real work on every visible accelerator and on the CPU, measured in one run: matmul TFLOP/s per dtype,
a CNN training step (fp32 and mixed precision), host/device copy bandwidth, peer-to-peer copies and an
all-reduce plus a DistributedDataParallel step across local GPUs (NCCL) or two CPU processes (gloo).
Prints ONE JSON document on stdout (the contract is in ``gpudoctor/facts/smoke_model.py``) and
``@@gpudoctor-progress`` lines on the real stderr while it runs.  Standard library + torch only.

One workload code path for every device: :class:`Device` is the thin layer that differs (where tensors
live, how to synchronise, which clock times an operation, how much memory is free), so what runs on the
CPU of a test machine is exactly what runs on a GPU.  On CUDA, operations are timed by CUDA events on the
device's stream (device-side timing, like NVIDIA's nvbandwidth); on the CPU by ``perf_counter`` around
the synchronous call.

Behaving well on someone else's machine: matrices and buffers are sized to at most a quarter of the
device's *free* memory, every workload stops at its share of ``--budget`` (the whole run, distributed
part included, ends within it), SIGINT aborts the workload in progress and still prints what finished,
and the rank processes of the distributed part die with the probe.

Choices, and why:

- Matmul dtypes: fp32 everywhere; tf32 on NVIDIA GPUs of compute capability 8.0+ (cuBLAS's
  ``allow_tf32`` switched on for that run only, off for fp32 so fp32 is true fp32); fp16 on GPUs; bf16 on
  GPUs of capability 8.0+ (and ROCm), and on CPUs with native bf16 instructions (avx512_bf16 / amx_bf16,
  Arm bf16), where oneDNN runs it several times faster than fp32 (measured here: ~0.6-0.9 TFLOP/s against
  0.19 in fp32 on the 2 cores of a virtual Xeon with AMX); on other CPUs bf16 is emulated and slower than fp32, and fp16
  has no fast CPU kernels, so they are listed as skipped with the reason rather than timed.
- Matmul size: the mode's n, halved until three n×n matrices fit in a quarter of the free memory, halved
  further if one op is too slow for the budget, doubled while one op is so fast the size cannot fill
  the device.  The median of the timed repeats is reported (robust to a noisy, shared machine).
- CNN: PyTorch's MNIST example net on one fixed synthetic batch whose labels come from a fixed random
  projection (seeded), trained with Adam (lr 1e-3): its loss falls from ~2.3 within a few steps on every
  device and precision, so "the loss went down" proves real training in seconds.  Mixed precision is
  autocast fp16 + GradScaler on GPUs, autocast bf16 on the CPU.
- Distributed: one process per rank (this script with ``--rank``), rendezvous over TCP on 127.0.0.1 at a
  free port; NCCL with one rank per GPU when there are 2+ GPUs, else gloo with 2 CPU processes.  busbw is
  nccl-tests' all-reduce bus bandwidth, algbw × 2(n−1)/n, from the slowest rank's time per repeat.

Beyond the contract the document carries: ``installed``, ``import_ok``, ``import_error``, ``import_s``,
``module_file`` (from ``_probe_common.Probe``), ``log_lines`` and ``warnings`` (what torch printed or
warned while captured), ``errors["import"]`` (torch absent or failing to import) and ``errors["cuda"]``
(a CUDA/ROCm build with no usable GPU: the init error); ``allreduce`` adds ``ddp_loss_first``,
``ddp_loss_last`` and ``ddp_steps``; ``p2p`` rows add ``bytes``, ``repeats`` and ``skipped``.  A d2d
bandwidth row is bytes copied per second, as nvbandwidth reports it: device memory moves twice that.

With ``--rank R`` the script is one rank of the distributed part (started by the probe itself).
"""

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

try:  # run as a script from the probes directory (the normal case)
    import _probe_common as common
except ImportError:  # imported as gpudoctor.probes.smoke_torch (unit tests of the pure helpers)
    from . import _probe_common as common

SMOKE_VERSION = 1
MIB = 1 << 20

# What each mode does.  quick: the whole suite in about 10 s on a GPU and < 30 s on a 2-core CPU; full:
# bigger sizes and more repeats, numbers worth comparing between machines.
MODES = {
    "quick": {
        "budget": 25.0,
        # Matmul n per device kind: 8192 saturates any data-centre GPU (1.1 TFLOP per fp32 matmul); on a CPU
        # 1536 is past the cache-bound sizes (a 2-core AVX-512 machine gives the same rate at 1536 and 2048,
        # less steady at 1024) and still repeats a dozen times in 0.5 s.
        "matmul_n": {"cpu": 1536, "gpu": 8192},
        "matmul_min_s": 0.5,  # repeat until this much timed work (or max repeats)
        "matmul_max_repeats": 50,
        "matmul_max_op_s": 0.25,  # one op slower than this: halve n (a small GPU must not eat the budget)
        "matmul_min_op_s": 0.005,  # one op faster than this: double n, up to matmul_max_n (a big CPU, a fast GPU)
        "matmul_max_n": {"cpu": 4096, "gpu": 16384},
        "cnn_batch": 64,
        "cnn_warmup": 3,
        "cnn_steps": 12,
        "bw_bytes": 64 * MIB,
        "bw_repeats": 5,
        "p2p_bytes": 32 * MIB,
        "p2p_repeats": 3,
        "ar_bytes": {"gpu": 64 * MIB, "cpu": 8 * MIB},
        "ar_repeats": 5,
        "ddp_steps": 6,
        "dist_work_s": 3.0,  # estimate of the distributed part's work after start-up
    },
    "full": {
        "budget": 180.0,
        "matmul_n": {"cpu": 2048, "gpu": 8192},
        "matmul_min_s": 2.0,
        "matmul_max_repeats": 200,
        "matmul_max_op_s": 1.0,
        "matmul_min_op_s": 0.01,
        "matmul_max_n": {"cpu": 8192, "gpu": 16384},
        "cnn_batch": 256,
        "cnn_warmup": 5,
        "cnn_steps": 40,
        "bw_bytes": 256 * MIB,
        "bw_repeats": 20,
        "p2p_bytes": 256 * MIB,
        "p2p_repeats": 10,
        "ar_bytes": {"gpu": 256 * MIB, "cpu": 64 * MIB},
        "ar_repeats": 20,
        "ddp_steps": 15,
        "dist_work_s": 20.0,
    },
}

MEMORY_FRACTION = 0.25  # never more than this share of a device's free memory: the GPU may be shared
MIN_MATMUL_N = 256
# Shares of the time left (after the distributed part's reserve) for each stage present in a run.
STAGE_WEIGHTS = {"matmul": 0.35, "cnn": 0.45, "bandwidth": 0.08, "p2p": 0.12}
# The least time a task needs to be worth starting, seconds.
TASK_MIN_S = {"matmul": 0.2, "cnn": 0.8, "bandwidth": 0.1, "p2p": 0.1}
CHILD_KILL_GRACE_S = 1.0

CPU_DTYPE_SKIPS = {
    "tf32": "TF32 is a mode of NVIDIA tensor cores (compute capability 8.0+), not of CPUs",
    "fp16": "fp16 is not a CPU training dtype (most CPUs have no fast fp16 matmul kernels)",
}
BANDWIDTH_KINDS = (("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned"), ("d2d", "device"))


# --- pure helpers (unit-tested without torch) -----------------------------------------------------------


def median(values):
    """The median of the numbers in ``values`` (None entries ignored), or None when there are none."""
    data = sorted(v for v in values if v is not None)
    if not data:
        return None
    middle = len(data) // 2
    if len(data) % 2:
        return data[middle]
    return (data[middle - 1] + data[middle]) / 2.0


def matmul_tflops(n, seconds):
    """TFLOP/s of one n×n by n×n matmul taking ``seconds`` (2n³ floating-point operations)."""
    if not n or not seconds or seconds <= 0:
        return None
    return 2.0 * n**3 / seconds / 1e12


def busbw(algbw, world_size):
    """All-reduce bus bandwidth from algorithm bandwidth, as nccl-tests defines it: algbw × 2(n−1)/n."""
    if algbw is None or not world_size or world_size < 1:
        return None
    return algbw * 2.0 * (world_size - 1) / world_size


def choose_matmul_n(preferred, free_bytes, elem_size, matrices=3, fraction=MEMORY_FRACTION, minimum=MIN_MATMUL_N):
    """The largest n, halving from ``preferred``, whose ``matrices`` n×n matrices fit in ``fraction`` of free memory.

    ``free_bytes`` None (unknown) trusts ``preferred``; None is returned when not even ``minimum`` fits.
    """
    if free_bytes is None:
        return preferred
    allowed = free_bytes * fraction
    n = preferred
    while n >= minimum:
        if matrices * n * n * elem_size <= allowed:
            return n
        n //= 2
    # halving may step over the minimum (1536 → 384 → 192): the minimum itself is the last try
    return minimum if minimum <= preferred and matrices * minimum * minimum * elem_size <= allowed else None


def choose_bytes(preferred, free_bytes, buffers=1, fraction=MEMORY_FRACTION, minimum=MIB):
    """Bytes per buffer for a copy test: ``preferred``, halved until ``buffers`` of them fit; None below ``minimum``."""
    if free_bytes is None:
        return preferred
    allowed = free_bytes * fraction
    size = preferred
    while size >= minimum:
        if buffers * size <= allowed:
            return size
        size //= 2
    return None


def stage_caps(available_s, counts, weights=STAGE_WEIGHTS):
    """Seconds each task of a stage may take: ``available_s`` split by stage weight, then by the stage's task count.

    ``counts``: {stage: number of tasks that will really run}; stages without tasks give their share away.
    """
    present = {stage: count for stage, count in counts.items() if count}
    total_weight = sum(weights.get(stage, 0.0) for stage in present)
    caps = {}
    for stage, count in present.items():
        share = available_s * weights.get(stage, 0.0) / total_weight if total_weight else 0.0
        caps[stage] = max(0.0, share / count)
    return caps


def cpu_has_native_bf16(cpuinfo_text):
    """Whether /proc/cpuinfo lists bf16 instructions (x86 avx512_bf16 / amx_bf16, Arm "bf16" in Features)."""
    for line in (cpuinfo_text or "").splitlines():
        key, sep, value = line.partition(":")
        if not sep or key.strip().lower() not in ("flags", "features"):
            continue
        flags = set(value.split())
        if flags & {"avx512_bf16", "amx_bf16", "bf16", "avx_ne_convert"}:
            return True
    return False


def free_port():
    """A TCP port on 127.0.0.1 that is free now (the kernel picks it; a race with another process is possible)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _read_file(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _cpu_name(cpuinfo_text):
    for line in (cpuinfo_text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in ("model name", "hardware", "cpu model") and value.strip():
            return value.strip()
    import platform

    return platform.processor() or platform.machine() or None


def host_available_bytes():
    """MemAvailable of the host (Linux), else free physical pages; None when unknown."""
    text = _read_file("/proc/meminfo") or ""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            try:
                return int(parts[1]) * 1024
            except (IndexError, ValueError):
                break
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --- the device layer: everything that differs between the CPU and a GPU --------------------------------


class Device:
    """One device the workloads run on: ``cpu`` or ``cuda:N`` (NVIDIA, or AMD through ROCm's HIP)."""

    def __init__(self, torch, kind, index=None):
        self.torch = torch
        self.kind = kind  # "cpu", "cuda", "rocm"
        self.index = index
        self.id = "cpu" if index is None else "cuda:%d" % index
        self.torch_device = torch.device(self.id)
        self.capability = None
        self.record = {"id": self.id, "kind": kind}

    @property
    def accelerator(self):
        return self.index is not None

    def activate(self):
        """A context in which this device is current: events, streams and default allocations land on it."""
        if self.accelerator:
            return self.torch.cuda.device(self.index)
        import contextlib

        return contextlib.nullcontext()

    def sync(self):
        if self.accelerator:
            self.torch.cuda.synchronize(self.index)

    def mark(self):
        """A point in time on this device's work queue: a recorded CUDA event, or the host clock.

        The CPU's work is synchronous, so the host clock read after a call is the time the work ended.
        """
        if self.accelerator:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()  # on the current stream of the current device (see activate)
            return event
        return time.perf_counter()

    def elapsed(self, start, end):
        """Seconds between two marks; for CUDA events only after :meth:`sync`."""
        if self.accelerator:
            return start.elapsed_time(end) / 1000.0
        return end - start

    def free_bytes(self):
        if self.accelerator:
            return self.torch.cuda.mem_get_info(self.index)[0]
        return host_available_bytes()

    def release(self):
        """Give cached memory back (a shared GPU's other users need it more than our allocator cache does)."""
        if self.accelerator:
            try:
                self.torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a courtesy
                pass


def time_repeated(devices, call, min_s, max_repeats, stop_at, min_repeats=1):
    """Seconds of each of several back-to-back ``call()``s, timed on ``devices[0]``.

    Calls are queued in growing chunks (1, 2, 4 ... 16) between synchronisations, so that a GPU is fed
    without host round trips, and repeated until ``min_s`` of timed work, ``max_repeats`` calls, or the
    host clock passes ``stop_at`` (after ``min_repeats``).  ``devices``: the timing device first, then any
    other device to synchronise (the destination of a peer copy).
    """
    timer = devices[0]
    times = []
    chunk = 1
    while len(times) < max_repeats:
        marks = []
        for _ in range(min(chunk, max_repeats - len(times))):
            start = timer.mark()
            call()
            marks.append((start, timer.mark()))
        for device in devices:
            device.sync()
        times.extend(timer.elapsed(start, end) for start, end in marks)
        enough = min_s > 0 and sum(times) >= min_s  # min_s 0: exactly max_repeats, unless time runs out
        if len(times) >= min_repeats and (enough or time.perf_counter() >= stop_at):
            break
        chunk = min(chunk * 2, 16)
    return times


# --- the CNN: PyTorch's classic MNIST example network, on a learnable synthetic task --------------------


def make_net(torch):
    nn = torch.nn
    functional = torch.nn.functional

    class MnistNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = functional.relu(self.conv1(x))
            x = functional.relu(self.conv2(x))
            x = functional.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = functional.relu(self.fc1(x))
            x = self.dropout2(x)
            return self.fc2(x)

    return MnistNet()


def synthetic_batch(torch, batch, seed, device):
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

    def __init__(self, torch, device, precision, model, batch, seed=7):
        self.torch = torch
        self.device = device
        self.model = model
        self.x, self.y = synthetic_batch(torch, batch, seed, device.torch_device)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.amp = precision == "amp"
        self.scaler = None
        if self.amp and device.accelerator:
            # fp16 on GPUs needs loss scaling; bf16 (the CPU's autocast dtype) has fp32's range and does not.
            self.autocast_args = ("cuda", torch.float16)
            amp = getattr(torch, "amp", None)
            if amp is not None and hasattr(amp, "GradScaler"):
                self.scaler = amp.GradScaler("cuda")
            else:  # torch < 2.3
                self.scaler = torch.cuda.amp.GradScaler()
        else:
            self.autocast_args = ("cpu" if not device.accelerator else "cuda", torch.bfloat16)

    def step(self):
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


def train_steps(trainer, warmup, steps, stop_at, after_step=None, hard_stop=None, min_steps=2):
    """Run up to warmup + steps steps; (step seconds, losses).

    Fewer once the host clock passes ``stop_at`` after ``min_steps`` steps (the loss needs a few steps to
    show that it goes down), or passes ``hard_stop`` after 2.  Every step is timed on the trainer's device;
    the timed set is what follows the warm-up.  ``after_step(loss)`` may turn the loss into the number to
    keep (an all-reduced mean in DDP).
    """
    device = trainer.device
    hard_stop = stop_at if hard_stop is None else hard_stop
    times, losses = [], []
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


# --- the workloads -------------------------------------------------------------------------------------

DTYPES = ("fp32", "tf32", "fp16", "bf16")


def _torch_dtype(torch, name):
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def dtype_unsupported(device, dtype, cpu_bf16):
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

    def __init__(self, torch, device, enabled):
        self.matmul = torch.backends.cuda.matmul if device.accelerator else None
        self.enabled = enabled
        self.saved = None

    def __enter__(self):
        if self.matmul is not None:
            self.saved = self.matmul.allow_tf32
            self.matmul.allow_tf32 = self.enabled
        return self

    def __exit__(self, *exc):
        if self.matmul is not None and self.saved is not None:
            self.matmul.allow_tf32 = self.saved
        return False


def run_matmul(torch, device, dtype, params, stop_at, record):
    kind = "gpu" if device.accelerator else "cpu"
    torch_dtype = _torch_dtype(torch, dtype)
    elem = torch.tensor([], dtype=torch_dtype).element_size()
    n = choose_matmul_n(params["matmul_n"][kind], device.free_bytes(), elem)
    if n is None:
        record["skipped"] = "not enough free memory for the smallest matrices (%d)" % MIN_MATMUL_N
        return
    largest = choose_matmul_n(params["matmul_max_n"][kind], device.free_bytes(), elem) or n
    grown = shrunk = False
    with device.activate(), _Tf32(torch, device, dtype == "tf32"):
        while True:
            a = torch.randn(n, n, device=device.torch_device, dtype=torch_dtype)
            b = torch.randn(n, n, device=device.torch_device, dtype=torch_dtype)
            call = functools.partial(
                torch.matmul, a, b, out=torch.empty(n, n, device=device.torch_device, dtype=torch_dtype)
            )
            del a, b  # the call holds them; dropping it frees them
            call()  # warm-up: library handles, kernel choice, first-touch of the output
            first = time_repeated([device], call, 0.0, 1, stop_at)[0]
            if first > params["matmul_max_op_s"] and n // 2 >= MIN_MATMUL_N and not grown:
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
        times = time_repeated([device], call, params["matmul_min_s"], params["matmul_max_repeats"], stop_at)
        del call
    seconds = median(times)
    record.update(n=n, repeats=len(times), seconds=seconds, tflops=matmul_tflops(n, seconds))


def run_cnn(torch, device, precision, params, stop_at, record, hard_stop=None):
    """``stop_at``: this task's share of the budget, which it may pass to make its minimum of steps;
    ``hard_stop``: the end of the time for all the single-process workloads, which it may not."""
    torch.manual_seed(0)
    with device.activate():
        model = make_net(torch).to(device.torch_device)
        trainer = Trainer(torch, device, precision, model, params["cnn_batch"])
        times, losses = train_steps(
            trainer,
            params["cnn_warmup"],
            params["cnn_steps"],
            stop_at,
            hard_stop=hard_stop,
            min_steps=params["cnn_warmup"] + 5,
        )
        del trainer, model
    seconds = median(times)
    record.update(
        batch=params["cnn_batch"],
        steps=len(times),
        seconds_per_step=seconds,
        steps_per_s=(1.0 / seconds) if seconds else None,
        loss_first=losses[0] if losses else None,
        loss_last=losses[-1] if losses else None,
        loss_decreased=(losses[-1] < losses[0]) if len(losses) >= 2 else None,
    )


def run_bandwidth(torch, device, direction, memory, params, stop_at, record):
    """One copy direction, timed by CUDA events on the device's stream (nvbandwidth's method).

    h2d/d2h: between a host buffer (pageable, or pinned with ``non_blocking`` so the copy is a true DMA)
    and a device buffer; d2d: between two buffers on the device.  ``gbps`` is bytes copied per second
    (a d2d copy reads and writes each byte, so it moves twice that through device memory).
    """
    buffers = 2 if direction == "d2d" else 1
    nbytes = choose_bytes(params["bw_bytes"], device.free_bytes(), buffers=buffers)
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
        call()
        call()
        device.sync()
        times = time_repeated([device], call, 0.0, params["bw_repeats"], stop_at)
    seconds = median(times)
    record.update(bytes=nbytes, repeats=len(times), gbps=(nbytes / seconds / 1e9) if seconds else None)


def run_p2p(torch, src, dst, params, stop_at, record):
    """Peer access as CUDA reports it, then a copy from ``src`` to ``dst`` timed on the source device.

    torch copies between GPUs on the source device's current stream (after syncing with the destination's),
    so events recorded there bracket the copy; without peer access it is staged through the host.
    """
    torch_cuda = torch.cuda
    record["access"] = bool(torch_cuda.can_device_access_peer(src.index, dst.index))
    known = [b for b in (src.free_bytes(), dst.free_bytes()) if b is not None]
    free = min(known) if known else None
    nbytes = choose_bytes(params["p2p_bytes"], free, buffers=1)
    if nbytes is None:
        record["error"] = "not enough free device memory"
        return
    with src.activate():
        source = torch.empty(nbytes, dtype=torch.uint8, device=src.torch_device)
        source.fill_(1)
        target = torch.empty(nbytes, dtype=torch.uint8, device=dst.torch_device)
        call = functools.partial(target.copy_, source, non_blocking=True)
        del source, target  # the call holds them; dropping it frees them
        call()
        src.sync()
        dst.sync()
        times = time_repeated([src, dst], call, 0.0, params["p2p_repeats"], stop_at)
        del call
    seconds = median(times)
    record.update(bytes=nbytes, repeats=len(times), gbps=(nbytes / seconds / 1e9) if seconds else None)


# --- the distributed part: all-reduce + DDP step, one process per rank ----------------------------------


def distributed_plan(devices, select, nccl_available):
    """(backend, world size, device kind) for the all-reduce, or (None, 0, None, why skipped)."""
    gpus = [d for d in devices if d.accelerator]
    if len(gpus) >= 2 and nccl_available:
        return "nccl", len(gpus), "cuda", None
    if select == "cuda":
        if len(gpus) >= 2:
            return None, 0, None, "NCCL is not available in this torch build"
        return None, 0, None, "needs 2+ GPUs (found %d); --devices cpu/all tests gloo on the CPU" % len(gpus)
    return "gloo", 2, "cpu", None


class RankProcesses:
    """The rank processes of the distributed part, so that whatever happens none outlives the probe."""

    def __init__(self):
        self.procs = []
        self.files = []

    def start(self, argv_for_rank, world, env):
        for rank in range(world):
            err = tempfile.TemporaryFile()  # noqa: SIM115 - the file outlives this block on purpose
            self.files.append(err)
            # Rank 0 reports on stdout; the others' stdout would only carry stray prints.
            stdout = subprocess.PIPE if rank == 0 else subprocess.DEVNULL
            self.procs.append(
                subprocess.Popen(argv_for_rank(rank), stdin=subprocess.DEVNULL, stdout=stdout, stderr=err, env=env)
            )

    def wait(self, hard_stop):
        """Until every rank exited, one failed (others then get a moment), or the host clock passes ``hard_stop``."""
        failed_at = None
        while True:
            codes = [proc.poll() for proc in self.procs]
            if all(code is not None for code in codes):
                return "done"
            now = time.perf_counter()
            if any(code not in (None, 0) for code in codes):
                failed_at = failed_at or now
                if now - failed_at > 2.0:
                    return "failed"
            if now >= hard_stop:
                return "timeout"
            time.sleep(0.05)

    def kill(self):
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    proc.terminate()
                except OSError:
                    pass
        ends = time.perf_counter() + CHILD_KILL_GRACE_S
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.01, ends - time.perf_counter()))
            except subprocess.TimeoutExpired:
                try:
                    proc.kill()
                    proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass

    def rank0_lines(self):
        if not self.procs or self.procs[0].stdout is None:
            return []
        try:
            data = self.procs[0].stdout.read() if self.procs[0].poll() is not None else b""
        except (OSError, ValueError):
            return []
        lines = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                lines.append(value)
        return lines

    def stderr_tail(self, lines=8):
        tails = []
        for rank, handle in enumerate(self.files):
            try:
                handle.seek(0)
                text = handle.read().decode("utf-8", "replace")
            except (OSError, ValueError):
                continue
            last = [line for line in text.splitlines() if line.strip()][-lines:]
            if last:
                tails.append("rank %d: %s" % (rank, " | ".join(last)))
        return "; ".join(tails)

    def close(self):
        self.kill()
        for proc in self.procs:
            if proc.stdout is not None:
                try:
                    proc.stdout.close()
                except OSError:
                    pass
        for handle in self.files:
            try:
                handle.close()
            except OSError:
                pass


def run_allreduce(smoke, record, backend, world, stop_at):
    params = smoke.params
    nbytes = params["ar_bytes"]["gpu" if backend == "nccl" else "cpu"]
    if backend == "nccl":
        free = [d.free_bytes() for d in smoke.devices if d.accelerator]
        nbytes = choose_bytes(nbytes, min(free) if free and None not in free else None, buffers=2)
        if nbytes is None:
            record["skipped"] = "not enough free device memory"
            return
    port = free_port()
    deadline_epoch = time.time() + (stop_at - time.perf_counter())
    threads = max(1, cpu_count() // world) if backend == "gloo" else 0

    def argv(rank):
        return [
            sys.executable,
            os.path.abspath(__file__),
            "--rank",
            str(rank),
            "--world-size",
            str(world),
            "--port",
            str(port),
            "--backend",
            backend,
            "--bytes",
            str(nbytes),
            "--repeats",
            str(params["ar_repeats"]),
            "--steps",
            str(params["ddp_steps"]),
            "--batch",
            str(params["cnn_batch"]),
            "--deadline",
            "%.3f" % deadline_epoch,
            "--threads",
            str(threads),
        ]

    env = dict(os.environ)
    env.pop(common.FD_CAPTURE_ENV, None)
    if backend == "gloo" and sys.platform.startswith("linux"):
        # All ranks are on this host: loopback, whatever the host name resolves to (in containers it often
        # resolves to an address gloo cannot connect through).  A user's own setting wins.
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    record.update(bytes=nbytes)
    ranks = RankProcesses()
    smoke.children = ranks
    try:
        ranks.start(argv, world, env)
        outcome = ranks.wait(stop_at)
        if outcome != "done":
            ranks.kill()
        reports = ranks.rank0_lines()
        _fold_rank_reports(record, reports, world)
        if outcome == "timeout" and record.get("seconds") is None:
            record["skipped"] = "budget: the %d rank processes did not finish in the time left" % world
        elif record.get("error") is None and (outcome == "failed" or record.get("seconds") is None):
            codes = [proc.returncode for proc in ranks.procs]
            record["error"] = "rank processes ended with exit codes %s: %s" % (
                codes,
                ranks.stderr_tail() or "no output",
            )
        elif outcome == "timeout" and record.get("ddp_step_s") is None and record.get("error") is None:
            record["error"] = "the DDP step did not finish in the time left (all-reduce measured)"
    finally:
        ranks.close()
        smoke.children = None


def _fold_rank_reports(record, reports, world):
    for report in reports:
        phase = report.get("phase")
        if phase == "error" and not record.get("error"):
            record["error"] = report.get("error")
        elif phase == "allreduce":
            seconds = report.get("seconds")
            record.update(repeats=report.get("repeats"), seconds=seconds)
            if seconds:
                algbw = record["bytes"] / seconds / 1e9
                record.update(algbw_gbps=algbw, busbw_gbps=busbw(algbw, world))
            if report.get("wrong"):
                record["error"] = report["wrong"]
        elif phase == "ddp":
            record.update(
                ddp_step_s=report.get("step_s"),
                ddp_loss_decreased=report.get("loss_decreased"),
                ddp_loss_first=report.get("loss_first"),
                ddp_loss_last=report.get("loss_last"),
                ddp_steps=report.get("steps"),
            )


def _die_with_parent():
    """Linux: this rank gets SIGKILL when the probe that started it dies (even by SIGKILL)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - the probe's own kill and the deadline still stop us
        pass


def rank_main(args):
    """One rank: init the process group, time all-reduces, then DDP-train the CNN for a few steps.

    Rank 0 writes one JSON line per phase on stdout as soon as the phase is done, so that a later
    failure or the deadline still leaves the earlier numbers.
    """
    _die_with_parent()
    common.drop_probes_dir_from_path()
    out_fd = os.dup(1)
    os.dup2(2, 1)  # a framework's prints go to the log, never into the report lines

    def report(doc):
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
        report({"phase": "error", "error": common.error_text(exc)})
        sys.stderr.write(common.error_record(exc)["traceback_tail"] + "\n")
        sys.stderr.flush()
        os._exit(1)
    sys.stderr.flush()
    os._exit(0)


def _rank_work(args, report):
    import datetime

    import torch
    import torch.distributed as dist

    world, rank = args.world_size, args.rank
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

    def stop_at(share):
        """The host-clock time by which ``share`` of what is left until the deadline has passed."""
        return time.perf_counter() + max(0.0, args.deadline - time.time()) * share

    def agreed(count):
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
        report({"phase": "allreduce", "seconds": median(times), "repeats": repeats, "wrong": wrong})

        torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts rank 0's)
        model = make_net(torch).to(device.torch_device)
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank] if device.accelerator else None)
        trainer = Trainer(torch, device, "fp32", ddp, args.batch, seed=1000 + rank)

        def mean_loss(loss):
            value = loss.detach().float().reshape(1).clone()
            dist.all_reduce(value)
            return value.item() / world

        first_times, losses = train_steps(trainer, 0, 1, time.perf_counter() + 3600, after_step=mean_loss)
        # At least 3 more steps whatever the deadline: with dropout, one step's loss is noise, and a verdict
        # on "the loss went down" from two points would be a coin toss on a busy machine.
        steps = agreed(
            max(
                3,
                min(
                    args.steps - 1,
                    int(
                        max(0.0, args.deadline - time.time() - 0.5)
                        * 0.8
                        / max(first_times[0] if first_times else 1.0, 1e-6)
                    ),
                ),
            )
        )
        times, more = train_steps(trainer, 0, steps, time.perf_counter() + 3600, after_step=mean_loss)
        losses += more
        report(
            {
                "phase": "ddp",
                "step_s": median(times),
                "steps": len(losses),
                "loss_first": losses[0],
                "loss_last": losses[-1],
                "loss_decreased": (losses[-1] < losses[0]) if len(losses) >= 4 else None,
            }
        )
    dist.destroy_process_group()


# The numbers a workload fills in; an unfinished workload reports none of them.
_MEASURED_KEYS = (
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
)

# --- the run ---------------------------------------------------------------------------------------------


class Smoke:
    """One smoke run: discover devices, plan the tasks, run them within the budget, print the JSON."""

    def __init__(self, args, progress_stream):
        self.args = args
        self.params = MODES[args.mode]
        self.budget = args.budget if args.budget is not None else self.params["budget"]
        self.probe = common.Probe("smoke", "torch", candidates=("torch",), conda_names=("pytorch",))
        self.started = self.probe.started
        self.deadline = self.started + self.budget
        self.progress_stream = progress_stream
        self.errors = {}
        self.devices = []
        self.children = None
        self.interrupted = False
        self.budget_skips = 0
        self.pending = []  # records of planned workloads not finished yet
        self.soft_deadline = self.deadline  # the end of the single-process workloads' time (set by execute)
        doc = self.probe.doc
        doc.update(
            {
                "framework": "torch",
                "framework_version": None,
                "mode": args.mode,
                "budget_s": self.budget,
                "elapsed_s": None,
                "stopped_by": None,
                "devices": [],
                "matmul": [],
                "cnn": [],
                "bandwidth": [],
                "p2p": [],
                "allreduce": None,
            }
        )
        doc["probe_version"] = SMOKE_VERSION

    def progress(self, stage, detail="", done=None, total=None):
        common.progress(stage, detail, done, total, stream=self.progress_stream)

    def run(self):
        self.progress("import", "torch")
        if not self.probe.installed():
            self.errors["import"] = "torch is not installed in %s" % sys.executable
            return
        torch = self.probe.import_framework()
        if torch is None:
            failure = self.probe.doc.get("import_error") or {}
            self.errors["import"] = "import torch failed: %s: %s" % (failure.get("type"), failure.get("message"))
            return
        self.probe.doc["framework_version"] = common.guarded(self.errors, "version", lambda: str(torch.__version__))
        self.progress("devices")
        self.devices = self.discover(torch)
        self.probe.doc["devices"] = [d.record for d in self.devices]
        tasks = self.plan(torch)
        self.execute(torch, tasks)

    # -- devices

    def discover(self, torch):
        select = self.args.devices
        devices = []
        if select in ("all", "cpu"):
            cpu = Device(torch, "cpu")
            cpuinfo = _read_file("/proc/cpuinfo")
            cpu.record.update(
                name=_cpu_name(cpuinfo), threads=common.guarded(self.errors, "cpu threads", torch.get_num_threads)
            )
            cpu.bf16 = cpu_has_native_bf16(cpuinfo)
            devices.append(cpu)
        if select in ("all", "cuda"):
            devices.extend(self.discover_gpus(torch))
        return devices

    def discover_gpus(self, torch):
        build = getattr(torch, "version", None)
        hip = getattr(build, "hip", None)
        if not (getattr(build, "cuda", None) or hip):
            if self.args.devices == "cuda":
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
                    memory_total_mib=int(props.total_memory) // MIB,
                )
                parts = [getattr(props, attr, None) for attr in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
                if all(isinstance(part, int) for part in parts):
                    device.record["pci_bus_id"] = "%04x:%02x:%02x.0" % tuple(parts)
            free = common.guarded(self.errors, "memory %s" % device.id, device.free_bytes)
            if free is not None:
                device.record["memory_free_mib"] = int(free) // MIB
            found.append(device)
        return found

    # -- the plan

    def plan(self, torch):
        """Every task of the run, in the contract's order, each with the record it fills."""
        doc = self.probe.doc
        tasks = []
        for device in self.devices:
            for dtype in DTYPES:
                record = {
                    "device": device.id,
                    "dtype": dtype,
                    "n": None,
                    "repeats": None,
                    "seconds": None,
                    "tflops": None,
                    "error": None,
                    "skipped": None,
                }
                doc["matmul"].append(record)
                why = dtype_unsupported(device, dtype, getattr(device, "bf16", False))
                if why:
                    record["skipped"] = why
                    continue
                tasks.append(
                    (
                        "matmul",
                        "%s %s" % (device.id, dtype),
                        record,
                        lambda stop, d=device, t=dtype, r=record: run_matmul(torch, d, t, self.params, stop, r),
                    )
                )
        for device in self.devices:
            for precision in ("fp32", "amp"):
                record = {
                    "device": device.id,
                    "precision": precision,
                    "batch": None,
                    "steps": None,
                    "seconds_per_step": None,
                    "steps_per_s": None,
                    "loss_first": None,
                    "loss_last": None,
                    "loss_decreased": None,
                    "error": None,
                    "skipped": None,
                }
                doc["cnn"].append(record)
                tasks.append(
                    (
                        "cnn",
                        "%s %s" % (device.id, precision),
                        record,
                        lambda stop, d=device, p=precision, r=record: run_cnn(
                            torch, d, p, self.params, stop, r, self.soft_deadline
                        ),
                    )
                )
        gpus = [d for d in self.devices if d.accelerator]
        for device in gpus:
            for direction, memory in BANDWIDTH_KINDS:
                record = {
                    "device": device.id,
                    "direction": direction,
                    "memory": memory,
                    "bytes": None,
                    "repeats": None,
                    "gbps": None,
                    "error": None,
                    "skipped": None,
                }
                doc["bandwidth"].append(record)
                tasks.append(
                    (
                        "bandwidth",
                        "%s %s %s" % (device.id, direction, memory),
                        record,
                        lambda stop, d=device, di=direction, m=memory, r=record: run_bandwidth(
                            torch, d, di, m, self.params, stop, r
                        ),
                    )
                )
        for src in gpus:
            for dst in gpus:
                if src is dst:
                    continue
                record = {"src": src.id, "dst": dst.id, "access": None, "gbps": None, "error": None, "skipped": None}
                doc["p2p"].append(record)
                tasks.append(
                    (
                        "p2p",
                        "%s -> %s" % (src.id, dst.id),
                        record,
                        lambda stop, s=src, d=dst, r=record: run_p2p(torch, s, d, self.params, stop, r),
                    )
                )
        nccl = bool(
            common.guarded(
                self.errors,
                "nccl",
                lambda: torch.distributed.is_available() and torch.distributed.is_nccl_available(),
                False,
            )
        )
        gloo = bool(
            common.guarded(
                self.errors,
                "gloo",
                lambda: torch.distributed.is_available() and torch.distributed.is_gloo_available(),
                False,
            )
        )
        backend, world, kind, why = distributed_plan(self.devices, self.args.devices, nccl)
        record = {
            "backend": backend,
            "world_size": world or None,
            "device_kind": kind,
            "bytes": None,
            "repeats": None,
            "seconds": None,
            "algbw_gbps": None,
            "busbw_gbps": None,
            "ddp_step_s": None,
            "ddp_loss_decreased": None,
            "error": None,
            "skipped": why,
        }
        if backend == "gloo" and not gloo:
            record["skipped"] = "torch.distributed with gloo is not available in this torch build"
        doc["allreduce"] = record
        if not record["skipped"]:
            tasks.append(
                (
                    "allreduce",
                    "%s x%d" % (backend, world),
                    record,
                    lambda stop, r=record, b=backend, w=world: run_allreduce(self, r, b, w, stop),
                )
            )
        return tasks

    def distributed_reserve(self):
        """Seconds kept for the distributed part: its ranks start a Python and import torch before any work."""
        import_s = self.probe.doc.get("import_s") or 3.0
        return import_s * 1.3 + 1.5 + self.params["dist_work_s"]

    # -- running

    def execute(self, torch, tasks):
        total = len(tasks)
        has_dist = any(stage == "allreduce" for stage, _, _, _ in tasks)
        reserve = self.distributed_reserve() if has_dist else 0.0
        self.soft_deadline = soft_deadline = self.deadline - reserve - 0.3
        counts = {}
        for stage, _, _, _ in tasks:
            counts[stage] = counts.get(stage, 0) + 1
        caps = stage_caps(soft_deadline - time.perf_counter(), counts)
        self.pending = [record for _, _, record, _ in tasks]
        for done, (stage, detail, record, call) in enumerate(tasks):
            if self.interrupted:
                break
            now = time.perf_counter()
            if stage == "allreduce":
                stop_at = self.deadline - 0.5  # room to kill the ranks and print the JSON within the budget
                needed = self.probe.doc.get("import_s") or 3.0
            else:
                stop_at = min(soft_deadline, now + caps.get(stage, 0.0))
                needed = TASK_MIN_S.get(stage, 0.2)
            if stop_at - now < needed:
                record["skipped"] = "budget: the %g s time budget was spent" % self.budget
                self.budget_skips += 1
                self.pending.remove(record)
                continue
            self.progress(stage, detail, done, total)
            devices = [d for d in self.devices if d.id in (record.get("device"), record.get("src"), record.get("dst"))]
            try:
                call(stop_at)
            except KeyboardInterrupt:
                self.interrupted = True  # the workload in progress is abandoned: finish() marks it and the rest
                break
            except Exception as exc:  # noqa: BLE001 - one workload's failure (an OOM, a CUDA error) is its result
                record["error"] = common.error_text(exc)
            finally:
                for device in devices:
                    device.release()
            self.pending.remove(record)
        if not self.interrupted:
            self.progress("done", "", total, total)

    def mark_unfinished(self):
        """Workloads that never finished (interrupted, or a bug of ours): skipped, their partial numbers dropped."""
        reason = "interrupted" if self.interrupted else "not run (the probe stopped early)"
        for record in self.pending:
            for key in _MEASURED_KEYS:
                if key in record:
                    record[key] = None
            if not record.get("error"):
                record["skipped"] = reason
        self.pending = []

    def finish(self, probe_error=None):
        if self.children is not None:
            self.children.close()
        self.mark_unfinished()
        self.probe.capture.stop()
        doc = self.probe.doc
        if self.interrupted:
            doc["stopped_by"] = "interrupt"
        elif self.budget_skips:
            doc["stopped_by"] = "budget"
        if doc.get("installed"):
            doc["log_lines"] = self.probe.capture.log_lines()
            doc["warnings"] = self.probe.capture.warnings()
        doc["errors"] = self.errors
        doc["probe_error"] = probe_error
        doc["elapsed_s"] = round(time.perf_counter() - self.started, 3)
        common.emit(doc)  # leaves through os._exit


def parse_args(argv):
    import argparse

    parser = argparse.ArgumentParser(description="gpudoctor smoke workloads (PyTorch)")
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument("--budget", type=float, default=None, help="seconds for the whole run")
    parser.add_argument("--devices", choices=("all", "cpu", "cuda"), default="all")
    # One rank of the distributed part (started by the probe itself).
    parser.add_argument("--rank", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--world-size", type=int, default=2, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--backend", default="gloo", help=argparse.SUPPRESS)
    parser.add_argument("--bytes", type=int, default=MIB, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=5, help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=5, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=64, help=argparse.SUPPRESS)
    parser.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # SIGINT is how the parent asks us to stop and report; a shell's background job inherits it ignored.
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):  # not the main thread (imported and called oddly): keep what is there
        pass
    if args.rank is not None:
        return rank_main(args)
    common.drop_probes_dir_from_path()
    # Progress goes to the real stderr, which fd 2 stops being once the framework's output is captured.
    try:
        progress_stream = os.fdopen(os.dup(2), "w")
    except OSError:
        progress_stream = None
    smoke = Smoke(args, progress_stream)
    probe_error = None
    try:
        try:
            smoke.run()
        except KeyboardInterrupt:
            smoke.interrupted = True
        except BaseException as exc:  # noqa: BLE001 - our own bug: still one JSON document, with the traceback
            probe_error = common.error_record(exc)["traceback_tail"] or common.error_text(exc)
        # A second Ctrl-C must not cost the report of what finished.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        smoke.interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    smoke.finish(probe_error)


if __name__ == "__main__":
    sys.exit(main())
