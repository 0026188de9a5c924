"""FW005: frameworks sharing one Python agree on the pip nvidia-* wheels their builds pin.

The probe records here are SYNTHETIC (``tests/synthetic/framework_probe_json.py``, changed per test): this CPU
machine cannot install CUDA wheels.  The pins they are judged against are the real ones in
``gpudoctor/kb/data/pip_pins.json`` (read from PyPI's wheel metadata), and the versions installed in each
synthetic environment are the ones a real pip run would leave: the pins of the framework installed last.
One test runs the real probes against the real CPU framework venv (``GPUDOCTOR_FRAMEWORK_PYTHON``).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.kb.pip_pins import agree, pinned_build
from gpudoctor.results import Status
from gpudoctor_checks import frameworks_agree
from tests.helpers.strategies import json_like, mutated_json
from tests.synthetic import framework_probe_json as synthetic
from tests.synthetic.evidence import make_evidence, run

TORCH_210 = pinned_build("torch", "2.10", "cu128")
TF_219 = pinned_build("tensorflow", "2.19.0", "and-cuda")
TF_220 = pinned_build("tensorflow", "2.20.0", "and-cuda")
PIP = "/home/ada/venv/bin/python -m pip"


def _pins(*builds: Any) -> dict[str, str]:
    """What pip leaves installed when the builds are installed in this order: the last one's pins win.
    An exact pin gives its version; a range gives the version the build before it installed, else its floor."""
    installed: dict[str, str] = {}
    for build in builds:
        for name, spec in build.requires:
            if spec.startswith("=="):
                installed[name] = spec[2:]
            elif name not in installed:
                installed[name] = spec.split(">=", 1)[1].split(",", 1)[0] if ">=" in spec else "1.0"
    return installed


def _torch(version: str = "2.10.0+cu128", cuda: str | None = "12.8", **changes: Any) -> dict[str, Any]:
    """SYNTHETIC: the synthetic torch record made into another build."""
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record.update(version=version, cuda=cuda, **changes)
    record["distribution"]["version"] = version
    return record


def _tensorflow(version: str = "2.19.0", **changes: Any) -> dict[str, Any]:
    """SYNTHETIC: the synthetic tensorflow[and-cuda] record at another release."""
    record = copy.deepcopy(synthetic.SYNTHETIC_TENSORFLOW_GPU_OK)
    record.update(version=version, **changes)
    record["distribution"]["version"] = version
    return record


def _check(packages: dict[str, str], **records: dict[str, Any]):
    """Run FW005 over the records, each carrying the same environment's nvidia-* wheels (one Python)."""
    sources = {}
    for name, record in records.items():
        record = copy.deepcopy(record)
        record["nvidia_packages"] = dict(packages)
        sources[f"framework_{name}_json"] = record
    return run(frameworks_agree.frameworks_agree, make_evidence(**sources))


def test_synthetic_tensorflow_installed_after_torch_swaps_cudnn_under_it():
    packages = _pins(TORCH_210, TF_219)
    # The probe writes normalised names; an un-normalised one must still be matched.
    packages["nvidia_cudnn_cu12"] = packages.pop("nvidia-cudnn-cu12")
    outcome = _check(packages, torch=_torch(), tensorflow=_tensorflow())
    assert outcome.status is Status.PROBLEM
    messages = [f.message for f in outcome.findings]
    assert (
        "torch 2.10.0+cu128 needs nvidia-cudnn-cu12==9.10.2.21; 9.3.0.75 is installed, which tensorflow 2.19.0 pins"
        in messages
    )
    assert (
        "torch 2.10.0+cu128 needs nvidia-nccl-cu12==2.27.5; 2.23.4 is installed, which tensorflow 2.19.0 pins"
        in messages
    )
    # TensorFlow's own pins are what is installed: every finding is about torch.
    assert all(m.startswith("torch 2.10.0+cu128 needs ") for m in messages)
    assert outcome.summary.startswith(messages[0]) and "more unmet pin" in outcome.summary
    fix = outcome.findings[0].fix
    assert fix is not None and "own venv" in fix.summary
    assert fix.commands[0] == "gpudoctor dockerfile --framework torch,tensorflow"
    assert fix.commands[1] == (
        f'{PIP} install --force-reinstall "torch==2.10.0+cu128" --index-url https://download.pytorch.org/whl/cu128'
    )
    assert set(outcome.findings[0].evidence) == {"framework-torch.json", "framework-tensorflow.json"}
    cudnn = outcome.data["compared"][0]["requirements"]["nvidia-cudnn-cu12"]
    assert cudnn == {"required": "==9.10.2.21", "installed": "9.3.0.75", "satisfied": False}


def test_synthetic_torch_installed_after_tensorflow_breaks_tensorflow_pins():
    outcome = _check(_pins(TF_219, TORCH_210), torch=_torch(), tensorflow=_tensorflow())
    assert outcome.status is Status.PROBLEM
    messages = [f.message for f in outcome.findings]
    assert (
        "tensorflow 2.19.0 needs nvidia-cudnn-cu12==9.3.0.75; 9.10.2.21 is installed, which torch 2.10.0+cu128 pins"
        in messages
    )
    tf_fix = next(f.fix for f in outcome.findings if f.message.startswith("tensorflow"))
    assert f'{PIP} install --force-reinstall "tensorflow[and-cuda]==2.19.0"' in tf_fix.commands


def test_synthetic_agreeing_builds_are_ok_and_listed():
    assert agree([TORCH_210, TF_220])[0]  # the KB itself says these two can share one Python
    outcome = _check(_pins(TORCH_210, TF_220), torch=_torch(), tensorflow=_tensorflow("2.20.0"))
    assert outcome.status is Status.OK, outcome.summary
    assert outcome.summary.startswith("torch 2.10.0+cu128, tensorflow 2.20.0: ")
    assert "27 pinned nvidia-* wheels installed as required" in outcome.summary
    assert [c["pins_of"] for c in outcome.data["compared"]] == [TORCH_210.label, TF_220.label]


def test_synthetic_pypi_torch_without_a_label_uses_pypi_pins_when_the_cuda_major_matches():
    outcome = _check(_pins(TF_219), torch=_torch("2.10.0"), tensorflow=_tensorflow())
    assert outcome.status is Status.PROBLEM
    # PyPI's torch: the reinstall command has no PyTorch index.
    assert outcome.findings[0].fix.commands[1] == f'{PIP} install --force-reinstall "torch==2.10.0"'


def test_synthetic_torch_whose_cuda_major_differs_from_the_pypi_pins_is_not_checked():
    # The KB has torch 2.13.0's PyPI build (cu130, -cu13 packages) only: a +cu126 or unlabeled CUDA 12.6 build
    # has other pins, and comparing it with them would be a false alarm.
    for version in ("2.13.0+cu126", "2.13.0"):
        outcome = _check(synthetic.SYNTHETIC_TORCH_CUDA_OK["nvidia_packages"], torch=_torch(version, "12.6"))
        assert outcome.status is Status.NOT_APPLICABLE, version
        assert "2.13.0" in outcome.summary and "cu130" in outcome.summary


def test_synthetic_torch_version_without_pins_in_the_kb_is_not_applicable():
    outcome = _check(synthetic.SYNTHETIC_TORCH_CUDA_OK["nvidia_packages"], torch=synthetic.SYNTHETIC_TORCH_CUDA_OK)
    assert outcome.status is Status.NOT_APPLICABLE
    assert "the knowledge base has no pins for torch 2.6.0" in outcome.summary


def test_synthetic_unchecked_framework_is_named_next_to_an_ok_one():
    # torch 2.6.0 has no pins in the KB; tensorflow 2.19.0's are all installed.
    outcome = _check(_pins(TF_219), torch=synthetic.SYNTHETIC_TORCH_CUDA_OK, tensorflow=_tensorflow())
    assert outcome.status is Status.OK
    assert "not checked: torch 2.6.0+cu126: the knowledge base has no pins for torch 2.6.0" in outcome.summary
    assert outcome.data["not_checked"] == {"torch 2.6.0+cu126": "the knowledge base has no pins for torch 2.6.0"}


def test_synthetic_torch_that_fails_to_import_is_still_compared():
    # The failed import is the symptom: the distribution's version names the build.
    torch = _torch(import_ok=False, import_error={"type": "ImportError", "message": "undefined symbol: cudnnX"})
    for key in ("version", "cuda"):
        torch.pop(key)
    outcome = _check(_pins(TORCH_210, TF_219), torch=torch, tensorflow=_tensorflow())
    assert outcome.status is Status.PROBLEM
    assert outcome.findings[0].message.startswith("torch 2.10.0+cu128 needs ")


def test_synthetic_missing_pinned_wheel_is_a_note_not_a_clash():
    # A wheel the pins name but nobody installed is no clash: the framework loads the system's copy (the recorded
    # H100 VM's JAX ran on the GPU without nvidia-cuda-nvcc / nvidia-nvvm).  Only a version the pin rejects is one.
    packages = _pins(TORCH_210)
    del packages["nvidia-nccl-cu12"]
    outcome = _check(packages, torch=_torch())
    assert outcome.status is Status.OK
    notes = [f.message for f in outcome.findings]
    assert len(notes) == 1 and "nvidia-nccl-cu12, not installed in this Python" in notes[0]


def test_synthetic_tensorflow_without_its_cuda_extra_pins_nothing():
    # Plain `pip install tensorflow` next to torch: every nvidia-* wheel is one torch pins.
    outcome = _check(_pins(TORCH_210), torch=_torch(), tensorflow=_tensorflow())
    assert outcome.status is Status.OK
    assert "tensorflow 2.19.0: installed without the [and-cuda] extra" in outcome.summary


def test_synthetic_no_nvidia_wheels_recorded_is_not_applicable():
    outcome = _check({}, torch=_torch())
    assert outcome.status is Status.NOT_APPLICABLE
    assert "no pip nvidia-* wheel" in outcome.summary


def test_synthetic_cpu_builds_are_not_applicable_with_the_reason():
    tf = _tensorflow("2.21.0", built_with_cuda=False)
    tf["distribution"]["name"] = "tensorflow-cpu"
    outcome = _check({}, torch=_torch("2.13.0+cpu", None), tensorflow=tf)
    assert outcome.status is Status.NOT_APPLICABLE
    assert outcome.summary.count("a CPU build pins no CUDA libraries") == 2


def test_nothing_probed_is_not_applicable():
    outcome = run(frameworks_agree.frameworks_agree, make_evidence())
    assert outcome.status is Status.NOT_APPLICABLE


def test_synthetic_hostile_version_and_path_never_reach_a_command_unquoted():
    # SYNTHETIC: a version string with shell syntax is not a build the KB knows, so it is not compared at all.
    hostile = "2.10.0+cu128 $(touch /tmp/x)"
    outcome = _check(_pins(TF_219), torch=_torch(hostile), tensorflow=_tensorflow())
    assert outcome.status is Status.OK and "+cu128 $(touch /tmp/x): the knowledge base has the pins" in outcome.summary
    # A hostile interpreter path reaches the pip command only shell-quoted.
    torch = _torch()
    torch["python"]["executable"] = "/home/ada/my venv/$(touch x)/bin/python"
    outcome = _check(_pins(TF_219), torch=torch, tensorflow=_tensorflow())
    reinstall = outcome.findings[0].fix.commands[1]
    assert reinstall.startswith("'/home/ada/my venv/$(touch x)/bin/python' -m pip install --force-reinstall ")


def test_synthetic_jax_is_compared_by_its_cuda_plugin():
    jax = copy.deepcopy(synthetic.SYNTHETIC_JAX_GPU_OK)  # SYNTHETIC: made into jax[cuda12] 0.12.0
    jax.update(version="0.12.0", jaxlib_version="0.12.0", plugins={"jax-cuda12-plugin": "0.12.0"})
    packages = {**_pins(TORCH_210), "nvidia-cuda-nvcc-cu12": "12.8.93"}  # nvcc: a wheel only jax's extra pins
    agreeing = _check(packages, torch=_torch(), jax=jax)
    assert agreeing.status is Status.OK
    assert agreeing.summary.startswith("torch 2.10.0+cu128, jax 0.12.0 (cuda12): ")
    clashing = _check(_pins(TF_219), tensorflow=_tensorflow(), jax=jax)
    assert clashing.status is Status.PROBLEM
    assert clashing.summary.startswith(
        "jax 0.12.0 (cuda12) needs nvidia-cudnn-cu12<10.0,>=9.10.2.21; 9.3.0.75 is installed, which tensorflow "
        "2.19.0 pins"
    )
    assert clashing.findings[0].fix.commands[0] == "gpudoctor dockerfile --framework tensorflow,jax"
    assert clashing.findings[0].fix.commands[1].endswith('install --force-reinstall "jax[cuda12]==0.12.0"')


@given(data=st.data(), which=st.sampled_from(["torch", "tensorflow", "jax"]))
def test_mutated_synthetic_records_never_break_the_check(data: st.DataObject, which: str) -> None:
    records = {
        "torch": _torch(nvidia_packages=_pins(TORCH_210, TF_219)),
        "tensorflow": _tensorflow(nvidia_packages=_pins(TORCH_210, TF_219)),
        "jax": copy.deepcopy(synthetic.SYNTHETIC_JAX_GPU_OK),
    }
    records[which] = data.draw(mutated_json(records[which]))
    evidence = make_evidence(**{f"framework_{name}_json": record for name, record in records.items()})
    outcome = run(frameworks_agree.frameworks_agree, evidence)
    assert isinstance(outcome.summary, str) and outcome.summary


@given(record=json_like())
def test_any_json_as_a_probe_record_never_breaks_the_check(record: object) -> None:
    outcome = run(frameworks_agree.frameworks_agree, make_evidence(framework_torch_json=json.dumps(record)))
    assert isinstance(outcome.summary, str)


@pytest.mark.integration
def test_real_cpu_framework_venv_is_not_a_false_alarm(framework_python: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "check", "--python", framework_python, "--frameworks", "torch,tensorflow"]
        + ["--select", "FW005", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stdout)
    result = next(r for r in report["results"] if r["code"] == "FW005")
    assert result["status"] == "not_applicable", result
    # CPU torch and tensorflow-cpu pin no CUDA libraries: said for each, not a silent skip.
    assert result["summary"].count("a CPU build pins no CUDA libraries") == 2, result["summary"]
    assert "torch 2.13.0+cpu" in result["summary"] and "tensorflow-cpu 2.21.0" in result["summary"]
    assert result["data"]["nvidia_packages"] == {}
