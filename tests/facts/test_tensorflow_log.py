"""TensorFlow logs: real GPU-library lines from issues (fixtures F), and what is not a TensorFlow log."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.framework_model import TensorflowLog
from gpudoctor.facts.tensorflow_log import MAX_LINES, is_tensorflow_log, parse_tensorflow_log
from tests.helpers.fixtures import fixture_files, read_fixture
from tests.helpers.strategies import any_code_points, fixture_named, line_mutations, non_text_json

TF_FILES = fixture_files("F", "*.txt")


def _fixture(name_part: str) -> str:
    return read_fixture(fixture_named(TF_FILES, name_part))


def test_tf_2_18_cannot_dlopen_some_gpu_libraries() -> None:
    text = _fixture("tf-85311")
    log = parse_tensorflow_log(text)
    assert log.cannot_dlopen is True
    assert log.missing_libraries == []  # the excerpt holds only the summary line
    assert log.cudnn_mismatch is None
    assert len(log.lines) == 1 and log.lines[0].startswith("W0000 00:00:1737317404.258825")
    assert "gpu_device.cc:2344] Cannot dlopen some GPU libraries" in log.lines[0]
    assert is_tensorflow_log(text)


def test_faceswap_old_dlopen_wording_names_the_missing_library() -> None:
    text = _fixture("faceswap-1004")
    log = parse_tensorflow_log(text)
    assert log.missing_libraries == ["libcudart.so.10.0"]
    assert log.cannot_dlopen is False
    assert log.lines == [text.strip()]
    assert is_tensorflow_log(text)


def test_tf_60237_is_a_users_script_output_not_a_tensorflow_log() -> None:
    # "2.12.0 / Tensor Flow Version: 2.12.0 / Keras Version: 2.12.0 / GPU is NOT AVAILABLE" is what the
    # reporter's own print() calls wrote: TensorFlow 2.12 on native Windows logs nothing about GPUs at all
    # (it no longer tries to load CUDA there).  So there is no TensorFlow evidence in it, and the user's
    # "GPU is NOT AVAILABLE" must not be kept as if TensorFlow had said it.
    text = _fixture("tf-60237")
    assert "GPU is NOT AVAILABLE" in text
    assert parse_tensorflow_log(text) == TensorflowLog()
    assert not is_tensorflow_log(text)


@pytest.mark.parametrize("path", TF_FILES, ids=lambda p: p.name)
def test_every_fixture_parses(path: pathlib.Path) -> None:
    log = parse_tensorflow_log(read_fixture(path))
    assert isinstance(log, TensorflowLog)
    assert all(line.strip() == line and line for line in log.lines)


def test_synthetic_tf_2_4_log_with_missing_cudnn_and_a_windows_dll() -> None:
    # SYNTHETIC: lines in the exact wording of TF 2.4 (Linux) and TF 2.5 (Windows) dso_loader.
    text = (
        "2021-03-01 10:00:00.123456: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load "
        "dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or "
        "directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
        "2021-03-01 10:00:00.123456: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully "
        "opened dynamic library libcudart.so.11.0\n"
        "2021-03-01 10:00:00.2: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load "
        "dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found\n"
        "2021-03-01 10:00:00.3: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot dlopen some GPU "
        "libraries. Please make sure the missing libraries mentioned above are installed properly.\n"
        "Skipping registering GPU devices...\n"
        "2021-03-01 10:00:00.4: I tensorflow/core/platform/cpu_feature_guard.cc:142] This TensorFlow binary is "
        "optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions\n"
        "my own print: GPU count 0\n"
    )
    log = parse_tensorflow_log(text)
    assert log.missing_libraries == ["libcudnn.so.8", "cudnn64_8.dll"]
    assert log.cannot_dlopen is True
    assert len(log.lines) == 5  # the CPU-instructions line and the user's print are not GPU lines of TF
    assert not any("CPU instructions" in line or "my own print" in line for line in log.lines)
    assert is_tensorflow_log(text)


def test_synthetic_cudnn_mismatch_and_cuinit_failure() -> None:
    # SYNTHETIC: the wording of TF 2.17's cuda_dnn.cc and TF 2.16's cuda_executor.cc.
    text = (
        "E0000 00:00:1721000000.000000   4242 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source was "
        "compiled with: 9.3.0.  CuDNN library needs to have matching major version and equal or higher minor "
        "version.\n"
        "E0000 00:00:1721000000.100000   4242 cuda_executor.cc:1015] failed call to cuInit: INTERNAL: CUDA error: "
        "Failed call to cuInit: UNKNOWN ERROR (303)\n"
    )
    log = parse_tensorflow_log(text)
    assert log.cudnn_mismatch == ("9.1.0", "9.3.0")
    assert log.cuinit_error == "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)"
    assert log.missing_libraries == [] and log.cannot_dlopen is False


def test_synthetic_no_drivers_and_too_old_gpu() -> None:
    # SYNTHETIC: cudart_stub.cc (TF 2.14+) and gpu_device.cc's minimum-capability message.
    text = (
        "I0000 00:00:1.0  1 cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.\n"
        "2020-01-01 00:00:00.0: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu "
        "device (device: 0, name: GeForce GT 730, pci bus id: 0000:01:00.0, compute capability: 3.5) with Cuda "
        "compute capability 3.5. The minimum required Cuda capability is 3.7.\n"
    )
    log = parse_tensorflow_log(text)
    assert log.no_cuda_drivers is True
    assert log.too_old_gpu == ("3.5", "3.7")


def test_repeated_lines_are_capped_but_still_read() -> None:
    # SYNTHETIC: a retry loop logging the same failure over and over.
    line = (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library "
        "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file"
    )
    last = "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot dlopen some GPU libraries."
    log = parse_tensorflow_log("\n".join([line] * (MAX_LINES + 50) + [last]))
    assert len(log.lines) == MAX_LINES
    assert log.missing_libraries == ["libcudart.so.11.0"]
    assert log.cannot_dlopen is True


@pytest.mark.parametrize(
    "text", ["", "GPU is available", "nvidia-smi: command not found", "Could not load dynamic library"]
)
def test_not_a_tensorflow_log(text: str) -> None:
    assert parse_tensorflow_log(text).lines == []
    assert not is_tensorflow_log(text)


@given(any_code_points())
def test_any_text_gives_a_log(text: str) -> None:
    log = parse_tensorflow_log(text)
    assert isinstance(log, TensorflowLog)
    assert len(log.lines) <= MAX_LINES
    assert all(isinstance(name, str) and name for name in log.missing_libraries)
    assert isinstance(is_tensorflow_log(text), bool)


@given(non_text_json())
def test_any_json_value_is_an_empty_log(value: object) -> None:
    assert parse_tensorflow_log(value) == TensorflowLog()
    assert is_tensorflow_log(value) is False


@pytest.mark.parametrize("path", TF_FILES, ids=lambda p: p.name)
@given(data=st.data())
def test_mutated_real_fixtures_never_raise(path: pathlib.Path, data: st.DataObject) -> None:
    assert isinstance(parse_tensorflow_log(data.draw(line_mutations(read_fixture(path)))), TensorflowLog)
