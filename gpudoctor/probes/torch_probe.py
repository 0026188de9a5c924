"""PyTorch probe: run as ``TARGET_PYTHON torch_probe.py``; prints one JSON document (see ``_probe_common``).

Keys added to the common contract::

    "version"              torch.__version__, "2.6.0+cu126"
    "cuda"                 torch.version.cuda ("12.6"), null on CPU and ROCm builds
    "hip"                  torch.version.hip
    "debug"                torch.version.debug
    "cudnn"                torch.backends.cudnn.version() (90100) or null
    "arch_list"            the architectures the build was compiled for ("sm_80", "compute_90"); read from the
                           build itself, so a CUDA build on a machine without a driver still lists them
                           (torch.cuda.get_arch_list() answers [] whenever CUDA is unavailable)
    "is_available"         torch.cuda.is_available()
    "device_count"         torch.cuda.device_count()
    "devices"              [{"index", "name", "capability": [maj, min], "total_memory" (bytes),
                             "multi_processor_count", "arch_name"}]; "arch_name" is ROCm's gcnArchName
                           ("gfx90a:sramecc+:xnack-"), null on CUDA builds. On ROCm builds "arch_list" holds
                           the gfx targets the build was compiled for ("gfx90a", "gfx942")
    "cuda_init_error"      on a CUDA/ROCm build where is_available() is False: the verbatim text of the
                           exception torch.cuda.init() raises, else of the "CUDA initialization: ..." warning;
                           null when CUDA works and on CPU builds
    "driver_cuda_version"  torch._C._cuda_getDriverVersion() (12040), 0 when no driver; null when absent
    "nccl"                 "2.21.5" or null
    "mps_built"            torch.backends.mps.is_built(); null when this torch has no MPS backend module
    "mps_available"        torch.backends.mps.is_available(); null likewise
    "xpu_built"            torch.xpu._is_compiled() (the build has Intel XPU support); null when torch.xpu
                           or the function is absent (torch < 2.4)
    "xpu_available"        torch.xpu.is_available(); null when torch.xpu is absent
    "xpu_device_count"     torch.xpu.device_count(); null when torch.xpu is absent
    "xpu_devices"          [{"index", "name", "total_memory" (bytes), "driver_version"}], only when available
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from . import _probe_common as common
else:
    import _probe_common as common


def _arch_list(torch: Any, errors: dict[str, str]) -> list[str]:
    flags = getattr(getattr(torch, "_C", None), "_cuda_getArchFlags", None)
    if flags is not None:
        value = common.guarded(errors, "arch_list", flags)
        return value.split() if isinstance(value, str) else []
    value = common.guarded(errors, "arch_list", lambda: torch.cuda.get_arch_list(), [])
    return list(value or [])


def _cuda_init_error(torch: Any, probe: common.Probe) -> str | None:
    try:
        torch.cuda.init()
    except BaseException as exc:  # noqa: BLE001  # noqa: BLE001 - this failure is what we came for
        return str(exc) or common.error_text(exc)
    for message in probe.capture.warning_messages_so_far():
        if message.startswith("CUDA initialization"):
            return message
    return None


def _devices(torch: Any, count: int | None, hip: bool, errors: dict[str, str]) -> list[dict[str, Any]]:
    devices: list[dict[str, Any]] = []
    for index in range(count or 0):
        props = common.guarded(errors, "device %d" % index, lambda: torch.cuda.get_device_properties(index))  # noqa: B023 - called at once, inside the loop
        if props is None:
            devices.append(
                {
                    "index": index,
                    "name": None,
                    "capability": None,
                    "total_memory": None,
                    "multi_processor_count": None,
                    "arch_name": None,
                }
            )
            continue
        major, minor = getattr(props, "major", None), getattr(props, "minor", None)
        devices.append(
            {
                "index": index,
                "name": getattr(props, "name", None),
                "capability": [major, minor] if major is not None and minor is not None else None,
                "total_memory": getattr(props, "total_memory", None),
                "multi_processor_count": getattr(props, "multi_processor_count", None),
                # ROCm only: the gfx target with its feature flags, which decides whether the build's kernels run.
                "arch_name": getattr(props, "gcnArchName", None) if hip else None,
            }
        )
    return devices


def _mps(torch: Any, doc: dict[str, Any], errors: dict[str, str]) -> None:
    # torch.backends.mps exists on every platform since 1.12 (is_built() is False off macOS); older torch lacks it,
    # which is no error worth reporting: the keys stay null.
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    if mps is None:
        try:
            import importlib

            mps = importlib.import_module("torch.backends.mps")
        except Exception:  # noqa: BLE001
            mps = None
    doc["mps_built"] = common.guarded(errors, "mps_built", lambda: bool(mps.is_built())) if mps else None
    doc["mps_available"] = common.guarded(errors, "mps_available", lambda: bool(mps.is_available())) if mps else None


def _xpu_devices(xpu: Any, count: int | None, errors: dict[str, str]) -> list[dict[str, Any]]:
    devices: list[dict[str, Any]] = []
    for index in range(min(count or 0, 64)):
        props = common.guarded(errors, "xpu device %d" % index, lambda: xpu.get_device_properties(index))  # noqa: B023 - called at once, inside the loop
        devices.append(
            {
                "index": index,
                "name": getattr(props, "name", None),
                "total_memory": getattr(props, "total_memory", None),
                "driver_version": getattr(props, "driver_version", None),
            }
        )
    return devices


def _xpu(torch: Any, doc: dict[str, Any], errors: dict[str, str]) -> None:
    xpu = getattr(torch, "xpu", None)  # torch >= 2.4 has the module on every build
    compiled = getattr(xpu, "_is_compiled", None)
    doc["xpu_built"] = common.guarded(errors, "xpu_built", lambda: bool(compiled())) if compiled else None
    doc["xpu_available"] = common.guarded(errors, "xpu_available", lambda: bool(xpu.is_available())) if xpu else None
    doc["xpu_device_count"] = common.guarded(errors, "xpu_device_count", lambda: xpu.device_count()) if xpu else None
    doc["xpu_devices"] = _xpu_devices(xpu, doc["xpu_device_count"], errors) if doc["xpu_available"] else []


def _nccl(torch: Any, errors: dict[str, str]) -> str | None:
    def version() -> str:
        import torch.cuda.nccl as nccl

        value = nccl.version()
        if isinstance(value, (tuple, list)):
            return ".".join(str(part) for part in value)
        if isinstance(value, int):  # old releases: 2708 means 2.7.8
            return "%d.%d.%d" % (value // 1000, value % 1000 // 100, value % 100)
        return str(value)

    return common.guarded(errors, "nccl", version)


def body(torch: Any, probe: common.Probe) -> None:
    doc, errors = probe.doc, probe.errors
    build = getattr(torch, "version", None)
    doc["version"] = common.guarded(errors, "version", lambda: str(torch.__version__))
    doc["cuda"] = getattr(build, "cuda", None)
    doc["hip"] = getattr(build, "hip", None)
    doc["debug"] = getattr(build, "debug", None)
    accelerated = bool(doc["cuda"] or doc["hip"])
    doc["cudnn"] = common.guarded(errors, "cudnn", lambda: torch.backends.cudnn.version())
    doc["arch_list"] = _arch_list(torch, errors)
    doc["is_available"] = common.guarded(errors, "is_available", lambda: torch.cuda.is_available())
    doc["device_count"] = common.guarded(errors, "device_count", lambda: torch.cuda.device_count())
    doc["cuda_init_error"] = None
    if accelerated and not doc["is_available"]:
        doc["cuda_init_error"] = _cuda_init_error(torch, probe)
    doc["devices"] = _devices(torch, doc["device_count"], bool(doc["hip"]), errors) if doc["is_available"] else []
    driver = getattr(getattr(torch, "_C", None), "_cuda_getDriverVersion", None)
    doc["driver_cuda_version"] = common.guarded(errors, "driver_cuda_version", driver) if driver else None
    doc["nccl"] = _nccl(torch, errors) if doc["cuda"] else None
    _mps(torch, doc, errors)
    _xpu(torch, doc, errors)


def main() -> None:
    probe = common.Probe("torch", "torch", candidates=("torch",), conda_names=("pytorch",))
    common.run(probe, body)


if __name__ == "__main__":
    main()
