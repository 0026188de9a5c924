"""TensorFlow probe: run as ``TARGET_PYTHON tensorflow_probe.py``; prints one JSON document (see ``_probe_common``).

It sets ``TF_CPP_MIN_LOG_LEVEL=0`` before the import so that TensorFlow's C++ side logs the lines that
explain a GPU it skips ("Could not load dynamic library ...", "Cannot dlopen some GPU libraries"); they
arrive in ``log_lines``.  Keys added to the common contract::

    "version"          tf.__version__
    "keras_version"    the installed keras (or tf-keras) distribution's version, read without importing it
    "built_with_cuda"  tf.test.is_built_with_cuda()
    "build_info"       dict(tf.sysconfig.get_build_info()): cuda_version, cudnn_version, cuda_compute_capabilities...
    "gpus"             [{"name", "device_type", "details": {"device_name", "compute_capability": [maj, min]}}]
    "gpus_listed"      true when tf.config.list_physical_devices('GPU') ran (then an empty "gpus" means none)
    "built_with_rocm"  tf.test.is_built_with_rocm() (build_info's "is_rocm_build" and "rocm_version" say the same
                       where the build records them)
    "metal_plugin"     the installed tensorflow-metal distribution's version (Apple's PluggableDevice), read
                       without importing it; null when it is not installed
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
else:
    import _probe_common as common

# Every distribution that installs the ``tensorflow`` module; the first one found names the install, and any
# other one present is listed under "also_installed" (two of them in one environment overwrite each other).
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


def _keras_version() -> str | None:
    versions = common.distributions_matching(lambda key: key in ("keras", "tf-keras"))
    return versions.get("keras") or versions.get("tf-keras")


def _metal_plugin() -> str | None:
    return common.distributions_matching(lambda key: key == "tensorflow-metal").get("tensorflow-metal")


def _gpus(tf: Any, doc: dict[str, Any], errors: dict[str, str]) -> list[dict[str, Any]]:
    devices = common.guarded(errors, "gpus", lambda: tf.config.list_physical_devices("GPU"))
    doc["gpus_listed"] = devices is not None
    gpus: list[dict[str, Any]] = []
    for device in devices or []:
        details = common.guarded(errors, "device_details", lambda: tf.config.experimental.get_device_details(device))  # noqa: B023 - called at once, inside the loop
        if isinstance(details, dict):
            details = {key: list(value) if isinstance(value, tuple) else value for key, value in details.items()}
        gpus.append(
            {
                "name": getattr(device, "name", None),
                "device_type": getattr(device, "device_type", None),
                "details": details,
            }
        )
    return gpus


def body(tf: Any, probe: common.Probe) -> None:
    doc, errors = probe.doc, probe.errors
    doc["version"] = common.guarded(errors, "version", lambda: getattr(tf, "__version__", None) or tf.version.VERSION)
    doc["keras_version"] = common.guarded(errors, "keras_version", _keras_version)
    doc["built_with_cuda"] = common.guarded(errors, "built_with_cuda", lambda: bool(tf.test.is_built_with_cuda()))
    doc["build_info"] = common.guarded(errors, "build_info", lambda: dict(tf.sysconfig.get_build_info()))
    doc["built_with_rocm"] = common.guarded(errors, "built_with_rocm", lambda: bool(tf.test.is_built_with_rocm()))
    doc["metal_plugin"] = common.guarded(errors, "metal_plugin", _metal_plugin)
    doc["gpus_listed"] = False
    doc["gpus"] = _gpus(tf, doc, errors)


def main() -> None:
    # Evidence is the same whoever runs the probe: the caller sets this too.
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    probe = common.Probe(
        "tensorflow",
        "tensorflow",
        candidates=DISTRIBUTIONS,
        conda_names=("tensorflow", "tensorflow-base", "tensorflow-cpu", "tensorflow-gpu"),
        family=lambda key: key in DISTRIBUTIONS,
    )
    common.run(probe, body)


if __name__ == "__main__":
    main()
