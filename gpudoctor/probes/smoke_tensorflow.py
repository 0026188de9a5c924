"""TensorFlow smoke workloads: real matmuls, a Keras CNN training step and copies, timed on every device.

Run as ``TARGET_PYTHON smoke_tensorflow.py --mode quick|full --budget SECONDS [--devices all|cpu|cuda]``
(the same command line as ``smoke_torch.py``).  It prints exactly one JSON document on stdout, the smoke
contract of ``gpudoctor/facts/smoke_model.py`` with ``"framework": "tensorflow"``, and progress lines
(``@@gpudoctor-progress {...}``) on the real stderr while it runs.  Standard library and TensorFlow only.

The same code measures the CPU and the GPUs: a :class:`Device` is a TensorFlow device name ('/CPU:0',
'/GPU:N') plus its facts, and every workload takes one.  What the GPU-only parts do:

- GPUs get memory growth before anything runs, so a GPU shared with another job is not taken whole, and
  sizes follow the device's *free* memory (NVML by ctypes, else what TensorFlow's allocator was given).
- matmul: fp32 with TensorFloat-32 disabled, and tf32 with it enabled on capability >= 8.0 (TensorFlow
  enables TF32 by default on Ampere and newer, so an "fp32" model there really runs tf32); fp16; bf16 on
  the CPU and on capability >= 8.0.
- bandwidth: host->device / device->host copies of a TensorFlow CPU tensor inside a ``tf.function``.
  TensorFlow does not let us choose pinned or pageable host memory, so they are reported as "pageable"
  (TensorFlow's ordinary CPU allocator); the device-to-device copy is not measured here (an on-device
  ``tf.identity`` is not a copy).  Best effort: the torch smoke measures bandwidth the nvbandwidth way.
- p2p: a GPU-to-GPU ``tf.identity`` between every ordered pair; TensorFlow does not say whether the copy
  went peer-to-peer or through the host, so ``access`` is null.
- allreduce: not measured here (``skipped``); the torch smoke does it.

Mixed precision for the CNN is Keras' ``mixed_float16`` on GPUs (the policy Keras documents for GPUs,
with loss scaling; tensor cores from capability 7.0) and ``mixed_bfloat16`` on the CPU: bf16 is the CPU's
mixed-precision type (oneDNN bf16 kernels on AVX512_BF16/AMX), while fp16 on CPUs is mostly emulated and
needs loss scaling for nothing.

Keys added to the contract: those of the framework probes' import (``installed``, ``import_ok``,
``import_s``, ``import_error``, ``module_file``), ``keras_version``, ``log_lines`` and ``warnings`` (what
TensorFlow logged or printed: fd 1/2 are captured from the import to the end), ``inner`` in each matmul
entry (chained matmuls per timed call), ``policy`` in each CNN entry (the Keras dtype policy; null for
fp32) and ``tf32`` in each GPU CNN entry (whether TensorFlow's default TF32 was on while it ran).

The budget counts from the start of this process, TensorFlow's import included (the import is never
skipped: it says what is there).  A workload starts only when enough of the budget is left, repeats less
when it runs short, and is otherwise ``skipped`` "budget: ..." (then ``stopped_by`` is "budget"; a later,
cheaper workload still gets its chance).  SIGINT or SIGTERM stops the run: what finished is reported, the
rest is ``skipped`` "interrupted" and ``stopped_by`` is "interrupt".  Those texts are the torch smoke's.
"""

import argparse
import math
import os
import signal
import sys
import time

import _probe_common as common

STARTED = time.perf_counter()

FRAMEWORK = "tensorflow"

# Per mode: sizes, repeats and time caps.  "sample_s" is the time one timed matmul sample aims at (chained
# matmuls in one call, so that a call's launch and sync cost vanish next to the work).
MODES = {
    "quick": {
        "budget_s": 25.0,
        "matmul_n": {"cpu": 2048, "gpu": 8192},
        "matmul_repeats": 5,
        "matmul_sample_s": 0.03,
        "matmul_cap_s": 1.5,
        "cnn_batch": 64,
        "cnn_warmup": 2,
        "cnn_steps": {"cpu": 8, "gpu": 20},
        "cnn_cap_s": 3.0,
        "copy_bytes": 64 << 20,
        "copy_repeats": 5,
    },
    "full": {
        "budget_s": 180.0,
        "matmul_n": {"cpu": 4096, "gpu": 16384},
        "matmul_repeats": 20,
        "matmul_sample_s": 0.1,
        "matmul_cap_s": 10.0,
        "cnn_batch": 128,
        "cnn_warmup": 3,
        "cnn_steps": {"cpu": 20, "gpu": 100},
        "cnn_cap_s": 20.0,
        "copy_bytes": 256 << 20,
        "copy_repeats": 10,
    },
}

# The least time left for a workload to be started at all: its warm-up (tracing, the first run) must fit.
MIN_LEFT_S = {"matmul": 0.3, "cnn": 1.5, "bandwidth": 0.3, "p2p": 0.3}

DTYPE_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}

CPU_TF32_SKIP = "TF32 is a mode of NVIDIA tensor cores (compute capability 8.0+), not of CPUs"
ALLREDUCE_SKIPPED = "not measured with TensorFlow; use the torch smoke"

DEVICE_CHOICES = ("all", "cpu", "cuda")

# Every distribution that installs the ``tensorflow`` module (as in tensorflow_probe.py).
DISTRIBUTIONS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tf-nightly",
    "tf-nightly-cpu",
    "tf-nightly-gpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tensorflow-aarch64",
    "tensorflow-rocm",
    "intel-tensorflow",
)

MAX_ERROR_CHARS = 2000

# What a workload cut short must not report half-measured.
MEASURED_KEYS = (
    "repeats",
    "seconds",
    "tflops",
    "inner",
    "steps",
    "seconds_per_step",
    "steps_per_s",
    "loss_first",
    "loss_last",
    "loss_decreased",
    "gbps",
)


class Stopped(Exception):
    """A workload could not go on: ``reason`` is "budget" or "interrupt"."""

    def __init__(self, reason):
        Exception.__init__(self, reason)
        self.reason = reason


class ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # a usage error is reported in the JSON, not as a bare usage text
        raise ArgumentError(message)


def parse_args(argv):
    parser = _Parser(prog="smoke_tensorflow.py", add_help=False)
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument("--budget", type=float, default=None)
    parser.add_argument("--devices", choices=DEVICE_CHOICES, default="all")
    args = parser.parse_args(argv)
    if args.budget is None:
        args.budget = MODES[args.mode]["budget_s"]
    if not (args.budget >= 0 and math.isfinite(args.budget)):
        raise ArgumentError("--budget must be a number of seconds >= 0, not %r" % args.budget)
    return args


# --- time: the budget and Ctrl-C -------------------------------------------------------------------------


class Clock:
    """The budget's deadline, and whether SIGINT/SIGTERM arrived."""

    def __init__(self, budget_s):
        self.deadline = STARTED + budget_s
        self.interrupted = False

    def left(self):
        return self.deadline - time.perf_counter()

    def check(self, needed_s=0.0):
        """Raise :class:`Stopped` when interrupted, or when less than ``needed_s`` of the budget is left."""
        if self.interrupted:
            raise Stopped("interrupt")
        if self.left() < needed_s:
            raise Stopped("budget")


def install_signal_handlers(clock):
    def handler(signum, frame):
        # Only a flag, checked between repeats and steps: an exception raised at an arbitrary point (inside
        # TensorFlow's Python, a context manager's exit, the capture of fd 2) could escape before the JSON.
        clock.interrupted = True

    # Set explicitly: a parent started without job control may hand us SIGINT ignored.
    for name in ("SIGINT", "SIGTERM"):
        try:
            signal.signal(getattr(signal, name), handler)
        except (AttributeError, ValueError, OSError):
            pass


def ignore_signals():
    """While the JSON is written, a second Ctrl-C must not cut it in half."""
    for name in ("SIGINT", "SIGTERM"):
        try:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        except (AttributeError, ValueError, OSError):
            pass


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def finite(value, digits=6):
    """A float fit for JSON (NaN and infinities are not JSON): rounded, or None."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value):
        return None
    return round(value, digits)


# --- devices ---------------------------------------------------------------------------------------------


class Device:
    """One place to run: ``tf_name`` is what ``tf.device`` takes, ``record`` the contract's device entry."""

    def __init__(self, tf_name, record):
        self.tf_name = tf_name
        self.record = record

    @property
    def id(self):
        return self.record["id"]

    @property
    def kind(self):
        return self.record["kind"]

    @property
    def is_cpu(self):
        return self.kind == "cpu"

    def capability(self):
        """(major, minor) of a CUDA GPU, or None."""
        try:
            major, minor = str(self.record.get("capability")).split(".")[:2]
            return int(major), int(minor)
        except (ValueError, TypeError):
            return None

    def free_bytes(self):
        free = self.record.get("memory_free_mib")
        return free * (1 << 20) if isinstance(free, int) and free > 0 else None


def cpu_name():
    text = common._read_text("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("model name", "Model Name", "Hardware") and value.strip():
            return value.strip()
    try:
        import platform

        return platform.processor() or None
    except Exception:  # noqa: BLE001
        return None


def cpu_threads():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def cpu_device():
    return Device("/CPU:0", {"id": "cpu", "kind": "cpu", "name": cpu_name(), "threads": cpu_threads()})


def nvml_memory(pci_bus_ids):
    """{pci bus id: (total bytes, free bytes)} from NVML through ctypes; {} when NVML is not usable.

    TensorFlow tells its own allocator's use (``get_memory_info``), not what other processes left free.
    """
    import ctypes

    class Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    found = {}
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return found
    init = getattr(nvml, "nvmlInit_v2", None) or getattr(nvml, "nvmlInit", None)
    if init is None or init() != 0:
        return found
    try:
        by_bus = getattr(nvml, "nvmlDeviceGetHandleByPciBusId_v2", None) or nvml.nvmlDeviceGetHandleByPciBusId
        for bus_id in pci_bus_ids:
            handle = ctypes.c_void_p()
            if by_bus(bus_id.encode("ascii"), ctypes.byref(handle)) != 0:
                continue
            memory = Memory()
            if nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(memory)) == 0:
                found[bus_id] = (int(memory.total), int(memory.free))
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return found


def _desc_field(desc, name):
    """A field of TensorFlow's physical_device_desc: "device: 0, name: X, pci bus id: 0000:01:00.0, ..."."""
    for part in (desc or "").split(", "):
        key, sep, value = part.partition(": ")
        if sep and key.strip() == name:
            return value.strip()
    return None


def gpu_devices(tf, errors, wanted):
    """The GPUs TensorFlow sees, each configured for memory growth; none when only the CPU is wanted."""
    physical = common.guarded(errors, "list_gpus", lambda: tf.config.list_physical_devices("GPU")) or []
    if wanted == "cpu":
        if physical:
            # No GPU context at all: the CPU-only run must not take memory on a shared GPU.
            common.guarded(errors, "hide_gpus", lambda: tf.config.set_visible_devices([], "GPU"))
        return []
    for gpu in physical:
        # Before anything initialises the GPUs; afterwards TensorFlow refuses (RuntimeError).
        common.guarded(errors, "memory_growth", lambda: tf.config.experimental.set_memory_growth(gpu, True))  # noqa: B023 - called at once, inside the loop
    kind = "cuda"
    if common.guarded(errors, "built_with_rocm", lambda: bool(tf.test.is_built_with_rocm()), False):
        kind = "rocm"
    local = {}
    if physical:
        # The eager runtime first, so that the GPUs' allocators are made with memory growth; device_lib
        # (private but stable: TensorFlow's only source of the PCI bus id) is asked for growth too, since
        # without it a fresh allocator takes nearly all of the GPU's memory.
        common.guarded(errors, "logical_gpus", lambda: tf.config.list_logical_devices("GPU"))

        def list_local():
            from tensorflow.python.client import device_lib

            config = tf.compat.v1.ConfigProto()
            config.gpu_options.allow_growth = True
            return {
                item.name.split("device:")[-1]: item for item in device_lib.list_local_devices(session_config=config)
            }

        local = common.guarded(errors, "device_lib", list_local, {}) or {}
    devices = []
    for index, gpu in enumerate(physical):
        details = common.guarded(errors, "device_details", lambda: tf.config.experimental.get_device_details(gpu))  # noqa: B023 - called at once, inside the loop
        details = details if isinstance(details, dict) else {}
        capability = details.get("compute_capability")
        item = local.get("GPU:%d" % index)
        desc = getattr(item, "physical_device_desc", "") if item is not None else ""
        if capability:
            capability = "%d.%d" % tuple(capability[:2])
        record = {
            "id": "cuda:%d" % index,
            "kind": kind,
            "name": details.get("device_name") or _desc_field(desc, "name"),
            "capability": capability or _desc_field(desc, "compute capability"),
            "memory_total_mib": None,
            "memory_free_mib": None,
            "pci_bus_id": _desc_field(desc, "pci bus id"),
        }
        limit = getattr(item, "memory_limit", None) if item is not None else None
        if isinstance(limit, int) and limit > 0:
            # What TensorFlow's allocator may use: the free memory it found at start, less a reserve.
            record["memory_free_mib"] = limit >> 20
        devices.append(Device("/GPU:%d" % index, record))
    bus_ids = [d.record["pci_bus_id"] for d in devices if d.record["pci_bus_id"]]
    if bus_ids and kind == "cuda":
        memory = common.guarded(errors, "nvml", lambda: nvml_memory(bus_ids), {}) or {}
        for device in devices:
            total_free = memory.get(device.record["pci_bus_id"])
            if total_free:
                device.record["memory_total_mib"] = total_free[0] >> 20
                device.record["memory_free_mib"] = total_free[1] >> 20
    return devices


def why_no_gpu(tf, errors, wanted):
    """Why no GPU is measured: always said when GPUs were asked for, and for a GPU build that lists none."""
    cuda = common.guarded(errors, "built_with_cuda", lambda: bool(tf.test.is_built_with_cuda()), None)
    rocm = common.guarded(errors, "built_with_rocm", lambda: bool(tf.test.is_built_with_rocm()), False)
    if cuda is False and not rocm:
        if wanted != "cuda":
            return None  # a CPU build (tensorflow-cpu) without GPUs is no finding
        return "this TensorFlow build has no CUDA or ROCm support (%s)" % getattr(tf, "__version__", "?")
    return "%s build, but TensorFlow lists no GPU (its log_lines say why it skipped any)" % ("ROCm" if rocm else "CUDA")


# --- workloads -------------------------------------------------------------------------------------------


def sync(tensor):
    """Wait for a device result: bring one element to the host (the whole tensor is not copied)."""
    flat = tensor
    while getattr(flat, "shape", None) is not None and len(flat.shape) > 0:
        flat = flat[0]
    return flat.numpy()


def set_tf32(tf, enabled):
    setter = getattr(tf.config.experimental, "enable_tensor_float_32_execution", None)
    if setter is not None:
        setter(bool(enabled))


def tf32_enabled(tf):
    getter = getattr(tf.config.experimental, "tensor_float_32_execution_enabled", None)
    return bool(getter()) if getter is not None else None


def matmul_size(device, dtype, params):
    """n for n×n matrices: the mode's size, halved until four of them fit in a quarter of the free memory."""
    n = params["matmul_n"]["cpu" if device.is_cpu else "gpu"]
    free = device.free_bytes()
    if free is None and not device.is_cpu:
        n = min(n, 8192)  # free memory unknown: at most 1 GiB of fp32 matrices
    elif free is not None:
        while n > 256 and 4 * n * n * DTYPE_BYTES[dtype] > free // 4:
            n //= 2
    return n


def matmul_skip_reason(device, dtype):
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


def run_matmul(tf, device, dtype, params, clock, result):
    """Median seconds of one n×n×n matmul: ``inner`` chained matmuls per call, one scalar synced per call."""
    tf_dtype = {"fp32": tf.float32, "tf32": tf.float32, "fp16": tf.float16, "bf16": tf.bfloat16}[dtype]
    n = matmul_size(device, dtype, params)
    result["n"] = n
    if not device.is_cpu:
        set_tf32(tf, dtype == "tf32")
    with tf.device(device.tf_name):
        a = tf.cast(tf.random.uniform((n, n), -1.0, 1.0, seed=1), tf_dtype)
        # Scaled so that a chain of products keeps its magnitude (entries' variance stays 1/3): no overflow in fp16.
        b = tf.cast(tf.random.uniform((n, n), -1.0, 1.0, seed=2) * math.sqrt(3.0 / n), tf_dtype)

    # A fresh function per run: it is traced after the TF32 setting above.
    @tf.function
    def chain(x, w, inner):
        with tf.device(device.tf_name):
            for _ in tf.range(inner):
                x = tf.matmul(x, w)
            return tf.cast(x[0, 0], tf.float32)

    one = tf.constant(1, tf.int32)
    chain(a, b, one).numpy()  # trace and first run
    clock.check()
    begin = time.perf_counter()
    chain(a, b, one).numpy()
    first = max(time.perf_counter() - begin, 1e-6)
    inner = int(min(64, max(1, round(params["matmul_sample_s"] / first))))
    inner_tensor = tf.constant(inner, tf.int32)
    samples = []
    cap = time.perf_counter() + params["matmul_cap_s"]
    while len(samples) < params["matmul_repeats"]:
        estimate = first * inner
        if samples and (time.perf_counter() + estimate > cap or clock.left() < estimate):
            break  # fewer repeats rather than past the cap or the budget
        clock.check(estimate if not samples else 0.0)
        begin = time.perf_counter()
        chain(a, b, inner_tensor).numpy()
        samples.append((time.perf_counter() - begin) / inner)
        first = samples[-1]
    seconds = median(samples)
    result.update(
        {
            "repeats": len(samples),
            "seconds": finite(seconds, 9),
            "inner": inner,
            "tflops": finite(2.0 * n**3 / seconds / 1e12, 4),
        }
    )


def synthetic_mnist(tf, batch, batches, seed):
    """Learnable MNIST-shaped data: each class is a fixed random pattern, each image its class's pattern plus noise.

    Zero-centred patterns of full contrast, noise at half their amplitude: the network separates the classes
    within a few steps (the loss falls from ~2.3 to ~0.5 in ten Adam steps), so "the loss went down" is a
    reliable proof that the step trains, not a coin toss.
    """
    patterns = tf.random.stateless_uniform((10, 28, 28, 1), seed=(seed, 1), minval=-1.0, maxval=1.0)
    data = []
    for index in range(batches):
        labels = tf.random.stateless_uniform((batch,), seed=(seed, 100 + index), maxval=10, dtype=tf.int32)
        noise = tf.random.stateless_uniform((batch, 28, 28, 1), seed=(seed, 200 + index))
        images = tf.gather(patterns, labels) + 0.5 * noise
        data.append((images, labels))
    return data


def mnist_cnn(keras, policy):
    """The Keras MNIST example's network; every dtype and layout given, whatever ~/.keras/keras.json says."""
    dtype = policy or "float32"
    layers = keras.layers
    return keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1), dtype="float32"),
            layers.Conv2D(32, 3, activation="relu", data_format="channels_last", dtype=dtype),
            layers.Conv2D(64, 3, activation="relu", data_format="channels_last", dtype=dtype),
            layers.MaxPooling2D(2, data_format="channels_last", dtype=dtype),
            layers.Dropout(0.25, seed=1, dtype=dtype),
            layers.Flatten(data_format="channels_last", dtype=dtype),
            layers.Dense(128, activation="relu", dtype=dtype),
            layers.Dropout(0.5, seed=2, dtype=dtype),
            # Logits in float32, as Keras advises for mixed precision: the softmax cross-entropy stays accurate.
            layers.Dense(10, dtype="float32"),
        ]
    )


def cnn_policy(device, precision):
    if precision == "fp32":
        return None
    return "mixed_bfloat16" if device.is_cpu else "mixed_float16"


def _seed(tf, keras, seed):
    setter = getattr(getattr(keras, "utils", None), "set_random_seed", None)
    if setter is not None:
        setter(seed)
    else:
        tf.random.set_seed(seed)


def run_cnn(tf, keras, device, precision, params, clock, result, seed=1234):
    """Seconds per training step (forward, backward, Adam) of the MNIST CNN on synthetic data held on the device."""
    if keras is None:
        raise RuntimeError("tf.keras could not be imported (errors['keras'] says why)")
    policy = cnn_policy(device, precision)
    batch = params["cnn_batch"]
    result.update({"batch": batch, "policy": policy})
    if not device.is_cpu:
        result["tf32"] = tf32_enabled(tf)
    _seed(tf, keras, seed)
    with tf.device(device.tf_name):
        data = synthetic_mnist(tf, batch, 4, seed)
        model = mnist_cnn(keras, policy)
        optimizer = keras.optimizers.Adam(learning_rate=1e-3)
        if policy == "mixed_float16":
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
        variables = model.trainable_variables
        if hasattr(optimizer, "build"):
            optimizer.build(variables)  # its slots exist before tracing: no variable is created inside the function
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # Keras 3 scales the loss and unscales in apply_gradients; Keras 2 has separate calls for both.
    keras3_scaling = hasattr(optimizer, "scale_loss")
    keras2_scaling = not keras3_scaling and hasattr(optimizer, "get_scaled_loss")

    @tf.function
    def train_step(images, labels):
        with tf.device(device.tf_name):
            with tf.GradientTape() as tape:
                logits = model(images, training=True)
                loss = loss_fn(labels, tf.cast(logits, tf.float32))
                scaled = loss
                if keras3_scaling:
                    scaled = optimizer.scale_loss(loss)
                elif keras2_scaling:
                    scaled = optimizer.get_scaled_loss(loss)
            grads = tape.gradient(scaled, variables)
            if keras2_scaling:
                grads = optimizer.get_unscaled_gradients(grads)
            optimizer.apply_gradients(zip(grads, variables))
            return loss

    losses = []
    times = []
    warmup = params["cnn_warmup"]
    wanted = params["cnn_steps"]["cpu" if device.is_cpu else "gpu"]
    cap = None
    step = 0
    while len(times) < wanted:
        images, labels = data[step % len(data)]
        if step >= warmup:
            if cap is None:
                cap = time.perf_counter() + params["cnn_cap_s"]
            estimate = times[-1] if times else 0.0
            if times and clock.left() < estimate:
                break  # fewer steps rather than past the budget
            if len(times) >= 3 and time.perf_counter() + estimate > cap:
                break
            clock.check(estimate)
        else:
            clock.check()
        begin = time.perf_counter()
        loss = float(train_step(images, labels).numpy())  # the loss on the host: the step has finished
        elapsed = time.perf_counter() - begin
        losses.append(loss)
        if step >= warmup:
            times.append(elapsed)
        step += 1
    if not times:
        raise Stopped("budget")
    seconds = median(times)
    first, last = finite(losses[0]), finite(losses[-1])
    result.update(
        {
            "steps": len(times),
            "seconds_per_step": finite(seconds, 9),
            "steps_per_s": finite(1.0 / seconds, 4),
            "loss_first": first,
            "loss_last": last,
            "loss_decreased": (last < first) if first is not None and last is not None else None,
        }
    )


def same_device(tf, name, wanted):
    """Whether TensorFlow device ``name`` (as a tensor reports it) is the device ``wanted`` ('/GPU:0')."""
    have, want = tf.DeviceSpec.from_string(name or ""), tf.DeviceSpec.from_string(wanted)
    return (have.device_type or "").upper() == (want.device_type or "").upper() and (have.device_index or 0) == (
        want.device_index or 0
    )


def copy_gbps(tf, source, target, nbytes, repeats, clock):
    """Median GB/s of copying an ``nbytes`` tensor from TensorFlow device ``source`` to ``target``.

    The copy is a ``tf.identity`` in a ``tf.function`` called under ``tf.device(target)`` with its input on
    ``source``: each call copies afresh (an eager op would keep a mirror of the input on the target and copy
    once).  The result must be on ``target``, or nothing was copied; it is synced by fetching one element.
    Returns (gbps, repeats done).
    """
    with tf.device(source):
        data = tf.ones((max(1, nbytes // 4),), tf.float32)

    @tf.function
    def copy(x):
        return tf.identity(x)

    def once():
        with tf.device(target):
            out = copy(data)
        sync(out)
        return out

    out = once()  # trace, first copy
    if not same_device(tf, out.device, target):
        raise RuntimeError("the copy to %s landed on %s" % (target, out.device))
    del out
    times = []
    for _ in range(repeats):
        if times and clock.left() < times[-1]:
            break
        clock.check()
        begin = time.perf_counter()
        once()
        times.append(time.perf_counter() - begin)
    seconds = median(times)
    return finite(data.shape[0] * 4 / seconds / 1e9, 4), len(times)


def copy_bytes(device, params):
    nbytes = params["copy_bytes"]
    free = device.free_bytes()
    if free is not None:
        while nbytes > (1 << 20) and nbytes > free // 8:
            nbytes //= 2
    return nbytes


def run_bandwidth(tf, device, direction, params, clock, result):
    nbytes = copy_bytes(device, params)
    source, target = ("/CPU:0", device.tf_name) if direction == "h2d" else (device.tf_name, "/CPU:0")
    gbps, repeats = copy_gbps(tf, source, target, nbytes, params["copy_repeats"], clock)
    result.update({"bytes": nbytes, "repeats": repeats, "gbps": gbps})


def run_p2p(tf, source, target, params, clock, result):
    nbytes = min(copy_bytes(source, params), copy_bytes(target, params))
    gbps, _ = copy_gbps(tf, source.tf_name, target.tf_name, nbytes, params["copy_repeats"], clock)
    result["gbps"] = gbps


# --- the plan: every workload, in order, with its place in the JSON --------------------------------------


class Task:
    def __init__(self, stage, detail, result, work):
        self.stage = stage
        self.detail = detail
        self.result = result
        self.work = work


def plan(tf, keras, doc, devices, params, clock):
    tasks = []
    gpus = [d for d in devices if not d.is_cpu]
    ordered = gpus + [d for d in devices if d.is_cpu]  # the accelerators first: they are what the run is for

    def add(stage, detail, result, work):
        doc[stage].append(result)
        tasks.append(Task(stage, detail, result, work))

    for device in ordered:
        dtypes = ("fp32", "fp16", "bf16") if device.is_cpu else ("fp32", "tf32", "fp16", "bf16")
        for dtype in dtypes:
            result = {
                "device": device.id,
                "dtype": dtype,
                "n": None,
                "repeats": None,
                "seconds": None,
                "tflops": None,
                "error": None,
                "skipped": matmul_skip_reason(device, dtype),
            }
            add(
                "matmul",
                "%s %s" % (device.id, dtype),
                result,
                lambda r, d=device, t=dtype: run_matmul(tf, d, t, params, clock, r),
            )
    for device in ordered:
        for precision in ("fp32", "amp"):
            result = {
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
            add(
                "cnn",
                "%s %s" % (device.id, precision),
                result,
                lambda r, d=device, p=precision: run_cnn(tf, keras, d, p, params, clock, r),
            )
    for device in gpus:
        for direction in ("h2d", "d2h"):
            result = {
                "device": device.id,
                "direction": direction,
                "memory": "pageable",
                "bytes": None,
                "repeats": None,
                "gbps": None,
                "error": None,
                "skipped": None,
            }
            add(
                "bandwidth",
                "%s %s" % (device.id, direction),
                result,
                lambda r, d=device, w=direction: run_bandwidth(tf, d, w, params, clock, r),
            )
    if len(gpus) >= 2:
        for source in gpus:
            for target in gpus:
                if source is target:
                    continue
                result = {"src": source.id, "dst": target.id, "access": None, "gbps": None, "error": None}
                add(
                    "p2p",
                    "%s -> %s" % (source.id, target.id),
                    result,
                    lambda r, s=source, t=target: run_p2p(tf, s, t, params, clock, r),
                )
    return tasks


def skip_text(reason, budget_s):
    if reason == "budget":
        return "budget: the %g s time budget was spent" % budget_s
    return "interrupted"


def run_tasks(tf, tasks, doc, clock, say):
    """Run the plan in order and say why what did not run did not: "budget" (later, cheaper workloads still
    get their chance) or "interrupt" (nothing more runs).  Returns ``stopped_by``."""
    default_tf32 = tf32_enabled(tf)
    budget_hit = False
    for index, task in enumerate(tasks):
        if task.result.get("skipped"):
            continue
        reason = "interrupt" if clock.interrupted else None
        if reason is None:
            try:
                clock.check(MIN_LEFT_S.get(task.stage, 0.0))
                say(task.stage, task.detail, index, len(tasks))  # only for what starts
                task.work(task.result)
            except Stopped as stop:
                reason = stop.reason
            except BaseException as exc:
                if clock.interrupted or isinstance(exc, KeyboardInterrupt):
                    clock.interrupted = True
                    reason = "interrupt"
                elif isinstance(exc, (SystemExit, GeneratorExit)):
                    raise
                else:
                    text = common.error_text(exc)  # TensorFlow's errors can carry a whole graph's node list
                    task.result["error"] = text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "..."
            finally:
                if task.stage == "matmul" and default_tf32 is not None:
                    common.guarded({}, "tf32", lambda: set_tf32(tf, default_tf32))
        if reason is not None:
            budget_hit = budget_hit or reason == "budget"
            # A workload cut short keeps no half-measured number; what never ran says why.
            for key in MEASURED_KEYS:
                if key in task.result:
                    task.result[key] = None
            task.result["skipped"] = skip_text(reason, doc["budget_s"])
    # A p2p entry has no "skipped" in the contract: the pairs never measured are left out (stopped_by says why).
    doc["p2p"][:] = [result for result in doc["p2p"] if not result.pop("skipped", None)]
    if clock.interrupted:
        return "interrupt"
    say("done", "", len(tasks), len(tasks))
    return "budget" if budget_hit else None


# --- the run ---------------------------------------------------------------------------------------------


def new_doc(probe, mode, budget_s):
    doc = probe.doc
    doc.update(
        {
            "framework": FRAMEWORK,
            "framework_version": None,
            "mode": mode,
            "budget_s": budget_s,
            "elapsed_s": None,
            "stopped_by": None,
            "devices": [],
            "matmul": [],
            "cnn": [],
            "bandwidth": [],
            "p2p": [],
            "allreduce": {
                "backend": None,
                "world_size": None,
                "device_kind": None,
                "bytes": None,
                "repeats": None,
                "seconds": None,
                "algbw_gbps": None,
                "busbw_gbps": None,
                "ddp_step_s": None,
                "ddp_loss_decreased": None,
                "error": None,
                "skipped": ALLREDUCE_SKIPPED,
            },
            "keras_version": None,
            "errors": {},
            "probe_error": None,
        }
    )
    return doc


class ProgressWriter:
    """Progress goes to the real stderr: a duplicate of fd 2 taken before fd 2 is captured."""

    def __init__(self):
        try:
            self.stream = os.fdopen(os.dup(2), "w")
        except (OSError, ValueError):
            self.stream = None

    def __call__(self, stage, detail="", done=None, total=None):
        if self.stream is not None:
            common.progress(stage, detail, done, total, stream=self.stream)

    def close(self):
        # Closed by us at the end: left to the garbage collector it would be a ResourceWarning in the report.
        if self.stream is not None:
            try:
                self.stream.close()
            except OSError:
                pass
            self.stream = None


def new_probe():
    return common.Probe(
        "smoke",
        "tensorflow",
        candidates=DISTRIBUTIONS,
        conda_names=("tensorflow", "tensorflow-base", "tensorflow-cpu", "tensorflow-gpu"),
    )


def smoke(probe, args, clock, say):
    doc, errors = probe.doc, probe.doc["errors"]
    say("import", FRAMEWORK)
    if not probe.installed():
        errors["import"] = "tensorflow is not installed in %s" % sys.executable
        return
    # Evidence is the same whoever runs it: TensorFlow's C++ side says why it skips a GPU only at level 0.
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    # tf.keras is Keras 3 from TensorFlow 2.16 on, and Keras 3 follows KERAS_BACKEND: this smoke test is TensorFlow's.
    os.environ["KERAS_BACKEND"] = "tensorflow"
    tf = probe.import_framework()  # fd 1/2 captured from here to the end
    if tf is None:
        failure = doc.get("import_error") or {}
        errors["import"] = "import tensorflow failed: %s: %s" % (failure.get("type"), failure.get("message"))
        return
    doc["framework_version"] = common.guarded(
        errors, "version", lambda: str(getattr(tf, "__version__", None) or tf.version.VERSION)
    )
    say("devices")
    devices = gpu_devices(tf, errors, args.devices)
    if not devices and args.devices != "cpu":
        reason = why_no_gpu(tf, errors, args.devices)
        if reason:
            errors["cuda"] = reason
    if args.devices != "cuda":
        devices.insert(0, cpu_device())
    doc["devices"] = [device.record for device in devices]
    keras = common.guarded(errors, "keras", lambda: tf.keras)
    doc["keras_version"] = common.guarded(errors, "keras_version", lambda: getattr(keras, "__version__", None))
    tasks = plan(tf, keras, doc, devices, MODES[args.mode], clock)
    doc["stopped_by"] = run_tasks(tf, tasks, doc, clock, say)


def finish(probe, clock, say, probe_error=None):
    ignore_signals()  # a second Ctrl-C must not cost the report of what finished
    say.close()
    probe.capture.stop()
    doc = probe.doc
    if clock is not None and clock.interrupted:
        doc["stopped_by"] = "interrupt"
    if doc.get("installed"):
        doc["log_lines"] = probe.capture.log_lines()
        doc["warnings"] = probe.capture.warnings()
    doc["probe_error"] = probe_error
    doc["elapsed_s"] = round(time.perf_counter() - STARTED, 3)
    common.emit(doc)  # leaves through os._exit


def main(argv=None):
    clock = Clock(float("inf"))
    install_signal_handlers(clock)  # first of all: a Ctrl-C at any point still gets its JSON answer
    common.drop_probes_dir_from_path()
    probe = new_probe()
    new_doc(probe, None, None)
    say = ProgressWriter()
    probe_error = None
    try:
        try:
            args = parse_args(sys.argv[1:] if argv is None else argv)
        except ArgumentError as exc:
            args = None
            probe_error = "bad arguments: %s" % exc
        if args is not None:
            probe.doc.update({"mode": args.mode, "budget_s": args.budget})
            clock.deadline = STARTED + args.budget
            smoke(probe, args, clock, say)
    except BaseException as exc:  # noqa: BLE001 - still one JSON document, whatever happened
        if clock.interrupted or isinstance(exc, KeyboardInterrupt):
            clock.interrupted = True
            doc = probe.doc
            if doc.get("installed") and doc["framework_version"] is None and "import" not in doc["errors"]:
                doc["errors"]["import"] = "interrupted while importing tensorflow"
        else:
            probe_error = common.error_record(exc)["traceback_tail"] or common.error_text(exc)
    finish(probe, clock, say, probe_error)


if __name__ == "__main__":
    sys.exit(main())
