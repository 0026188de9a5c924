"""The TensorFlow smoke's CNN workload: the Keras MNIST example network, trained on learnable synthetic data.

Runs inside the target Python with TensorFlow (untyped here: ``Any``).  Mixed precision is Keras'
``mixed_float16`` on GPUs (the policy Keras documents for GPUs, with loss scaling; tensor cores from
capability 7.0) and ``mixed_bfloat16`` on the CPU: bf16 is the CPU's mixed-precision type (oneDNN bf16
kernels on AVX512_BF16/AMX), while fp16 on CPUs is mostly emulated and needs loss scaling for nothing.
A record adds ``policy`` (the Keras dtype policy; null for fp32) and, on a GPU, ``tf32`` (whether
TensorFlow's default TF32 was on while it ran).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _smoke_helpers as helpers
    from ._smoke_tf_workloads import cpu_threads, measure_capped, tf32_enabled
else:
    import _smoke_helpers as helpers
    from _smoke_tf_workloads import cpu_threads, measure_capped, tf32_enabled

if TYPE_CHECKING:
    from ._smoke_engine import Clock
    from ._smoke_tf_devices import Device


def synthetic_mnist(tf: Any, batch: int, batches: int, seed: int) -> list[tuple[Any, Any]]:
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


def mnist_cnn(keras: Any, policy: str | None) -> Any:
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


def cnn_policy(device: Device, precision: str) -> str | None:
    if precision == "fp32":
        return None
    return "mixed_bfloat16" if device.is_cpu else "mixed_float16"


def _seed(tf: Any, keras: Any, seed: int) -> None:
    setter = getattr(getattr(keras, "utils", None), "set_random_seed", None)
    if setter is not None:
        setter(seed)
    else:
        tf.random.set_seed(seed)


def _train_step(tf: Any, keras: Any, device: Device, model: Any, optimizer: Any) -> Any:
    """The traced training step (forward, backward, Adam) of ``model`` on ``device``: images, labels -> loss."""
    variables = model.trainable_variables
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    # Keras 3 scales the loss and unscales in apply_gradients; Keras 2 has separate calls for both.
    keras3_scaling = hasattr(optimizer, "scale_loss")
    keras2_scaling = not keras3_scaling and hasattr(optimizer, "get_scaled_loss")

    def train_step(images: Any, labels: Any) -> Any:
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

    return tf.function(train_step)


def run_cnn(
    tf: Any,
    keras: Any,
    device: Device,
    precision: str,
    params: dict[str, Any],
    clock: Clock,
    result: dict[str, Any],
    seed: int = 1234,
) -> None:
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
        if hasattr(optimizer, "build"):
            # Its slots exist before tracing: no variable is created inside the function.
            optimizer.build(model.trainable_variables)
    train_step = _train_step(tf, keras, device, model, optimizer)
    losses: list[float] = []

    def time_ops(ops: int) -> float:
        clock.check()
        total = 0.0
        for _ in range(ops):
            images, labels = data[len(losses) % len(data)]
            begin = time.perf_counter()
            losses.append(float(train_step(images, labels).numpy()))  # the loss on the host: the step has finished
            total += time.perf_counter() - begin
        return total / ops

    measured, fields = measure_capped(tf, device, time_ops, params, params["cnn_cap_s"], clock)
    seconds = measured.median or 0.0
    first, last = helpers.finite(losses[0]), helpers.finite(losses[-1])
    result.update(fields)
    result.update(
        {
            "steps": len(losses),
            "seconds_per_step": helpers.finite(seconds, 9),
            "steps_per_s": helpers.finite(1.0 / seconds, 4) if seconds else None,
            "loss_first": first,
            "loss_last": last,
            "loss_decreased": (last < first) if first is not None and last is not None else None,
            "threads": cpu_threads(tf, device),
        }
    )
