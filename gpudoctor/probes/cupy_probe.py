"""CuPy probe: run as ``TARGET_PYTHON cupy_probe.py``; prints one JSON document (see ``_probe_common``).

Keys added to the common contract::

    "version"          cupy.__version__
    "runtime_version"  cupy.cuda.runtime.runtimeGetVersion() (12040)
    "driver_version"   cupy.cuda.runtime.driverGetVersion() (12040; 0 when no driver)
    "device_count"     cupy.cuda.runtime.getDeviceCount()
    "devices"          [{"index", "name", "capability": [maj, min], "total_memory" (bytes)}]
    "error"            the first CUDA error one of those calls raised ("CUDARuntimeError: cudaErrorNoDevice: ...")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
else:
    import _probe_common as common


def _is_cupy(key: str) -> bool:
    return key == "cupy" or key.startswith(("cupy-cuda", "cupy-rocm"))


def _device(runtime: Any, index: int, errors: dict[str, str]) -> dict[str, Any]:
    props = common.guarded(errors, "device %d" % index, lambda: runtime.getDeviceProperties(index))
    if not isinstance(props, dict):
        return {"index": index, "name": None, "capability": None, "total_memory": None}
    name = props.get("name")
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    major, minor = props.get("major"), props.get("minor")
    return {
        "index": index,
        "name": name,
        "capability": [major, minor] if major is not None and minor is not None else None,
        "total_memory": props.get("totalGlobalMem"),
    }


def body(cupy: Any, probe: common.Probe) -> None:
    doc = probe.doc
    errors: dict[str, str] = {}
    doc["version"] = getattr(cupy, "__version__", None)
    runtime = common.guarded(errors, "runtime", lambda: cupy.cuda.runtime)
    doc["runtime_version"] = doc["driver_version"] = doc["device_count"] = None
    doc["devices"] = []
    if runtime is not None:
        doc["runtime_version"] = common.guarded(errors, "runtime_version", runtime.runtimeGetVersion)
        doc["driver_version"] = common.guarded(errors, "driver_version", runtime.driverGetVersion)
        doc["device_count"] = common.guarded(errors, "device_count", runtime.getDeviceCount)
        doc["devices"] = [_device(runtime, index, errors) for index in range(doc["device_count"] or 0)]
    doc["error"] = next(iter(errors.values()), None)
    probe.errors.update(errors)


def main() -> None:
    # The dist's name says the CUDA major it was built for: cupy-cuda12x, cupy-cuda11x, cupy-cuda102...
    found = sorted(common.distributions_matching(_is_cupy))
    candidates = [key for key in found if key != "cupy"] + ["cupy"]
    probe = common.Probe("cupy", "cupy", candidates=candidates, conda_names=("cupy", "cupy-core"), family=_is_cupy)
    common.run(probe, body)


if __name__ == "__main__":
    main()
