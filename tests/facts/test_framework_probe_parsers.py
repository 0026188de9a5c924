"""The framework probes' JSON read into facts: run statuses, normalised values, garbage tolerance.

GPU-side records can only be SYNTHETIC here (``tests/synthetic/framework_probe_json.py``); the real CPU-side
records a probe printed on this machine are in ``tests/recorded/*/framework-*.json`` and are tested where present.
"""

from __future__ import annotations

import copy
import json
import pathlib
from typing import Any, Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.framework_model import (
    CupyFacts,
    FrameworkDevice,
    InstallOrigin,
    JaxFacts,
    LoadedLibrary,
    ProbeRun,
    PythonTarget,
    TensorflowFacts,
    TorchFacts,
    probe_file_name,
)
from gpudoctor.facts.framework_probe import (
    TAIL_LINES,
    capability,
    dotted_version,
    parse_cupy_probe,
    parse_install_origin,
    parse_jax_probe,
    parse_loaded_libraries,
    parse_python_target,
    parse_tensorflow_probe,
    parse_torch_probe,
    probe_run,
)
from tests.helpers.strategies import any_code_points, json_like, mutated_json
from tests.synthetic import framework_probe_json as synthetic

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded"
PARSERS: dict[str, Callable[[EvidenceItem | None], Any]] = {
    "torch": parse_torch_probe,
    "tensorflow": parse_tensorflow_probe,
    "jax": parse_jax_probe,
    "cupy": parse_cupy_probe,
}
FACT_TYPES = {"torch": TorchFacts, "tensorflow": TensorflowFacts, "jax": JaxFacts, "cupy": CupyFacts}


def _item(framework: str, record: Any = None, **kwargs: Any) -> EvidenceItem:
    text = kwargs.pop("text", None if record is None else json.dumps(record))
    return EvidenceItem(name=probe_file_name(framework), kind="json", text=text, **kwargs)


# --- run statuses ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("framework", list(PARSERS))
def test_no_evidence_is_not_collected(framework: str) -> None:
    facts = PARSERS[framework](None)
    assert isinstance(facts, FACT_TYPES[framework])
    assert facts.run == ProbeRun(status="not_collected")
    assert facts.python is None and facts.version is None


def test_timed_out() -> None:
    item = _item(
        "torch",
        text=None,
        timed_out=True,
        exit_code=None,
        duration_s=60.0,
        stderr="importing torch...\n",
        error="timed out after 60 s",
    )
    run = parse_torch_probe(item).run
    assert (run.status, run.error, run.duration_s, run.output_tail) == (
        "timed_out",
        "timed out after 60 s",
        60.0,
        "importing torch...",
    )


def test_a_segfault_without_output_is_crashed_with_the_tail() -> None:
    # SYNTHETIC: a probe killed by SIGSEGV while a framework loaded its libraries.
    stderr = "\n".join(f"line {n}" for n in range(40)) + "\nFatal Python error: Segmentation fault\n"
    run = parse_tensorflow_probe(_item("tensorflow", text="", exit_code=-11, stderr=stderr)).run
    assert (run.status, run.error, run.exit_code) == ("crashed", "the probe printed no result", -11)
    assert run.output_tail is not None
    tail = run.output_tail.splitlines()
    assert len(tail) == TAIL_LINES and tail[-1] == "Fatal Python error: Segmentation fault"


def test_collector_error_is_kept_for_a_crash() -> None:
    run = probe_run(_item("jax", text=None, error="the target Python could not be started"), None)
    assert (run.status, run.error) == ("crashed", "the target Python could not be started")


def test_json_that_is_not_a_record_is_a_crash() -> None:
    assert parse_cupy_probe(_item("cupy", text="[1, 2]")).run.status == "crashed"
    run = parse_cupy_probe(_item("cupy", text='{"probe": "cupy"}')).run
    assert (run.status, run.error) == ("crashed", "the probe printed an incomplete result")


def test_a_banner_before_the_record_is_skipped() -> None:
    # SYNTHETIC: a library printed to stdout before the probe's JSON line.
    text = "Hello from a sitecustomize banner\n" + json.dumps(synthetic.SYNTHETIC_CUPY_OK) + "\n"
    facts = parse_cupy_probe(_item("cupy", text=text))
    assert facts.run.status == "ok" and facts.version == "13.3.0"


def test_not_installed() -> None:
    facts = parse_cupy_probe(_item("cupy", synthetic.SYNTHETIC_NOT_INSTALLED, exit_code=0, duration_s=0.2))
    assert facts.run == ProbeRun(status="not_installed", exit_code=0, duration_s=0.2)
    assert facts.version is None and facts.python is not None and facts.python.version == "3.12.3"


def test_import_error_keeps_the_exception_line_and_the_distribution_version() -> None:
    facts = parse_torch_probe(_item("torch", synthetic.SYNTHETIC_TORCH_IMPORT_ERROR, exit_code=0))
    assert facts.run.status == "import_error"
    assert facts.run.error is not None and facts.run.error.startswith("ImportError: ")
    assert "undefined symbol: __nvJitLinkComplete_12_4" in facts.run.error
    assert facts.run.output_tail is not None and facts.run.output_tail.startswith("Traceback")
    assert facts.version == "2.5.1"  # from the distribution: known although the import failed
    assert facts.cuda is None and facts.cpu_only is None  # nothing probed: the build is unknown
    assert facts.nvidia_packages["nvidia-nvjitlink-cu12"] == "12.6.85"


# --- torch -----------------------------------------------------------------------------------------------------
def test_synthetic_torch_cuda_build_normalised() -> None:
    facts = parse_torch_probe(_item("torch", synthetic.SYNTHETIC_TORCH_CUDA_OK, exit_code=0, duration_s=3.2))
    assert facts.run.status == "ok" and facts.source == "probe"
    assert (facts.version, facts.cuda, facts.hip, facts.debug_build) == ("2.6.0+cu126", "12.6", None, False)
    assert facts.cudnn == "9.5.1" and facts.nccl == "2.21.5" and facts.driver_cuda == "12.6"
    assert facts.arch_list_known and facts.arch_list[-1] == "sm_90"
    assert (facts.is_available, facts.device_count, facts.cpu_only) == (True, 1, False)
    assert facts.devices == [
        FrameworkDevice(
            index=0, name="NVIDIA GeForce RTX 4090", compute_capability="8.9", memory_total_mib=24217, platform="cuda"
        )
    ]
    assert facts.unsupported_capability is None
    by_name = {lib.name: lib for lib in facts.loaded_libraries}
    assert by_name["libcudnn_graph"].version == "9" and by_name["libcudnn_graph"].from_pip
    assert by_name["libcuda"] == LoadedLibrary(
        path="/usr/lib/x86_64-linux-gnu/libcuda.so.560.35.03", name="libcuda", version="560.35.03", from_pip=False
    )
    assert by_name["libtorch_cuda"].version is None
    assert facts.origin == InstallOrigin(installer="pip", index_hint="download.pytorch.org/whl/cu126")
    assert facts.python == PythonTarget(
        executable="/home/ada/venv/bin/python",
        version="3.12.3",
        implementation="CPython",
        platform="linux",
        machine="x86_64",
        prefix="/home/ada/venv",
        virtualenv=True,
        conda_prefix=None,
    )


def test_synthetic_torch_warning_names_the_unsupported_gpu() -> None:
    facts = parse_torch_probe(_item("torch", synthetic.SYNTHETIC_TORCH_SM120_UNSUPPORTED))
    assert (facts.unsupported_gpu, facts.unsupported_capability) == ("NVIDIA GeForce RTX 5090", "12.0")
    assert facts.devices[0].compute_capability == "12.0" and facts.driver_cuda == "12.8"


def test_synthetic_torch_cuda_init_failure() -> None:
    facts = parse_torch_probe(_item("torch", synthetic.SYNTHETIC_TORCH_CUDA_INIT_FAILS))
    assert facts.is_available is False and facts.device_count == 0
    assert facts.cuda_init_error is not None and "too old (found version 11040)" in facts.cuda_init_error
    assert facts.driver_cuda == "11.4" and facts.cuda == "12.6"


def test_torch_driver_cuda_zero_is_unknown() -> None:
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_INIT_FAILS)
    record["driver_cuda_version"] = 0
    assert parse_torch_probe(_item("torch", record)).driver_cuda is None


def test_torch_wrong_types_are_unknown() -> None:
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record.update(
        {
            "cuda": 12.6,
            "cudnn": "fast",
            "arch_list": "sm_90",
            "is_available": "yes",
            "device_count": True,
            "devices": [{"index": "0", "capability": [8], "total_memory": -1}, "gpu"],
            "nccl": {"major": 2},
            "python": ["3.12"],
            "loaded_libraries": [42, "/lib/libcudart.so.12"],
        }
    )
    facts = parse_torch_probe(_item("torch", record))
    assert facts.run.status == "ok"
    assert (facts.cuda, facts.cudnn, facts.nccl, facts.is_available, facts.device_count) == (None,) * 5
    assert facts.arch_list == [] and facts.arch_list_known is False
    assert facts.devices == [FrameworkDevice(platform="cuda")]
    assert facts.python is None
    assert [lib.name for lib in facts.loaded_libraries] == ["libcudart"]


# --- TensorFlow ------------------------------------------------------------------------------------------------
def test_synthetic_tensorflow_gpu() -> None:
    facts = parse_tensorflow_probe(_item("tensorflow", synthetic.SYNTHETIC_TENSORFLOW_GPU_OK))
    assert (facts.version, facts.distribution, facts.keras_version) == ("2.18.0", "tensorflow", "3.8.0")
    assert (facts.built_with_cuda, facts.build_cuda, facts.build_cudnn) == (True, "12.5.1", "9")
    assert facts.build_compute_capabilities == ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]
    assert facts.gpus == [
        FrameworkDevice(index=0, name="NVIDIA GeForce RTX 3090", compute_capability="8.6", platform="gpu")
    ]
    assert facts.gpus_listed is True
    assert facts.log.cannot_dlopen is False and len(facts.log.lines) == 1
    assert facts.origin.index_hint == "pypi"


def test_synthetic_tensorflow_cannot_dlopen() -> None:
    facts = parse_tensorflow_probe(_item("tensorflow", synthetic.SYNTHETIC_TENSORFLOW_CANNOT_DLOPEN))
    assert facts.gpus == [] and facts.gpus_listed is True
    assert facts.log.cannot_dlopen is True
    assert len(facts.log.lines) == 2


def test_tensorflow_crash_reads_the_log_from_stderr() -> None:
    # SYNTHETIC: TensorFlow aborted after logging a cuDNN mismatch; the probe printed nothing.
    stderr = (
        "E0000 00:00:1721000000.000000 4242 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source "
        "was compiled with: 9.3.0.  CuDNN library needs to have matching major version.\nAborted (core dumped)"
    )
    facts = parse_tensorflow_probe(_item("tensorflow", text="", exit_code=-6, stderr=stderr))
    assert facts.run.status == "crashed"
    assert facts.log.cudnn_mismatch == ("9.1.0", "9.3.0")


def test_tensorflow_capabilities_given_as_a_string() -> None:
    record = copy.deepcopy(synthetic.SYNTHETIC_TENSORFLOW_GPU_OK)
    record["build_info"]["cuda_compute_capabilities"] = "sm_70, sm_80,compute_90"
    record["build_info"]["cudnn_version"] = 8
    facts = parse_tensorflow_probe(_item("tensorflow", record))
    assert facts.build_compute_capabilities == ["sm_70", "sm_80", "compute_90"]
    assert facts.build_cudnn == "8"


# --- JAX and CuPy ----------------------------------------------------------------------------------------------
def test_synthetic_jax_gpu() -> None:
    facts = parse_jax_probe(_item("jax", synthetic.SYNTHETIC_JAX_GPU_OK))
    assert (facts.version, facts.jaxlib_version, facts.default_backend) == ("0.4.38", "0.4.38", "gpu")
    assert facts.plugins == {"jax-cuda12-plugin": "0.4.38", "jax-cuda12-pjrt": "0.4.38"}
    assert [(d.index, d.name, d.platform) for d in facts.devices] == [
        (0, "NVIDIA A100-SXM4-80GB", "gpu"),
        (1, "NVIDIA A100-SXM4-80GB", "gpu"),
    ]
    assert facts.cpu_fallback_warning is None and facts.backend_errors == []


def test_synthetic_jax_cpu_fallback() -> None:
    facts = parse_jax_probe(_item("jax", synthetic.SYNTHETIC_JAX_CPU_FALLBACK))
    assert facts.default_backend == "cpu"
    assert facts.cpu_fallback_warning is not None
    assert "CUDA-enabled jaxlib is not installed" in facts.cpu_fallback_warning


def test_jax_backend_error_logged_but_not_caught_is_kept() -> None:
    record = copy.deepcopy(synthetic.SYNTHETIC_JAX_CPU_FALLBACK)
    line = (
        "Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU devices. (you may need to "
        "uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)"
    )
    record["log_lines"] = [line]
    record["backend_errors"] = ["something else", 7]
    assert parse_jax_probe(_item("jax", record)).backend_errors == ["something else", line]


def test_synthetic_cupy() -> None:
    facts = parse_cupy_probe(_item("cupy", synthetic.SYNTHETIC_CUPY_OK))
    assert (facts.version, facts.distribution, facts.runtime_cuda, facts.driver_cuda) == (
        "13.3.0",
        "cupy-cuda12x",
        "12.6",
        "12.4",
    )
    assert facts.devices == [
        FrameworkDevice(index=0, name="NVIDIA GeForce RTX 4090", compute_capability="8.9", platform="cuda")
    ]
    broken = parse_cupy_probe(_item("cupy", synthetic.SYNTHETIC_CUPY_NO_DRIVER))
    assert broken.driver_cuda is None and broken.runtime_cuda == "12.6"
    assert broken.error is not None and broken.error.startswith("cudaErrorInsufficientDriver")


# --- shared helpers --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (90100, "9.1.0"),
        (7605, "7.6.5"),
        (8902, "8.9.2"),
        (90501, "9.5.1"),
        ([2, 21, 5], "2.21.5"),
        (2708, "2.7.8"),
        (22105, "2.21.5"),
        ("9.1.0", "9.1.0"),
        ("90100", "9.1.0"),
        (0, None),
        (-1, None),
        (True, None),
        (None, None),
        ("x", None),
        ([2, "21"], None),
    ],
)
def test_dotted_version(value: Any, expected: str | None) -> None:
    assert dotted_version(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([8, 6], "8.6"),
        ([12, 0], "12.0"),
        ("86", "8.6"),
        (120, "12.0"),
        ("8.6", "8.6"),
        ([8], None),
        ([True, 1], None),
        (5, None),
        ("sm_86", None),
        (None, None),
    ],
)
def test_capability(value: Any, expected: str | None) -> None:
    assert capability(value) == expected


@pytest.mark.parametrize(
    ("distribution", "version", "framework", "platform", "hint"),
    [
        ({"installer": "conda", "conda_channel": "conda-forge"}, "2.5.1", "torch", "linux", "conda:conda-forge"),
        ({"installer": "conda"}, "2.5.1", "torch", "linux", "conda"),
        ({"installer": "pip"}, "2.6.0+cu126", "torch", "linux", "download.pytorch.org/whl/cu126"),
        ({"installer": "uv"}, "2.6.0+rocm6.2.4", "torch", "linux", "download.pytorch.org/whl/rocm6.2.4"),
        ({"installer": "pip"}, "2.6.0+cpu", "torch", "win32", "download.pytorch.org/whl/cpu"),
        ({"installer": "pip"}, "2.6.0", "torch", "linux", "pypi"),
        ({"installer": "pip"}, "2.6.0", "torch", "darwin", None),  # both indexes serve the same plain wheel there
        ({"installer": "pip"}, "2.6.0", "torch", None, None),
        ({"installer": "pip"}, "2.18.0", "tensorflow", "win32", "pypi"),
        (
            {"installer": "pip", "direct_url": "file:///tmp/torch-2.6.0-cp312-linux_x86_64.whl"},
            "2.6.0",
            "torch",
            "linux",
            "file:///tmp/torch-2.6.0-cp312-linux_x86_64.whl",
        ),
        ({"installer": None}, "2.6.0", "torch", "linux", None),
        ({}, None, "torch", "linux", None),
    ],
)
def test_install_origin_hint(
    distribution: dict[str, Any], version: str | None, framework: str, platform: str | None, hint: str | None
) -> None:
    python = PythonTarget(platform=platform) if platform else None
    origin = parse_install_origin(distribution, version, framework, python)
    assert origin.index_hint == hint
    assert origin.installer == distribution.get("installer")


def test_install_origin_direct_url_as_a_record() -> None:
    origin = parse_install_origin(
        {"installer": "pip", "direct_url": {"url": "https://example.org/t.whl"}}, "1.0", "tensorflow"
    )
    assert origin.url == "https://example.org/t.whl" and origin.index_hint == "https://example.org/t.whl"


def test_loaded_libraries() -> None:
    libraries = parse_loaded_libraries(
        [
            "/v/lib/python3.12/dist-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
            "/v/lib/python3.12/site-packages/torch/lib/libcudart-d0da41ae.so.11.0",
            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127",
            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127",  # listed twice (two mappings)
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0",
            "not a library",
            3,
            None,
        ]
    )
    assert [(lib.name, lib.version, lib.from_pip) for lib in libraries] == [
        ("libcudart", "12", True),
        ("libcudart", "11.0", False),
        ("libcudart", "12.4.127", False),
        ("libcudnn", "9.1.0", False),
    ]
    assert parse_loaded_libraries("libcudart.so.12") == []


def test_python_target_from_either_record() -> None:
    whole = synthetic.SYNTHETIC_CUPY_OK
    assert parse_python_target(whole) == parse_python_target(whole["python"])
    assert parse_python_target({"probe": "torch", "version": "2.6.0"}) is None
    assert parse_python_target({}) is None and parse_python_target("3.12") is None


# --- the real records this machine's probes printed ------------------------------------------------------------
RECORDED_DIR = RECORDED / "cpu-container-debian"
RECORDED_FILES = sorted(RECORDED.glob("*/framework-*.json")) if RECORDED.is_dir() else []


def _recorded(framework: str) -> Any:
    path = RECORDED_DIR / probe_file_name(framework)
    if not path.is_file():
        pytest.skip(f"{path.name} not recorded yet")
    return PARSERS[framework](_item(framework, text=path.read_text(encoding="utf-8"), exit_code=0))


def _assert_recorded_python(python: PythonTarget | None) -> None:
    assert python is not None
    assert (python.version, python.platform, python.machine, python.virtualenv) == ("3.11.7", "linux", "x86_64", True)
    assert python.os == "linux" and python.conda_prefix is None


def test_recorded_torch_cpu_wheel() -> None:
    facts = _recorded("torch")
    assert facts.run.status == "ok" and facts.run.error is None
    assert (facts.version, facts.local_tag, facts.cuda, facts.hip, facts.cpu_only) == (
        "2.13.0+cpu",
        "cpu",
        None,
        None,
        True,
    )
    assert (facts.is_available, facts.device_count, facts.devices) == (False, 0, [])
    assert facts.arch_list == [] and facts.arch_list_known is True  # a CPU build really has no CUDA arches
    assert (facts.cudnn, facts.nccl, facts.driver_cuda, facts.debug_build) == (None, None, None, False)
    assert facts.origin == InstallOrigin(installer="pip", index_hint="download.pytorch.org/whl/cpu")
    assert facts.loaded_libraries == [] and facts.nvidia_packages == {}
    _assert_recorded_python(facts.python)


def test_recorded_tensorflow_cpu() -> None:
    facts = _recorded("tensorflow")
    assert facts.run.status == "ok"
    assert (facts.version, facts.distribution, facts.keras_version) == ("2.21.0", "tensorflow-cpu", "3.15.1")
    assert (facts.built_with_cuda, facts.build_cuda, facts.build_cudnn) == (False, None, None)
    assert facts.build_compute_capabilities == []
    assert facts.gpus == [] and facts.gpus_listed is True
    # Its log (oneDNN, CPU instructions) says nothing about GPU libraries.
    assert facts.log.lines == [] and facts.log.missing_libraries == [] and not facts.log.cannot_dlopen
    assert facts.origin.index_hint == "pypi" and facts.origin.installer == "pip"
    _assert_recorded_python(facts.python)


def test_recorded_jax_cpu_fallback_on_a_machine_with_nvidia_user_space() -> None:
    facts = _recorded("jax")
    assert facts.run.status == "ok"
    assert (facts.version, facts.jaxlib_version, facts.plugins, facts.default_backend) == (
        "0.10.2",
        "0.10.2",
        {},
        "cpu",
    )
    assert facts.devices == [FrameworkDevice(index=0, name="cpu", platform="cpu")]
    assert facts.cpu_fallback_warning == (
        "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, "
        "but a CUDA-enabled jaxlib is not installed. Falling back to cpu."
    )
    # The probe's own cuda error; the logged TPU failure is not a GPU backend error.
    assert facts.backend_errors == ["cuda: RuntimeError: Unknown backend cuda. Available backends are ['cpu']"]
    _assert_recorded_python(facts.python)


def test_recorded_cupy_not_installed() -> None:
    facts = _recorded("cupy")
    assert facts.run.status == "not_installed" and facts.run.exit_code == 0
    assert (facts.version, facts.distribution, facts.device_count) == (None, None, None)
    _assert_recorded_python(facts.python)


@pytest.mark.parametrize("path", RECORDED_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_recorded_probe_output(path: pathlib.Path) -> None:
    framework = path.stem.split("-", 1)[1]
    if framework not in PARSERS:
        pytest.skip(f"no parser for {framework}")
    text = path.read_text(encoding="utf-8")
    facts = PARSERS[framework](_item(framework, text=text, exit_code=0))
    assert isinstance(facts, FACT_TYPES[framework])
    assert facts.run.status in ("ok", "not_installed", "import_error"), facts.run
    assert facts.python is not None and facts.python.platform is not None
    record = json.loads(text)
    if facts.run.status != "not_installed":
        assert facts.version is not None and facts.version == record.get("version", facts.version)


def test_probe_error_after_a_good_import_keeps_ok_and_says_why() -> None:
    # SYNTHETIC: the probe's own bug after the import (the shape _probe_common.finish writes).
    record = copy.deepcopy(synthetic.SYNTHETIC_CUPY_OK)
    record["probe_error"] = "Traceback (most recent call last):\n  File \"cupy_probe.py\", line 9\nKeyError: 'x'\n"
    run = parse_cupy_probe(_item("cupy", record)).run
    assert (run.status, run.error) == ("ok", "the probe failed: KeyError: 'x'")
    assert run.output_tail is not None and run.output_tail.startswith("Traceback")


def test_probe_that_could_not_encode_its_record() -> None:
    # SYNTHETIC: emit()'s fallback record when json.dumps failed.
    record = {
        "probe": "torch",
        "probe_version": 1,
        "python": synthetic.SYNTHETIC_PYTHON,
        "installed": True,
        "probe_error": "could not encode JSON: Out of range float values are not JSON compliant",
    }
    facts = parse_torch_probe(_item("torch", record))
    assert facts.run.status == "crashed"
    assert (
        facts.run.error == "the probe failed: could not encode JSON: Out of range float values are not JSON compliant"
    )
    assert facts.python is not None and facts.python.version == "3.12.3"


# --- garbage never raises --------------------------------------------------------------------------------------
item_fields = st.fixed_dictionaries(
    {
        "exit_code": st.none() | st.integers(-15, 255),
        "stderr": st.text(max_size=200),
        "timed_out": st.booleans(),
        "duration_s": st.none() | st.floats(allow_nan=True),
        "error": st.none() | st.text(max_size=40),
    }
)


@pytest.mark.parametrize("framework", list(PARSERS))
@given(text=st.none() | any_code_points(), fields=item_fields)
def test_any_text_gives_facts(framework: str, text: str | None, fields: dict[str, Any]) -> None:
    facts = PARSERS[framework](EvidenceItem(name="x", kind="json", text=text, **fields))
    assert isinstance(facts, FACT_TYPES[framework])
    assert facts.run.status in ("ok", "not_installed", "import_error", "crashed", "timed_out")


@pytest.mark.parametrize("framework", list(PARSERS))
@given(value=json_like())
def test_any_json_gives_facts(framework: str, value: object) -> None:
    facts = PARSERS[framework](_item(framework, text=json.dumps(value)))
    assert isinstance(facts, FACT_TYPES[framework])


@pytest.mark.parametrize("name", sorted(synthetic.ALL_SYNTHETIC))
@given(data=st.data())
def test_mutated_synthetic_records_never_raise(name: str, data: st.DataObject) -> None:
    record = synthetic.ALL_SYNTHETIC[name]
    framework = record["probe"]
    value = data.draw(mutated_json(copy.deepcopy(record)))
    facts = PARSERS[framework](_item(framework, text=json.dumps(value)))
    assert isinstance(facts, FACT_TYPES[framework])
    for device in getattr(facts, "devices", []) + getattr(facts, "gpus", []):
        assert device.compute_capability is None or device.compute_capability.count(".") == 1
    for library in facts.loaded_libraries:
        assert isinstance(library, LoadedLibrary) and library.name
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in facts.nvidia_packages.items())


@given(json_like(), st.none() | st.text(max_size=30), st.sampled_from(["torch", "tensorflow", "jax", "cupy"]))
def test_install_origin_takes_anything(distribution: object, version: str | None, framework: str) -> None:
    assert isinstance(parse_install_origin(distribution, version, framework), InstallOrigin)


@given(json_like())
def test_helpers_take_anything(value: object) -> None:
    assert parse_python_target(value) is None or isinstance(parse_python_target(value), PythonTarget)
    assert isinstance(parse_loaded_libraries(value), list)
    assert dotted_version(value) is None or isinstance(dotted_version(value), str)
    assert capability(value) is None or isinstance(capability(value), str)
