"""The machine block of the Markdown report and of the verbose terminal header speaks in words: human labels,
no raw summary keys, no JSON ``null``, no JSON objects (issue 17: "**wsl:** null", "facts_seen: {...}")."""

from __future__ import annotations

from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.terminal import render_terminal
from gpudoctor.results import MachineSummary, Report

# synthetic: the machine summary `check` built today on a real H100 in a container (values shortened).
SYNTHETIC_MACHINE: MachineSummary = {
    "os": "Ubuntu 24.04.3 LTS",
    "kernel": "Linux 6.18.44 x86_64",
    "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559}],
    "gpus_known": True,
    "gpus_on_bus": 1,
    "driver_version": "580.159.04",
    "cuda_driver_max": "13.0",
    "container": "docker",
    "wsl": None,
    "collect_duration_s": None,
    "python": None,
    "facts_seen": {
        "gpu_names": ["NVIDIA H100 80GB HBM3"],
        "driver_versions": ["580.159.04"],
        "cuda_driver_versions": ["13.0"],
        "cuda_runtime_versions": [],
        "torch_versions": ["2.11.0+cu130"],
        "torch_cuda_versions": ["13.0"],
        "tensorflow_versions": [],
        "cudnn_versions": [],
    },
}

RAW_KEYS = ("gpus_known", "gpus_on_bus", "facts_seen", "wsl", "container:", "collect_duration_s", "null", "{")


def _machine_block(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end)]


def _report(machine: MachineSummary) -> Report:
    return Report(results=[], source={"kind": "live"}, machine=machine)


def test_markdown_machine_block_has_labels_not_keys():
    block = _machine_block(render_markdown(_report(SYNTHETIC_MACHINE)), "## Machine", "**Summary:**")
    for raw in RAW_KEYS:
        assert raw not in block, (raw, block)
    assert "- **Container:** docker" in block
    assert "- **NVIDIA GPUs on the PCI bus:** 1" in block
    assert "PyTorch 2.11.0+cu130" in block and "driver 580.159.04" in block
    assert "WSL" not in block  # not WSL: nothing to say


def test_verbose_terminal_header_has_labels_not_keys():
    text = render_terminal(_report(SYNTHETIC_MACHINE), verbose=True)
    header = text.split("\n\n", 1)[0]
    for raw in RAW_KEYS:
        assert raw not in header, (raw, header)
    assert "Container: docker" in header


def test_what_is_not_known_is_said_with_its_reason():
    machine: MachineSummary = {"gpus": [], "gpus_known": False, "gpus_on_bus": None, "wsl": 2}
    block = _machine_block(render_markdown(_report(machine)), "## Machine", "**Summary:**")
    assert "GPUs not known (nothing that lists them was collected)" in block
    assert "- **NVIDIA GPUs on the PCI bus:** not known (the PCI bus was not read)" in block
    assert "- **WSL:** version 2" in block
    assert "null" not in block and "gpus_known" not in block


def test_an_unknown_key_from_a_newer_report_is_labelled_not_dropped():
    machine = dict(SYNTHETIC_MACHINE, firmware_notes="synthetic note")
    block = _machine_block(render_markdown(_report(machine)), "## Machine", "**Summary:**")  # type: ignore[arg-type]
    assert "- **Firmware notes:** synthetic note" in block
