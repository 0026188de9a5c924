"""JAX probe: run as ``TARGET_PYTHON jax_probe.py``; prints one JSON document (see ``_probe_common``).

Keys added to the common contract::

    "version"          jax.__version__
    "jaxlib_version"   jaxlib's version
    "plugins"          {dist name: version} of the installed jax-cuda*-plugin / jax-cuda*-pjrt / jax-rocm* wheels
    "default_backend"  jax.default_backend(): "cpu", "gpu", "tpu"
    "devices"          [{"id", "platform", "device_kind", "process_index", "coords", "core_on_chip"}] from
                       jax.devices() (the last three are a TPU's: its host, its chip's place, its core on the chip)
    "libtpu"           {dist name: version} of the installed libtpu / libtpu-nightly wheel ({} when neither is)
    "backend_errors"   ["cuda: <error text>", ...]: why a GPU backend did not come up, verbatim.  From JAX's own
                       record of failed backends (the TPU one only when JAX_PLATFORMS asks for a TPU: every
                       machine without libtpu has it), and, when the default backend is not a GPU although
                       this machine has an NVIDIA device node, a CUDA plugin or JAX_PLATFORMS names one, the
                       error of asking for jax.devices('cuda') / ('rocm').
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
else:
    import _probe_common as common

# JAX logs "Unable to initialize backend 'cuda': ..." at INFO level: keep those records.
INFO_LOGGERS = ("jax._src.xla_bridge",)


def _is_plugin(key: str) -> bool:
    return key.startswith(("jax-cuda", "jax-rocm", "jax-tpu"))


def _is_libtpu(key: str) -> bool:
    return key in ("libtpu", "libtpu-nightly")


def _coords(value: Any) -> list[int] | None:
    """A TPU's coords as a JSON list of ints; None for any other device (or anything odd)."""
    try:
        values = [int(v) for v in value]
    except Exception:  # noqa: BLE001 - not a TPU device, or a shape we do not know
        return None
    return values if 0 < len(values) <= 8 else None


def _jaxlib_version(errors: dict[str, str]) -> str | None:
    def read() -> str | None:
        import importlib

        # jaxlib is as untyped here as the framework itself: its version is whatever it says.
        jaxlib: Any = importlib.import_module("jaxlib")
        version = getattr(jaxlib, "__version__", None)
        if version is None:
            version = importlib.import_module("jaxlib.version").__version__
        return None if version is None else str(version)

    version = common.guarded(errors, "jaxlib_version", read)
    if version is None:
        version = common.distributions_matching(lambda key: key == "jaxlib").get("jaxlib")
    return version


def _recorded_backend_errors(platforms: str) -> list[str]:
    try:
        from jax._src import xla_bridge
    except Exception:  # noqa: BLE001 - a private module; other releases may move it
        return []
    recorded = getattr(xla_bridge, "_backend_errors", None)
    if not isinstance(recorded, dict):
        return []
    return ["%s: %s" % (name, error) for name, error in recorded.items() if name != "tpu" or "tpu" in platforms]


def _gpu_expected(platforms: str, plugins: dict[str, str | None]) -> bool:
    if any(word in platforms for word in ("cuda", "gpu", "rocm")):
        return True
    if any(key.startswith(("jax-cuda", "jax-rocm")) for key in plugins):
        return True
    return any(
        os.path.exists(path) for path in ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/kfd")
    )


def body(jax: Any, probe: common.Probe) -> None:
    doc, errors = probe.doc, probe.errors
    platforms = os.environ.get("JAX_PLATFORMS", os.environ.get("JAX_PLATFORM_NAME", "")).lower()
    backend_errors: list[str] = []
    doc["version"] = getattr(jax, "__version__", None)
    doc["jaxlib_version"] = _jaxlib_version(errors)
    doc["plugins"] = common.guarded(errors, "plugins", lambda: common.distributions_matching(_is_plugin), {})
    try:
        doc["default_backend"] = jax.default_backend()
    except Exception as exc:  # noqa: BLE001 - JAX_PLATFORMS=cuda with a broken CUDA raises here
        doc["default_backend"] = None
        backend_errors.append(common.error_text(exc))
    devices: list[Any] | None = common.guarded(errors, "devices", lambda: list(jax.devices()), [])
    doc["devices"] = [
        {
            "id": getattr(d, "id", None),
            "platform": getattr(d, "platform", None),
            "device_kind": getattr(d, "device_kind", None),
            "process_index": getattr(d, "process_index", None),
            "coords": _coords(getattr(d, "coords", None)),
            "core_on_chip": getattr(d, "core_on_chip", None),
        }
        for d in devices or []
    ]
    doc["libtpu"] = common.guarded(errors, "libtpu", lambda: common.distributions_matching(_is_libtpu), {})
    backend_errors.extend(_recorded_backend_errors(platforms))
    if doc["default_backend"] not in ("gpu", "cuda", "rocm") and _gpu_expected(platforms, doc["plugins"] or {}):
        wanted = "rocm" if ("rocm" in platforms or os.path.exists("/dev/kfd")) else "cuda"
        try:
            jax.devices(wanted)
        except Exception as exc:  # noqa: BLE001 - the reason a GPU is not used is the point
            backend_errors.append("%s: %s" % (wanted, common.error_text(exc)))
    doc["backend_errors"] = common.unique(backend_errors)


def main() -> None:
    probe = common.Probe("jax", "jax", candidates=("jax",), conda_names=("jax",), info_loggers=INFO_LOGGERS)
    common.run(probe, body)


if __name__ == "__main__":
    main()
