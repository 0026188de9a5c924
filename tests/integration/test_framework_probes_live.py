"""The framework probes, run for real: in a venv of real CPU frameworks, and against synthetic broken packages.

The real venv (torch 2.13.0+cpu, tensorflow-cpu, jax) comes from ``scripts/setup-framework-venv.sh``
through ``GPUDOCTOR_FRAMEWORK_PYTHON``.  The synthetic cases put a hand-written ``torch`` (or ``cupy``)
package into a fresh real venv to make the import raise, exit, crash with SIGSEGV or hang: what a broken
CUDA install does to users, reproduced without one.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import signal
import subprocess
import sys

import pytest

from gpudoctor.evidence.framework_probes import probe_argv, probe_env, probe_path, run_probe
from gpudoctor.facts.framework_model import FRAMEWORKS, PROBE_VERSION, probe_file_name

pytestmark = pytest.mark.integration

COMMON_KEYS = {
    "probe",
    "probe_version",
    "python",
    "installed",
    "distribution",
    "nvidia_packages",
    "import_ok",
    "import_error",
    "import_s",
    "log_lines",
    "warnings",
    "loaded_libraries",
}


def _probe(framework: str, python: str, timeout: float = 120.0) -> tuple[dict, object]:
    item = run_probe(framework, python, timeout)
    assert item.name == probe_file_name(framework) and item.kind == "json"
    assert item.error is None, (item.error, item.stderr[-3000:])
    assert item.exit_code == 0
    record = item.json()
    assert isinstance(record, dict), item.text
    assert record["probe"] == framework and record["probe_version"] == PROBE_VERSION
    return record, item


def _venv_prefix(python: str) -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(python)))


# --- real frameworks ---------------------------------------------------------------------------------------------


def test_real_torch_cpu_build(framework_python):
    record, item = _probe("torch", framework_python)
    assert set(record) >= COMMON_KEYS
    assert record["installed"] is True and record["import_ok"] is True and record["import_error"] is None
    assert record["version"] == "2.13.0+cpu"
    assert record["cuda"] is None and record["hip"] is None
    assert record["is_available"] is False and record["device_count"] == 0 and record["devices"] == []
    assert record["arch_list"] == []
    assert record["cuda_init_error"] is None  # a CPU build has no CUDA to fail
    assert record["nccl"] is None and record["cudnn"] is None
    assert record["import_s"] > 0 and item.duration_s >= record["import_s"]
    assert record["distribution"]["name"] == "torch" and record["distribution"]["version"] == "2.13.0+cpu"
    assert record["distribution"]["installer"] == "pip"
    assert record["python"]["executable"] == framework_python
    assert record["python"]["prefix"] == _venv_prefix(framework_python)
    assert record["python"]["virtualenv"] is True
    assert record["module_file"] == os.path.join(
        record["python"]["prefix"],
        "lib",
        "python" + ".".join(record["python"]["version"].split(".")[:2]),
        "site-packages",
        "torch",
        "__init__.py",
    )
    assert record["loaded_libraries"] == []  # a CPU build maps no CUDA library
    assert record["probe_error"] is None and record["probe_errors"] == {}


def test_real_tensorflow_cpu(framework_python):
    record, _ = _probe("tensorflow", framework_python)
    assert record["import_ok"] is True
    assert record["built_with_cuda"] is False
    assert record["gpus_listed"] is True and record["gpus"] == []
    assert record["build_info"]["is_cuda_build"] is False
    assert record["distribution"]["name"] == "tensorflow-cpu"
    assert record["keras_version"]
    # TF_CPP_MIN_LOG_LEVEL=0 took effect and fd 2 was captured: TensorFlow's C++ (absl) log lines are there.
    assert any("absl::InitializeLog" in line or line.startswith(("I0000", "W0000")) for line in record["log_lines"])


def test_real_jax_cpu(framework_python):
    record, _ = _probe("jax", framework_python)
    assert record["import_ok"] is True
    assert record["default_backend"] == "cpu"
    assert record["devices"] and {d["platform"] for d in record["devices"]} == {"cpu"}
    assert record["jaxlib_version"] and record["version"]
    assert record["plugins"] == {}
    assert not any(error.startswith("tpu:") for error in record["backend_errors"])  # noise on every machine


def test_real_venv_without_cupy(framework_python):
    record, _item = _probe("cupy", framework_python)
    assert record["installed"] is False
    assert "import_ok" not in record and "version" not in record  # nothing was imported


def test_probes_in_a_python_without_frameworks():
    # gpudoctor's own dev interpreter has none of them installed.
    for framework in FRAMEWORKS:
        record, _ = _probe(framework, sys.executable)
        assert record["installed"] is False, framework
        assert record["python"]["executable"] == sys.executable


def test_probes_run_concurrently_give_the_same_answers(framework_python):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        items = list(pool.map(lambda f: run_probe(f, framework_python, 180), FRAMEWORKS))
    assert [item.json()["probe"] for item in items] == list(FRAMEWORKS)
    assert all(item.error is None for item in items)


def _working_python(version: str) -> str | None:
    """A real python<version> (pyenv's shims exist for versions that are not selected, and then fail)."""
    import glob
    import shutil

    candidates = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    candidates += [path for path in (shutil.which(f"python{version}"),) if path]
    for candidate in candidates:
        try:
            if subprocess.run([candidate, "-c", "pass"], capture_output=True, timeout=30).returncode == 0:
                return candidate
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def test_probes_run_under_the_oldest_supported_python():
    python = _working_python("3.8")
    if python is None:
        pytest.skip("no working python3.8 here")
    for framework in FRAMEWORKS:
        record, _ = _probe(framework, python)
        assert record["python"]["version"].startswith("3.8.")
        assert record["installed"] is False
        assert record["probe_error"] is None


# --- synthetic broken frameworks in a real venv -------------------------------------------------------------------


def test_import_error_is_evidence(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a torch whose import fails the way a missing CUDA library makes it fail
        raise ImportError("synthetic: libcudnn.so.9: cannot open shared object file: No such file or directory")
    """,
    )
    record, _ = _probe("torch", synthetic_venv.python)
    assert record["installed"] is True and record["import_ok"] is False
    error = record["import_error"]
    assert error["type"] == "ImportError"
    assert error["message"].startswith("synthetic: libcudnn.so.9")
    assert "torch/__init__.py" in error["traceback_tail"]
    assert record["import_s"] >= 0
    assert "version" not in record  # nothing was asked of a module that is not there


def test_system_exit_at_import_is_evidence(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a package that calls sys.exit while being imported
        import sys
        sys.exit("synthetic: exiting at import")
    """,
    )
    record, _ = _probe("torch", synthetic_venv.python)
    assert record["import_ok"] is False and record["import_error"]["type"] == "SystemExit"


def test_segfault_at_import_keeps_exit_code_and_output(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a torch whose import crashes the process, as a broken CUDA library can
        import os, signal
        os.write(2, b"synthetic: loading libcuda\\n")
        print("synthetic: banner on stdout")
        os.kill(os.getpid(), signal.SIGSEGV)
    """,
    )
    item = run_probe("torch", synthetic_venv.python, 60)
    assert item.exit_code == -signal.SIGSEGV
    assert item.error.startswith("the torch probe crashed (signal 11, SIGSEGV)")
    assert item.json() is None
    # What the package wrote before dying survives (the probe's capture file), and so does the crash traceback.
    assert "synthetic: loading libcuda" in item.stderr and "synthetic: banner on stdout" in item.stderr
    assert "Segmentation fault" in item.stderr and "torch/__init__.py" in item.stderr


def test_hanging_import_times_out(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a torch whose import hangs (a GPU that fell off the bus can do this)
        import os, time
        os.write(2, b"synthetic: waiting for the device\\n")
        time.sleep(600)
    """,
    )
    item = run_probe("torch", synthetic_venv.python, 3)
    assert item.timed_out is True
    assert "did not finish within 3 s" in item.error
    assert item.duration_s < 30
    assert "synthetic: waiting for the device" in item.stderr


def test_output_at_import_does_not_spoil_the_json(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a torch that prints, warns and logs while imported
        import logging, os, sys, warnings
        print("synthetic banner")
        os.write(1, b"synthetic fd1 write\\n")
        sys.stderr.write("synthetic stderr write\\n")
        warnings.warn("synthetic warning", UserWarning)
        logging.getLogger("torch.synthetic").warning("synthetic log record")
        __version__ = "0.0.0+synthetic"
    """,
    )
    record, item = _probe("torch", synthetic_venv.python)
    assert json.loads(item.text) == record  # stdout holds the JSON document and nothing else
    assert record["import_ok"] is True and record["version"] == "0.0.0+synthetic"
    lines = record["log_lines"]
    assert "synthetic banner" in lines and "synthetic fd1 write" in lines and "synthetic stderr write" in lines
    assert "WARNING:torch.synthetic:synthetic log record" in lines
    assert record["warnings"] == ["UserWarning: synthetic warning"]
    # A package with none of torch's API: each question failed alone, recorded, and the probe went on.
    assert record["probe_error"] is None
    assert record["is_available"] is None and "is_available" in record["probe_errors"]


def test_a_leftover_directory_imports_as_a_namespace_package(synthetic_venv):
    # synthetic: what `pip uninstall` leaves behind when other files sat in the package directory
    leftover = synthetic_venv.site_packages / "torch" / "lib"
    leftover.mkdir(parents=True)
    (leftover / "synthetic-leftover.txt").write_text("synthetic")
    record, _ = _probe("torch", synthetic_venv.python)
    assert record["installed"] is True and record["import_ok"] is True
    assert record["module_file"] is None and record["distribution"] is None
    assert record["version"] is None and "version" in record["probe_errors"]
    assert record["probe_error"] is None


def test_probes_directory_is_not_on_sys_path_at_import(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: reports the sys.path it was imported with as its version
        import sys
        __version__ = repr(sys.path)
    """,
    )
    record, _ = _probe("torch", synthetic_venv.python)
    seen = eval(record["version"])
    probes_dir = os.path.dirname(probe_path("torch"))
    assert probes_dir not in [os.path.abspath(entry or ".") for entry in seen]
    assert str(synthetic_venv.site_packages) in seen


def test_distribution_origin_and_nvidia_wheels(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: an importable torch stand-in
        __version__ = "2.6.0+cu126"
    """,
    )
    url = {
        "url": "https://download.pytorch.org/whl/cu126/torch-2.6.0%2Bcu126-cp311-cp311-linux_x86_64.whl",
        "archive_info": {},
    }
    synthetic_venv.add_dist_info(
        "torch-2.6.0+cu126.dist-info", "torch", "2.6.0+cu126", {"INSTALLER": "uv\n", "direct_url.json": json.dumps(url)}
    )
    synthetic_venv.add_dist_info("nvidia_cudnn_cu12-9.5.1.17.dist-info", "nvidia-cudnn-cu12", "9.5.1.17")
    synthetic_venv.add_dist_info("nvidia_cuda_runtime_cu12-12.6.77.dist-info", "nvidia-cuda-runtime-cu12", "12.6.77")
    synthetic_venv.add_conda_record(
        {
            "name": "pytorch",
            "version": "2.6.0",
            "build": "cuda126_py311_synthetic",
            "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        }
    )
    record, _ = _probe("torch", synthetic_venv.python)
    distribution = record["distribution"]
    assert distribution["name"] == "torch" and distribution["version"] == "2.6.0+cu126"
    assert distribution["installer"] == "uv"
    assert distribution["direct_url"] == url
    assert distribution["conda_channel"] == "https://conda.anaconda.org/conda-forge/linux-64"
    assert distribution["conda_build"] == "cuda126_py311_synthetic"
    assert record["nvidia_packages"] == {"nvidia-cudnn-cu12": "9.5.1.17", "nvidia-cuda-runtime-cu12": "12.6.77"}
    assert record["python"]["conda_prefix"] == str(synthetic_venv.root)


def test_two_tensorflow_wheels_are_both_named(synthetic_venv):
    synthetic_venv.add_package(
        "tensorflow",
        """
        # synthetic: a tensorflow stand-in that imports and has no API
        __version__ = "2.18.0"
    """,
    )
    synthetic_venv.add_dist_info("tensorflow-2.18.0.dist-info", "tensorflow", "2.18.0")
    synthetic_venv.add_dist_info("tensorflow_cpu-2.17.0.dist-info", "tensorflow_cpu", "2.17.0")
    record, _ = _probe("tensorflow", synthetic_venv.python)
    assert record["distribution"]["name"] == "tensorflow"
    assert record["distribution"]["also_installed"] == {"tensorflow-cpu": "2.17.0"}
    assert record["gpus_listed"] is False and record["probe_error"] is None


@pytest.mark.skipif(ctypes.util.find_library("cuda") is None, reason="needs the real libcuda (NVIDIA user space)")
def test_loaded_cuda_libraries_are_listed(synthetic_venv):
    synthetic_venv.add_package(
        "cupy",
        """
        # synthetic: a cupy stand-in that loads the real libcuda the way the real one does
        import ctypes
        ctypes.CDLL("libcuda.so.1")
        __version__ = "13.0.0+synthetic"
    """,
    )
    record, _ = _probe("cupy", synthetic_venv.python)
    names = [os.path.basename(path) for path in record["loaded_libraries"]]
    assert any(name.startswith("libcuda.so") for name in names), record["loaded_libraries"]
    assert not any(name.startswith(("libc.so", "libpython")) for name in names)
    # No cupy.cuda API: the first failed question is the probe's "error".
    assert record["error"] and record["device_count"] is None


def test_probe_of_a_missing_interpreter(tmp_path):
    item = run_probe("torch", str(tmp_path / "no-such-python"), 10)
    assert item.exit_code is None and item.text is None
    assert item.error.startswith("the torch probe could not run")


def test_probe_argv_and_env_are_what_runs():
    env = probe_env("tensorflow", {"LD_LIBRARY_PATH": "/opt/cuda/lib64", "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert env["TF_CPP_MIN_LOG_LEVEL"] == "0" and env["LD_LIBRARY_PATH"] == "/opt/cuda/lib64"
    result = subprocess.run(
        probe_argv("tensorflow", sys.executable), env=env, capture_output=True, text=True, timeout=60
    )
    assert json.loads(result.stdout)["installed"] is False


def test_c_level_printf_is_captured_not_printed(synthetic_venv):
    synthetic_venv.add_package(
        "torch",
        """
        # synthetic: a native library that printf()s into C's buffered stdout while torch imports
        import ctypes
        ctypes.CDLL(None).printf(b"synthetic printf from C\\n")
        __version__ = "0.0.0+synthetic"
    """,
    )
    # Without PYTHONUNBUFFERED (set here, it also unbuffers C's stdout) as on most users' machines.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    item = run_probe("torch", synthetic_venv.python, 60, base_env=env)
    record = json.loads(item.text)
    assert record["import_ok"] is True
    assert "synthetic printf from C" in record["log_lines"]
