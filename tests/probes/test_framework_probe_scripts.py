"""The probe scripts as files: stdlib only, Python 3.8 syntax, the shared helpers, and the recorded outputs' contract.

The probes themselves run for real in ``tests/integration/test_framework_probes_live.py``.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import sys

import pytest

from gpudoctor.evidence.framework_probes import CAPTURE_FILE_ENV, probe_argv, probe_env, probe_path
from gpudoctor.facts.framework_model import FRAMEWORKS, PROBE_VERSION, probe_file_name
from gpudoctor.probes import _probe_capture, _probe_target, protocol
from gpudoctor.probes import _probe_common as common

PROBES_DIR = pathlib.Path(probe_path("torch")).parent
PROBE_FILES = sorted(PROBES_DIR.glob("*.py"))
RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian"


def test_every_framework_has_its_probe_file():
    for framework in FRAMEWORKS:
        assert os.path.isfile(probe_path(framework)), framework
    with pytest.raises(ValueError):
        probe_path("mxnet")


def test_probe_argv_runs_the_file_in_the_target_python():
    assert probe_argv("jax", "/envs/x/bin/python") == ["/envs/x/bin/python", probe_path("jax")]


def test_probe_env_keeps_the_users_environment():
    base = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES": "1", "__PYVENV_LAUNCHER__": "/x"}
    env = probe_env("torch", base)
    assert env["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64" and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "__PYVENV_LAUNCHER__" not in env and "TF_CPP_MIN_LOG_LEVEL" not in env
    assert base["__PYVENV_LAUNCHER__"] == "/x"  # the caller's mapping is left alone
    assert probe_env("tensorflow", {"TF_CPP_MIN_LOG_LEVEL": "3"})["TF_CPP_MIN_LOG_LEVEL"] == "0"


def test_the_capture_variable_is_the_one_the_probes_read():
    assert CAPTURE_FILE_ENV == common.FD_CAPTURE_ENV == protocol.CAPTURE_FILE_ENV


def test_the_protocol_constants_have_one_home():
    # gpudoctor's side names the very objects the probes import: nothing is copied.
    assert FRAMEWORKS is protocol.FRAMEWORKS and PROBE_VERSION == protocol.PROBE_VERSION
    assert probe_file_name is protocol.probe_file_name and probe_file_name("jax") == "framework-jax.json"
    for framework in FRAMEWORKS:
        assert pathlib.Path(probe_path(framework)).name == protocol.probe_script_name(framework)


@pytest.mark.parametrize("path", PROBE_FILES, ids=lambda p: p.name)
def test_probe_files_parse_as_python_3_8(path):
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 8))


@pytest.mark.skipif(sys.version_info < (3, 10), reason="sys.stdlib_module_names is 3.10+")
@pytest.mark.parametrize("path", PROBE_FILES, ids=lambda p: p.name)
def test_probe_files_import_only_the_stdlib_and_their_framework(path):
    # Our own modules beside the probes are imported by name when a probe runs as a script.
    own = {other.stem for other in PROBE_FILES}
    allowed = set(sys.stdlib_module_names) | own | {*FRAMEWORKS, "jaxlib"}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


@pytest.mark.parametrize(
    "file_name",
    [
        # Real file names of CUDA libraries as wheels, conda and the driver install them.
        "libcuda.so.1",
        "libcuda.so.535.183.01",
        "libcudart.so.12",
        "libcudart-d0da41ae.so.11.0",
        "libcudnn.so.9",
        "libcudnn_graph.so.9",
        "libcudnn_ops_infer.so.8",
        "libcublas.so.12",
        "libcublasLt.so.12",
        "libnvJitLink.so.12",
        "libnvrtc.so.12",
        "libnvrtc-builtins.so.12.6",
        "libnccl.so.2",
        "libcusparse.so.12",
        "libcufft.so.11",
        "libcurand.so.10",
        "libcusolver.so.11",
        "libnvidia-ml.so.1",
        "libnvidia-ptxjitcompiler.so.535.183.01",
        "libcupti.so.12",
        "libnvToolsExt.so.1",
    ],
)
def test_cuda_libraries_are_recognised(file_name):
    assert _probe_target._CUDA_LIBRARY.match(file_name)


@pytest.mark.parametrize(
    "file_name",
    [
        "libc.so.6",
        "libpython3.11.so.1.0",
        "libtorch_cuda.so",
        "libtensorflow_framework.so.2",
        "libcuda_plugin.so",
        "libstdc++.so.6",
        "libgomp-a34b3233.so.1",
        "libcudart.a",
    ],
)
def test_other_libraries_are_not(file_name):
    assert not _probe_target._CUDA_LIBRARY.match(file_name)


def test_names_are_normalised_like_pip():
    assert _probe_target.normalize_name("tensorflow_cpu") == "tensorflow-cpu"
    assert _probe_target.normalize_name("Nvidia.CuDNN__cu12") == "nvidia-cudnn-cu12"


def test_metadata_headers_stop_at_the_body():
    text = "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0\n\nName: not-a-header\n"
    assert _probe_target._metadata_field(text, "name") == "torch"
    assert _probe_target._metadata_field(text, "Summary") is None
    assert _probe_target._metadata_field(None, "Name") is None


def test_long_outputs_are_bounded():
    lines = [f"line {i}" for i in range(10_000)] + ["x" * 10_000]
    kept = _probe_capture.bounded(lines)
    assert len(kept) == _probe_capture.MAX_LINES + 1
    assert kept[0] == "line 0" and "lines left out" in kept[_probe_capture.MAX_LINES // 2]
    assert len(kept[-1]) == _probe_capture.MAX_LINE_CHARS + 3


def test_error_text_quotes_type_and_message():
    assert (
        _probe_capture.error_text(RuntimeError("No CUDA GPUs are available"))
        == "RuntimeError: No CUDA GPUs are available"
    )
    assert _probe_capture.error_text(KeyError()) == "KeyError"


# --- the recorded outputs keep the contract (they are parsed by the facts tests) ---------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_recorded_outputs_keep_the_contract(framework):
    path = RECORDED / probe_file_name(framework)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["probe"] == framework and record["probe_version"] == PROBE_VERSION
    assert {"executable", "version", "platform", "prefix", "virtualenv"} <= set(record["python"])
    if record["installed"]:
        assert record["import_ok"] is True and record["import_s"] > 0
        for key in ("distribution", "nvidia_packages", "import_error", "log_lines", "warnings", "loaded_libraries"):
            assert key in record, key
