"""The framework probes' JSON (``framework-<name>.json``), read into typed facts.

One parser per framework (torch, TensorFlow, JAX, CuPy) over the shared readers of
:mod:`gpudoctor.facts.framework_record` (the target Python, how the probe run went, the
shared objects the framework mapped, and where its distribution came from), whose public
names stay importable from here.  The JSON keys are the contract in
:mod:`gpudoctor.facts.framework_model`; every value is checked for its type, and
a value of the wrong type is unknown (``None``) or skipped, never an error.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.collect_env import parse_unsupported_gpu_warning
from gpudoctor.facts.framework_model import (
    CupyFacts,
    FrameworkDevice,
    JaxFacts,
    PythonTarget,
    TensorflowFacts,
    TorchFacts,
)
from gpudoctor.facts.framework_record import MAX_ITEMS as MAX_ITEMS
from gpudoctor.facts.framework_record import MAX_TEXT as MAX_TEXT
from gpudoctor.facts.framework_record import TAIL_LINES as TAIL_LINES
from gpudoctor.facts.framework_record import _bool as _bool
from gpudoctor.facts.framework_record import (
    _devices,
    _nonzero_cuda,
    _Probe,
    _str_map,
    _strings,
)
from gpudoctor.facts.framework_record import _float as _float
from gpudoctor.facts.framework_record import _probe_json as _probe_json
from gpudoctor.facts.framework_record import _str as _str
from gpudoctor.facts.framework_record import _tail as _tail
from gpudoctor.facts.framework_record import capability as capability
from gpudoctor.facts.framework_record import dotted_version as dotted_version
from gpudoctor.facts.framework_record import parse_install_origin as parse_install_origin
from gpudoctor.facts.framework_record import parse_loaded_libraries as parse_loaded_libraries
from gpudoctor.facts.framework_record import parse_python_target as parse_python_target
from gpudoctor.facts.framework_record import probe_run as probe_run
from gpudoctor.facts.json_values import json_dict, json_int
from gpudoctor.facts.tensorflow_log import parse_tensorflow_log

if TYPE_CHECKING:
    from gpudoctor.facts.tpu_model import TpuDevice

_JAX_CPU_FALLBACK = ("CUDA-enabled jaxlib is not installed", "An NVIDIA GPU may be present on this machine")
_JAX_BACKEND_ERROR = re.compile(r"Unable to initialize backend '(?:cuda|gpu|rocm)'", re.IGNORECASE)


def with_macos_target(python: PythonTarget | None, record: object) -> PythonTarget | None:
    """``python`` with the probe's macOS-only keys (``mac_version``, ``translated``: Rosetta) read from ``record``."""
    target = record.get("python") if isinstance(record, dict) else None
    if not isinstance(target, dict):
        return python
    mac_version, translated = _str(target.get("mac_version")), _bool(target.get("translated"))
    if mac_version is None and translated is None:
        return python
    return replace(python or PythonTarget(), mac_version=mac_version, translated=translated)


def _with_arch_names(devices: list[FrameworkDevice], records: object) -> list[FrameworkDevice]:
    """ROCm's gcnArchName per device, from the same records ``_devices`` read (dicts only, in order)."""
    dicts = [r for r in records[:MAX_ITEMS] if isinstance(r, dict)] if isinstance(records, list) else []
    return [
        replace(device, arch_name=_str(record.get("arch_name"))) if _str(record.get("arch_name")) else device
        for device, record in zip(devices, dicts)
    ]


# --- one parser per framework ----------------------------------------------------------------------------------
def parse_torch_probe(item: EvidenceItem | None) -> TorchFacts:
    probe = _Probe(item)
    facts = TorchFacts(
        source="probe",
        python=with_macos_target(probe.python, probe.record),
        run=probe.run,
        version=probe.version,
        loaded_libraries=probe.loaded_libraries,
        nvidia_packages=probe.nvidia_packages,
        warnings=probe.warnings,
        log_lines=probe.log_lines,
        origin=parse_install_origin(probe.distribution, probe.version, "torch", probe.python),
    )
    if not probe.probed:
        return facts
    data = probe.record
    hip = _str(data.get("hip"))
    arch_list_known = isinstance(data.get("arch_list"), list)
    # torch's own "not compatible with the current PyTorch installation" warning, as collect_env shows it.
    gpu, cc, _arches, _listed = parse_unsupported_gpu_warning("\n".join(facts.warnings + facts.log_lines))
    return replace(
        facts,
        cuda=_str(data.get("cuda")),
        hip=hip,
        debug_build=_bool(data.get("debug")),
        cudnn=dotted_version(data.get("cudnn")),
        arch_list=[arch.strip() for arch in _strings(data.get("arch_list"))] if arch_list_known else [],
        arch_list_known=arch_list_known,
        is_available=_bool(data.get("is_available")),
        device_count=json_int(data.get("device_count")),
        devices=_with_arch_names(_devices(data.get("devices"), "rocm" if hip else "cuda"), data.get("devices")),
        cuda_init_error=_str(data.get("cuda_init_error")),
        driver_cuda=_nonzero_cuda(data.get("driver_cuda_version")),
        nccl=dotted_version(data.get("nccl")),
        unsupported_gpu=gpu,
        unsupported_capability=cc,
        mps_built=_bool(data.get("mps_built")),
        mps_available=_bool(data.get("mps_available")),
        xpu_built=_bool(data.get("xpu_built")),
        xpu_available=_bool(data.get("xpu_available")),
        xpu_devices=_devices(data.get("xpu_devices"), "xpu"),
    )


def _tensorflow_gpus(gpus: object) -> list[FrameworkDevice]:
    devices: list[FrameworkDevice] = []
    for number, record in enumerate(gpus[:MAX_ITEMS] if isinstance(gpus, list) else []):
        if not isinstance(record, dict):
            continue
        details = json_dict(record.get("details"))
        name = _str(record.get("name"))  # "/physical_device:GPU:0"
        index = re.search(r":(\d+)$", name or "")
        device_type = _str(record.get("device_type"))
        devices.append(
            FrameworkDevice(
                index=int(index.group(1)) if index else number,
                name=_str(details.get("device_name")) or name,
                compute_capability=capability(details.get("compute_capability")),
                platform=device_type.lower() if device_type else "gpu",
            )
        )
    return devices


def parse_tensorflow_probe(item: EvidenceItem | None) -> TensorflowFacts:
    probe = _Probe(item)
    facts = TensorflowFacts(
        source="probe",
        python=with_macos_target(probe.python, probe.record),
        run=probe.run,
        version=probe.version,
        distribution=_str(probe.distribution.get("name")),
        warnings=probe.warnings,
        loaded_libraries=probe.loaded_libraries,
        nvidia_packages=probe.nvidia_packages,
        origin=parse_install_origin(probe.distribution, probe.version, "tensorflow", probe.python),
    )
    if probe.run.status in ("crashed", "timed_out") and item is not None:
        # A TensorFlow that died while loading its GPU libraries said why on stderr.
        text = "\n".join(t for t in (item.stderr, item.text) if isinstance(t, str))
        return replace(facts, log=parse_tensorflow_log(text))
    facts = replace(facts, log=parse_tensorflow_log("\n".join(probe.log_lines)))
    if not probe.probed:
        return facts
    data = probe.record
    build = json_dict(data.get("build_info"))
    built_with_cuda = _bool(data.get("built_with_cuda"))
    if built_with_cuda is None:
        built_with_cuda = _bool(build.get("is_cuda_build"))
    cudnn = build.get("cudnn_version")  # "9"; "64_8" on Windows builds
    rocm_build = _bool(data.get("built_with_rocm"))
    if rocm_build is None:
        rocm_build = _bool(build.get("is_rocm_build"))
    capabilities = build.get("cuda_compute_capabilities")
    if isinstance(capabilities, str):
        capabilities = re.split(r"[,\s]+", capabilities)
    return replace(
        facts,
        keras_version=_str(data.get("keras_version")),
        built_with_cuda=built_with_cuda,
        build_cuda=_str(build.get("cuda_version")),  # "12.5.1"; "64_112" on Windows builds, kept as it is
        build_cudnn=_str(cudnn) if isinstance(cudnn, str) else (str(cudnn) if json_int(cudnn) is not None else None),
        build_compute_capabilities=[c.strip() for c in _strings(capabilities)],
        gpus=_tensorflow_gpus(data.get("gpus")),
        gpus_listed=data.get("gpus_listed") is True,
        rocm_build=rocm_build,
        build_rocm=_str(build.get("rocm_version")),
        metal_plugin=_str(data.get("metal_plugin")),
    )


def parse_jax_probe(item: EvidenceItem | None) -> JaxFacts:
    probe = _Probe(item)
    cpu_fallback_warning: str | None = None
    for line in (line for text in probe.warnings + probe.log_lines for line in text.splitlines()):
        if any(marker in line for marker in _JAX_CPU_FALLBACK):
            cpu_fallback_warning = line.strip()
            break
    facts = JaxFacts(
        python=probe.python,
        run=probe.run,
        version=probe.version,
        cpu_fallback_warning=cpu_fallback_warning,
        log_lines=probe.log_lines,
        loaded_libraries=probe.loaded_libraries,
        nvidia_packages=probe.nvidia_packages,
    )
    if not probe.probed:
        return facts
    data = probe.record
    records = data.get("devices")
    devices = [
        FrameworkDevice(
            index=json_int(record.get("id")),
            name=_str(record.get("device_kind")),
            platform=_str(record.get("platform")),
        )
        for record in (records[:MAX_ITEMS] if isinstance(records, list) else [])
        if isinstance(record, dict)
    ]
    backend_errors = _strings(data.get("backend_errors"))
    # The probe lists the errors it caught; JAX also logs the ones it swallowed while picking a backend.
    for line in probe.log_lines:
        if _JAX_BACKEND_ERROR.search(line) and line not in backend_errors:
            backend_errors.append(line)
    libtpu = data.get("libtpu")
    return replace(
        facts,
        jaxlib_version=_str(data.get("jaxlib_version")),
        plugins=_str_map(data.get("plugins")),
        default_backend=_str(data.get("default_backend")),
        devices=devices,
        backend_errors=backend_errors,
        # A wheel whose version could not be read is still installed: its name stays, with "" for the version.
        libtpu={k: v if isinstance(v, str) else "" for k, v in libtpu.items() if isinstance(k, str) and k}
        if isinstance(libtpu, dict)
        else None,
        tpu_devices=_tpu_devices(records[:MAX_ITEMS] if isinstance(records, list) else []),
    )


def _tpu_devices(records: list[object]) -> tuple[TpuDevice, ...]:
    """The TPU entries of the probe's device list, with their host, chip coordinates and core."""
    tpus = [r for r in records if isinstance(r, dict) and _str(r.get("platform")) == "tpu"]
    if not tpus:
        return ()
    from gpudoctor.facts.tpu_model import TpuDevice  # only where JAX listed a TPU

    devices: list[TpuDevice] = []
    for record in tpus:
        device_id = json_int(record.get("id"))
        if device_id is None:
            continue
        coords = record.get("coords")
        values = [json_int(v) for v in coords] if isinstance(coords, list) else []
        devices.append(
            TpuDevice(
                id=device_id,
                process_index=json_int(record.get("process_index")),
                coords=tuple(v for v in values if v is not None) if values and None not in values else None,
                core_on_chip=json_int(record.get("core_on_chip")),
                kind=_str(record.get("device_kind")),
            )
        )
    return tuple(devices)


def parse_cupy_probe(item: EvidenceItem | None) -> CupyFacts:
    probe = _Probe(item)
    facts = CupyFacts(
        python=probe.python,
        run=probe.run,
        version=probe.version,
        distribution=_str(probe.distribution.get("name")),
        loaded_libraries=probe.loaded_libraries,
        nvidia_packages=probe.nvidia_packages,
    )
    if not probe.probed:
        return facts
    data = probe.record
    return replace(
        facts,
        runtime_cuda=_nonzero_cuda(data.get("runtime_version")),
        driver_cuda=_nonzero_cuda(data.get("driver_version")),
        device_count=json_int(data.get("device_count")),
        devices=_devices(data.get("devices"), "cuda"),
        error=_str(data.get("error")),
    )
