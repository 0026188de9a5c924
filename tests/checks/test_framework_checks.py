"""Framework checks per scenario: the verdicts of issue 3, each with the command that fixes it.

The GPU side of each scenario is a real captured nvidia-smi output from ``../shared/fixtures``.
The framework side is either a real probe record captured on this CPU machine
(``tests/recorded/cpu-container-debian``) or a SYNTHETIC record (``tests/synthetic/
framework_probe_json.py``) for what only a GPU machine could print.  Putting the two together
is itself a composed scenario ("this torch on that machine"), which is what these tests judge.
"""

from __future__ import annotations

import copy
import json
import pathlib

import pytest

from gpudoctor.api import Severity
from gpudoctor_checks import frameworks, jax_cupy, pytorch, tensorflow
from tests.helpers.fixtures import real_fixtures_dir
from tests.synthetic import framework_probe_json as synthetic
from tests.synthetic.evidence import NO_GPU_SCAN, make_evidence, run

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian"


def _recorded(framework: str) -> dict:
    return json.loads((RECORDED / f"framework-{framework}.json").read_text())


def _smi(name: str) -> str:
    path = real_fixtures_dir() / "C" / name
    if not path.is_file():
        pytest.skip(f"real fixture {path} not found")
    return path.read_text(encoding="utf-8", errors="replace")


def _xml(name: str) -> str:
    path = real_fixtures_dir() / "A" / name
    if not path.is_file():
        pytest.skip(f"real fixture {path} not found")
    return path.read_text(encoding="utf-8", errors="replace")


RTX4090_X8 = "gls-8x-rtx4090-550.127.05.txt"  # driver 550.127.05, CUDA 12.4
RTX5090 = "gls-rtx5090-570.124.06.txt"  # driver 570.124.06, CUDA 12.8
H100_X8 = "gls-8x-h100-sxm-565.57.01.txt"


def _install(outcome) -> str:
    commands = [c for f in outcome.findings if f.fix for c in f.fix.commands if " install " in c]
    assert commands, outcome
    return commands[-1]


# ----------------------------------------------------------------------------- 1. CPU-only wheel on a GPU box


def test_cpu_torch_on_an_rtx4090_box_gets_a_cuda_wheel_for_this_driver():
    record = _recorded("torch")
    evidence = make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_torch_json=record)
    outcome = run(pytorch.torch_build_matches, evidence)
    assert outcome.status.value == "problem"
    assert "2.13.0+cpu" in outcome.summary and "RTX 4090" in outcome.summary
    commands = outcome.findings[0].fix.commands
    # Into the probed interpreter, not whatever pip is first on PATH; the +cpu wheel must go first.
    assert commands[0] == f"{record['python']['executable']} -m pip uninstall -y torch torchvision torchaudio"
    # The user's release (2.13) is kept; driver 550 runs its CUDA 12.x wheels (>= 525.60.13) but no CUDA 13
    # wheel (>= 580), so the newest CUDA 12 variant of 2.13.
    assert commands[1].endswith("--index-url https://download.pytorch.org/whl/cu129")
    assert '"torch==2.13.*"' in commands[1]


def test_cpu_torch_without_gpu_is_fine():
    # The PCI scan (SYNTHETIC, no NVIDIA function on the bus) is what establishes "no GPU".
    evidence = make_evidence(framework_torch_json=_recorded("torch"), pci_devices_json=NO_GPU_SCAN)
    outcome = run(pytorch.torch_build_matches, evidence)
    assert outcome.status.value == "ok"
    assert "no NVIDIA GPU" in outcome.summary


def test_cpu_torch_where_nothing_says_whether_there_is_a_gpu_is_not_called_fine():
    # Unknown is not fine: a CPU-only build where a GPU may be is a warning that says what settles it.
    outcome = run(pytorch.torch_build_matches, make_evidence(framework_torch_json=_recorded("torch")))
    assert outcome.status.value == "warning"
    assert outcome.findings[0].cause == "torch-cpu-build"
    assert "not known" in outcome.summary and "lspci" in outcome.summary


def test_tensorflow_cpu_on_a_gpu_box_gets_and_cuda():
    evidence = make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_tensorflow_json=_recorded("tensorflow"))
    outcome = run(tensorflow.tf_gpu, evidence)
    assert outcome.status.value == "problem"
    commands = outcome.findings[0].fix.commands
    assert commands[0].endswith("-m pip uninstall -y tensorflow-cpu")
    assert commands[1].endswith('install "tensorflow[and-cuda]==2.21.0"')


def test_plain_jax_on_a_gpu_box_falls_back_to_cpu():
    evidence = make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_jax_json=_recorded("jax"))
    outcome = run(jax_cupy.jax_on_gpu, evidence)
    assert outcome.status.value == "problem"
    assert "no CUDA plugin" in outcome.summary
    # Driver 550 is below the CUDA 13 floor; the recorded jax 0.10.2 ships jax[cuda12], so it is kept.
    assert _install(outcome).endswith('install "jax[cuda12]==0.10.2"')


def test_synthetic_jax_older_than_the_table_gets_the_newest_release_for_its_python():
    # Synthetic: the recorded probe with its version changed to a pre-plugin release the table does not list.
    jax = copy.deepcopy(_recorded("jax"))
    jax["version"] = "0.4.20"
    outcome = run(jax_cupy.jax_on_gpu, make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_jax_json=jax))
    assert _install(outcome).endswith('install "jax[cuda12]==0.10.2"')  # the newest for Python 3.11


# ----------------------------------------------------------------------------- 2. driver older than the wheel


def test_cu126_wheel_on_a_driver_510_p100():
    torch = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_INIT_FAILS)
    evidence = make_evidence(
        nvidia_smi_q_x_xml=_xml("netdata-tesla-p100-pcie-510.47.03-v11.txt"), framework_torch_json=torch
    )
    outcome = run(pytorch.torch_driver, evidence)
    assert outcome.status.value == "problem"
    assert "needs driver ≥ 525.60.13" in outcome.summary and "510.47.03" in outcome.summary
    assert "too old (found version 11040)" in outcome.summary  # torch's own words, verbatim
    # A CUDA 11.8 wheel runs on 510 (>= 450.80.02) and still has sm_60 for the P100.
    assert "whl/cu118" in _install(outcome)
    init = run(pytorch.torch_cuda_init, evidence)
    assert init.status.value == "problem" and "TORCH003" in init.summary


# ----------------------------------------------------------------------------- 3. architecture not in the wheel


def test_cu126_wheel_on_an_rtx5090():
    evidence = make_evidence(
        nvidia_smi_txt=_smi(RTX5090), framework_torch_json=synthetic.SYNTHETIC_TORCH_SM120_UNSUPPORTED
    )
    outcome = run(pytorch.torch_arch, evidence)
    assert outcome.status.value == "problem"
    assert "sm_120" in outcome.summary
    install = _install(outcome)
    assert any(f"whl/{v}" in install for v in ("cu128", "cu129")), install


def test_cu130_wheel_on_a_pascal_gpu_needs_cu126():
    torch = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)  # SYNTHETIC, made into a cu130 build on a P100
    torch.update(
        version="2.13.0+cu130",
        cuda="13.0",
        arch_list=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
        devices=[{"index": 0, "name": "Tesla P100-PCIE-16GB", "capability": [6, 0]}],
    )
    evidence = make_evidence(
        nvidia_smi_q_x_xml=_xml("netdata-tesla-p100-pcie-510.47.03-v11.txt"), framework_torch_json=torch
    )
    outcome = run(pytorch.torch_arch, evidence)
    assert outcome.status.value == "problem"
    assert "sm_60" in outcome.summary
    assert "whl/cu1" in _install(outcome) and "cu13" not in _install(outcome)


def test_ada_runs_on_sm86_cubins():
    evidence = make_evidence(nvidia_smi_txt=_smi(RTX4090_X8), framework_torch_json=synthetic.SYNTHETIC_TORCH_CUDA_OK)
    outcome = run(pytorch.torch_arch, evidence)
    assert outcome.status.value == "ok"


# ----------------------------------------------------------------------------- 4. CUDA initialisation


@pytest.mark.parametrize(
    "error,needle",
    [
        (
            "CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus INTERNAL ASSERT "
            "FAILED",
            "see the error text",
        ),
        (
            "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
            "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
            "fabric manager",
        ),
        (
            "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable "
            "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.",
            "nvidia_uvm",
        ),
        (
            "Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non "
            "supported HW",
            "forward-compatibility",
        ),
    ],
)
def test_cuda_init_errors_are_named(error, needle):
    torch = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_INIT_FAILS)  # SYNTHETIC, with each error text
    torch["cuda_init_error"] = error
    evidence = make_evidence(nvidia_smi_txt=_smi(H100_X8), framework_torch_json=torch)
    outcome = run(pytorch.torch_cuda_init, evidence)
    assert outcome.status.value == "problem"
    assert needle in outcome.summary


# ----------------------------------------------------------------------------- 5. shadowed libraries


def test_nvjitlink_undefined_symbol_import_error():
    evidence = make_evidence(
        framework_torch_json=synthetic.SYNTHETIC_TORCH_IMPORT_ERROR,
        env_json={"variables": {"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64"}, "present": ["LD_LIBRARY_PATH"]},
    )
    imports = run(pytorch.torch_imports, evidence)
    assert imports.status.value == "problem"
    assert "LD_LIBRARY_PATH" in " ".join(imports.findings[0].fix.commands)
    shadow = run(frameworks.library_shadowing, evidence)
    assert shadow.status.value == "problem"
    assert "__nvJitLinkComplete_12_4" in shadow.summary and "/usr/local/cuda-12.1/lib64" in shadow.summary


def test_system_library_loaded_instead_of_pip_copy():
    torch = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)  # SYNTHETIC: nvJitLink loaded from a system CUDA
    torch["loaded_libraries"] = [p for p in torch["loaded_libraries"] if "nvjitlink" not in p]
    torch["loaded_libraries"].append("/usr/local/cuda-12.1/lib64/libnvJitLink.so.12.1.105")
    evidence = make_evidence(framework_torch_json=torch)
    outcome = run(frameworks.library_shadowing, evidence)
    assert outcome.status.value == "warning"
    assert "/usr/local/cuda-12.1/lib64/libnvJitLink.so.12.1.105" in outcome.summary


def test_pip_libraries_loaded_from_pip_are_fine():
    evidence = make_evidence(framework_torch_json=synthetic.SYNTHETIC_TORCH_CUDA_OK)
    outcome = run(frameworks.library_shadowing, evidence)
    assert outcome.status.value == "ok"


# ----------------------------------------------------------------------------- 6. fewer GPUs than NVML


def test_torch_sees_one_of_eight_h100():
    evidence = make_evidence(nvidia_smi_txt=_smi(H100_X8), framework_torch_json=synthetic.SYNTHETIC_TORCH_CUDA_OK)
    outcome = run(frameworks.framework_visibility, evidence)
    assert outcome.status.value == "warning"
    assert "PyTorch sees 1 of the 8 GPUs" in outcome.findings[0].message


def test_cuda_visible_devices_explains_the_count():
    evidence = make_evidence(
        nvidia_smi_txt=_smi(H100_X8),
        framework_torch_json=synthetic.SYNTHETIC_TORCH_CUDA_OK,
        env_json={"variables": {"CUDA_VISIBLE_DEVICES": "3"}, "present": ["CUDA_VISIBLE_DEVICES"]},
    )
    outcome = run(frameworks.framework_visibility, evidence)
    assert outcome.status.value == "ok"
    assert "CUDA_VISIBLE_DEVICES='3'" in outcome.summary


def test_mig_gpu_shows_one_instance_per_process():
    evidence = make_evidence(
        nvidia_smi_txt=_smi("gpuexporter-h100-mig-enabled-590.48.01-idle.txt"),
        framework_torch_json=synthetic.SYNTHETIC_TORCH_CUDA_OK,
    )
    outcome = run(frameworks.framework_visibility, evidence)
    assert outcome.status.value == "ok"
    assert "MIG" in outcome.summary


# ----------------------------------------------------------------------------- 7. Python and platform limits


def test_tensorflow_on_native_windows_goes_to_wsl2():
    tf = copy.deepcopy(synthetic.SYNTHETIC_TENSORFLOW_GPU_OK)  # SYNTHETIC: TF 2.12 on native Windows
    tf["python"].update(platform="win32", machine="AMD64", executable="C:\\Python310\\python.exe")
    tf.update(version="2.12.0", built_with_cuda=False, gpus=[], build_info={"is_cuda_build": False})
    evidence = make_evidence(
        nvidia_smi_txt=_smi("gpuexporter-windows-wddm-rtx2080super-610.62-idle.txt"), framework_tensorflow_json=tf
    )
    outcome = run(tensorflow.tf_gpu, evidence)
    assert outcome.status.value == "problem"
    assert "2.10 was the last release" in outcome.summary
    assert any(c.startswith("wsl") for c in outcome.findings[0].fix.commands)


def test_tensorflow_cannot_dlopen_with_pip_libraries_installed():
    evidence = make_evidence(
        nvidia_smi_txt=_smi(RTX4090_X8), framework_tensorflow_json=synthetic.SYNTHETIC_TENSORFLOW_CANNOT_DLOPEN
    )
    outcome = run(tensorflow.tf_gpu, evidence)
    assert outcome.status.value == "problem"
    command = outcome.findings[0].fix.commands[0]
    assert command.startswith("export LD_LIBRARY_PATH=$(/home/ada/venv/bin/python -c")


def test_cupy_wheel_newer_than_driver():
    evidence = make_evidence(
        nvidia_smi_q_x_xml=_xml("netdata-tesla-p100-pcie-510.47.03-v11.txt"),
        framework_cupy_json=synthetic.SYNTHETIC_CUPY_NO_DRIVER,
    )
    outcome = run(jax_cupy.cupy_works, evidence)
    assert outcome.status.value == "problem"
    assert "cudaErrorInsufficientDriver" in outcome.summary
    assert _install(outcome).endswith("install cupy-cuda11x")


def test_probe_that_crashed_is_a_problem_with_its_last_words():
    from gpudoctor.evidence.model import Evidence, EvidenceItem

    evidence = Evidence(origin={"kind": "snapshot"})
    evidence.add(
        EvidenceItem(
            name="framework-torch.json",
            kind="json",
            text="",
            exit_code=-11,
            stderr="Fatal Python error: Segmentation fault\n  File torch/__init__.py, line 1",
            error="the torch probe crashed (signal 11, SIGSEGV)",
        )
    )  # SYNTHETIC
    outcome = run(pytorch.torch_imports, evidence)
    assert outcome.status.value == "problem"
    assert "crashed" in outcome.summary and "SIGSEGV" in outcome.summary
    assert outcome.findings[0].severity is Severity.PROBLEM
