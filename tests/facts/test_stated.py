"""Versions and GPU names the evidence states, wherever they are written (real outputs, read in place)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.evidence.snapshot import paste_evidence
from gpudoctor.facts.facts import Facts
from tests.helpers.fixtures import fixture_text


def _stated(text: str):  # type: ignore[no-untyped-def]
    return Facts(paste_evidence(text.encode(), "paste")).stated


def test_a_collect_env_report_states_torch_gpu_driver_and_cuda() -> None:
    stated = _stated(fixture_text("E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"))
    assert "2.6.0+cu126" in stated.torch_versions
    assert "12.6" in stated.torch_cuda_versions
    assert any("RTX 5090 D" in name for name in stated.gpu_names)
    assert stated.driver_versions


def test_free_text_states_what_no_parser_reads() -> None:
    # Real lines, each from a public thread: a kernel legacy-branch notice (NixOS/nixos-hardware#1828), an
    # Ultralytics banner (roboflow/notebooks#69), TensorFlow 2.x device properties (tensorflow#45676),
    # a DKMS build path (pop-os/pop#3811) and TensorFlow's cuDNN mismatch line (tensorflow#60913).
    text = "\n".join(
        [
            "Apr 13 16:41:14 nixos kernel: NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed in this system>",
            "    Ultralytics YOLOv8.0.20 🚀 Python-3.9.13 torch-1.13.1+cu117 CUDA:0 (NVIDIA GeForce RTX 2060, 6144MiB)",
            "pciBusID: 0000:83:00.0 name: TITAN V computeCapability: 7.0",
            "Consult /var/lib/dkms/nvidia/580.119.02/build/make.log for more information.",
            "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0.",
        ]
    )
    stated = _stated(text)
    assert {"NVIDIA GeForce GTX 1050", "NVIDIA GeForce RTX 2060", "TITAN V"} <= set(stated.gpu_names)
    assert "1.13.1+cu117" in stated.torch_versions and "11.7" in stated.torch_cuda_versions
    assert "580.119.02" in stated.driver_versions
    assert {"9.1.0", "9.3.0"} <= set(stated.cudnn_versions)


def test_an_issue_template_heading_states_the_tensorflow_version() -> None:
    # The shape of TensorFlow's bug template (tensorflow/tensorflow#60156), the answer under its heading.
    stated = _stated("### Tensorflow Version\n\n2.11.0\n\n### CUDA/cuDNN version\n\n11.6r11.6/8.6\n")
    assert stated.tensorflow_versions == ("2.11.0",)
    assert stated.cuda_runtime_versions == ("11.6",)


@settings(max_examples=60)
@given(
    st.text(
        alphabet=st.sampled_from(list("torch==2.1.0+cu121 NVIDIA GeForce RTX Driver Version: 535.\n|")), max_size=600
    )
)
def test_any_text_states_without_raising(text: str) -> None:
    if not text.strip():
        return
    stated = _stated(text)
    assert all(isinstance(value, str) and value for value in stated.gpu_names)
