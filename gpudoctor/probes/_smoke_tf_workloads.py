"""The TensorFlow smoke's matmul and copy workloads, each filling its record within the clock's budget.

Runs inside the target Python with TensorFlow (untyped here: ``Any``).

- matmul: fp32 with TensorFloat-32 disabled, and tf32 with it enabled on capability >= 8.0 (TensorFlow
  enables TF32 by default on Ampere and newer, so an "fp32" model there really runs tf32); fp16; bf16 on
  the CPU and on capability >= 8.0.  One timed sample chains matmuls in one call (``ops_per_sample`` per
  call), so that a call's launch and sync cost vanish next to the work.
- Every figure is measured as the torch smoke measures it (``_smoke_measure.py``): warm-up until stable,
  samples until the spread is small or the workload's cap ends, median with spread, repetitions, warm-up.
- bandwidth: host->device / device->host copies of a TensorFlow CPU tensor inside a ``tf.function``.
  TensorFlow does not let us choose pinned or pageable host memory, so they are reported as "pageable"
  (TensorFlow's ordinary CPU allocator); the device-to-device copy is not measured here (an on-device
  ``tf.identity`` is not a copy).  Best effort: the torch smoke measures bandwidth the nvbandwidth way.
- p2p: a GPU-to-GPU ``tf.identity`` between every ordered pair; TensorFlow does not say whether the copy
  went peer-to-peer or through the host, so ``access`` is null.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _smoke_helpers as helpers
    from . import _smoke_measure as measuring
else:
    import _smoke_helpers as helpers
    import _smoke_measure as measuring

if TYPE_CHECKING:
    from ._smoke_engine import Clock
    from ._smoke_tf_devices import Device

# Per mode (its budget is protocol.SMOKE_BUDGET_S): sizes and time caps.  "min_sample_s": the least time
# one timed sample lasts (as in the torch smoke).
MODES: dict[str, dict[str, Any]] = {
    "quick": {
        "matmul_n": {"cpu": 2048, "gpu": 8192},
        "min_sample_s": {"cpu": 0.15, "gpu": 0.02},
        "max_samples": 25,
        "matmul_cap_s": 1.5,
        "cnn_batch": 64,
        "cnn_cap_s": 3.0,
        "copy_bytes": 64 << 20,
        "copy_cap_s": 0.5,
    },
    "full": {
        "matmul_n": {"cpu": 4096, "gpu": 16384},
        "min_sample_s": {"cpu": 0.3, "gpu": 0.05},
        "max_samples": 60,
        "matmul_cap_s": 10.0,
        "cnn_batch": 128,
        "cnn_cap_s": 20.0,
        "copy_bytes": 256 << 20,
        "copy_cap_s": 3.0,
    },
}

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
CPU_TF32_SKIP = "TF32 is a mode of NVIDIA tensor cores (compute capability 8.0+), not of CPUs"


def sync(tensor: Any) -> Any:
    """Wait for a device result: bring one element to the host (the whole tensor is not copied)."""
    flat = tensor
    while getattr(flat, "shape", None) is not None and len(flat.shape) > 0:
        flat = flat[0]
    return flat.numpy()


def set_tf32(tf: Any, enabled: bool) -> None:
    setter = getattr(tf.config.experimental, "enable_tensor_float_32_execution", None)
    if setter is not None:
        setter(bool(enabled))


def tf32_enabled(tf: Any) -> bool | None:
    getter = getattr(tf.config.experimental, "tensor_float_32_execution_enabled", None)
    return bool(getter()) if getter is not None else None


def matmul_size(device: Device, dtype: str, params: dict[str, Any]) -> int:
    """n for n×n matrices: the mode's size, halved until four of them fit in a quarter of the free memory."""
    n: int = params["matmul_n"]["cpu" if device.is_cpu else "gpu"]
    free = device.free_bytes()
    if free is None and not device.is_cpu:
        n = min(n, 8192)  # free memory unknown: at most 1 GiB of fp32 matrices
    elif free is not None:
        while n > 256 and 4 * n * n * DTYPE_BYTES[dtype] > free // 4:
            n //= 2
    return n


def matmul_skip_reason(device: Device, dtype: str) -> str | None:
    """Why ``dtype`` is not measured on ``device``, or None."""
    if device.is_cpu:
        return CPU_TF32_SKIP if dtype == "tf32" else None
    capability = device.capability()
    if dtype == "tf32" and device.kind != "cuda":
        return "TF32 is a mode of NVIDIA tensor cores, not of %s GPUs" % device.kind
    if dtype in ("tf32", "bf16") and device.kind == "cuda":
        if capability is not None and capability < (8, 0):
            return "%s needs compute capability >= 8.0 (this GPU: %d.%d)" % ((dtype,) + capability)
    return None


def run_matmul(
    tf: Any, device: Device, dtype: str, params: dict[str, Any], clock: Clock, result: dict[str, Any]
) -> None:
    """Median seconds of one n×n×n matmul: ``ops_per_sample`` chained matmuls per call, one scalar synced per call."""
    tf_dtype = {"fp32": tf.float32, "tf32": tf.float32, "fp16": tf.float16, "bf16": tf.bfloat16}[dtype]
    n = matmul_size(device, dtype, params)
    result["n"] = n
    if not device.is_cpu:
        set_tf32(tf, dtype == "tf32")
    with tf.device(device.tf_name):
        a = tf.cast(tf.random.uniform((n, n), -1.0, 1.0, seed=1), tf_dtype)
        # Scaled so that a chain of products keeps its magnitude (entries' variance stays 1/3): no overflow in fp16.
        b = tf.cast(tf.random.uniform((n, n), -1.0, 1.0, seed=2) * math.sqrt(3.0 / n), tf_dtype)

    def chain(x: Any, w: Any, inner: Any) -> Any:
        with tf.device(device.tf_name):
            for _ in tf.range(inner):
                x = tf.matmul(x, w)
            return tf.cast(x[0, 0], tf.float32)

    traced = tf.function(chain)  # a fresh function per run: it is traced after the TF32 setting above

    traced(a, b, tf.constant(1, tf.int32)).numpy()  # trace and first run

    def time_ops(ops: int) -> float:
        clock.check()
        begin = time.perf_counter()
        traced(a, b, tf.constant(ops, tf.int32)).numpy()
        return (time.perf_counter() - begin) / ops

    measured, fields = measure_capped(tf, device, time_ops, params, params["matmul_cap_s"], clock)
    seconds = measured.median or 0.0
    result.update(fields)
    result.update({"seconds": helpers.finite(seconds, 9), "tflops": helpers.finite(2.0 * n**3 / seconds / 1e12, 4)})
    result["threads"] = cpu_threads(tf, device)


def cpu_threads(tf: Any, device: Device) -> int | None:
    """The intra-op threads a CPU workload runs with (None on a GPU); TensorFlow's 0 means one per CPU."""
    if not device.is_cpu:
        return None
    configured = 0
    getter = getattr(tf.config.threading, "get_intra_op_parallelism_threads", None)
    if getter is not None:
        configured = int(getter() or 0)
    return configured or helpers.cpu_threads()


def measure_capped(
    tf: Any, device: Device, time_ops: Any, params: dict[str, Any], cap_s: float, clock: Clock
) -> tuple[measuring.Measured, dict[str, Any]]:
    """The shared measurement (``_smoke_measure``) within ``cap_s`` and the budget; the record fields it fills."""
    share = measuring.CpuShare(cpu_threads(tf, device)) if tf is not None and device.is_cpu else None
    sampler = measuring.Sampler(
        share.wrap(time_ops) if share else time_ops, params["min_sample_s"]["cpu" if device.is_cpu else "gpu"]
    )
    stop_at = min(time.perf_counter() + cap_s, clock.deadline)
    measured = measuring.measure(sampler, stop_at, max_samples=params["max_samples"], hard_stop=clock.deadline)
    fields = measured.fields()
    fields["ops_per_sample"] = sampler.ops
    if share is not None:
        fields["cpu_share"] = share.median
    return measured, fields


def same_device(tf: Any, name: str | None, wanted: str) -> bool:
    """Whether TensorFlow device ``name`` (as a tensor reports it) is the device ``wanted`` ('/GPU:0')."""
    have, want = tf.DeviceSpec.from_string(name or ""), tf.DeviceSpec.from_string(wanted)
    return bool(
        (have.device_type or "").upper() == (want.device_type or "").upper()
        and (have.device_index or 0) == (want.device_index or 0)
    )


def copy_gbps(
    tf: Any, device: Device, source: str, target: str, nbytes: int, params: dict[str, Any], clock: Clock
) -> tuple[float | None, dict[str, Any]]:
    """Median GB/s of copying an ``nbytes`` tensor from TensorFlow device ``source`` to ``target``.

    The copy is a ``tf.identity`` in a ``tf.function`` called under ``tf.device(target)`` with its input on
    ``source``: each call copies afresh (an eager op would keep a mirror of the input on the target and copy
    once).  The result must be on ``target``, or nothing was copied; it is synced by fetching one element.
    Returns (gbps, the measurement's record fields).
    """
    with tf.device(source):
        data = tf.ones((max(1, nbytes // 4),), tf.float32)

    def copy(x: Any) -> Any:
        return tf.identity(x)

    traced = tf.function(copy)

    def once() -> Any:
        with tf.device(target):
            out = traced(data)
        sync(out)
        return out

    out = once()  # trace, first copy
    if not same_device(tf, out.device, target):
        raise RuntimeError("the copy to %s landed on %s" % (target, out.device))
    del out

    def time_ops(ops: int) -> float:
        clock.check()
        begin = time.perf_counter()
        for _ in range(ops):
            once()
        return (time.perf_counter() - begin) / ops

    measured, fields = measure_capped(tf, device, time_ops, params, params["copy_cap_s"], clock)
    seconds = measured.median or 0.0
    return helpers.finite(data.shape[0] * 4 / seconds / 1e9, 4), fields


def copy_bytes(device: Device, params: dict[str, Any]) -> int:
    nbytes: int = params["copy_bytes"]
    free = device.free_bytes()
    if free is not None:
        while nbytes > (1 << 20) and nbytes > free // 8:
            nbytes //= 2
    return nbytes


def run_bandwidth(
    tf: Any, device: Device, direction: str, params: dict[str, Any], clock: Clock, result: dict[str, Any]
) -> None:
    nbytes = copy_bytes(device, params)
    source, target = ("/CPU:0", device.tf_name) if direction == "h2d" else (device.tf_name, "/CPU:0")
    gbps, fields = copy_gbps(tf, device, source, target, nbytes, params, clock)
    result.update(fields)
    result.update({"bytes": nbytes, "gbps": gbps})


def run_p2p(
    tf: Any, source: Device, target: Device, params: dict[str, Any], clock: Clock, result: dict[str, Any]
) -> None:
    nbytes = min(copy_bytes(source, params), copy_bytes(target, params))
    gbps, _ = copy_gbps(tf, source, source.tf_name, target.tf_name, nbytes, params, clock)
    result["gbps"] = gbps
