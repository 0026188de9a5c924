"""Unknown is not absent, and not healthy: what a partial paste leaves unknown is said to be unknown.

Each test feeds the checks (and the report's machine summary) what one real paste holds, read in place from
the captured corpus (``../shared/fixtures``; skipped when absent), as ``gpudoctor check --from paste.txt`` sees
it: that text as its one source.  SYNTHETIC texts and records are named so; each changes a real text as little
as the scenario needs.  Every test here failed before the partial-evidence fixes of issue 15.
"""

from __future__ import annotations

import ast
import json
import re

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.render.common import GPUS_NOT_KNOWN, machine_summary_parts
from gpudoctor.results import Severity, Status
from gpudoctor_checks import cuda, driver, environment, gpus, health, nvml, pci, pytorch, tensorflow, topology
from tests.helpers.fixtures import REPO, fixture_text
from tests.synthetic.evidence import NO_GPU_SCAN, judge, make_evidence

TOPO_8_GPUS = "B/nccl-1439-8gpu-pcie-pix-phb-sys-2socket.txt"
MISMATCH = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"
CONTAINER_UNKNOWN_ERROR = "C/err-container-nvml-unknown-error-after-daemon-reload-nvidia-docker-1671.txt"
PROC_VERSION_565 = "D/proc-version-open-kernel-module-565.57.01-ubuntu2404-nixgl-186.txt"
LNKCAP_LNKSTA = "D/lspci-lnkcap-lnksta-rtx4090-riser-downgraded-2.5GTs-jan-183.txt"
CPUONLY_3090 = "E/pytorch-106565-conda-cpuonly-pulled-in-rtx3090x2-collect_env-excerpt.txt"  # CUDA runtime 11.4.152
RTX_5090D_CU126 = "E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"


def _pasted(key: Ev, text: str) -> Evidence:
    """What ``gpudoctor check --from paste.txt`` reads: the pasted text as its one source."""
    evidence = Evidence(origin={"kind": "file"})
    evidence.add(EvidenceItem(name=key.value, kind="file", text=text))
    return evidence


def _header(evidence: Evidence) -> tuple[dict[str, object], str]:
    """The report's machine summary and its "Machine:" line, as ``gpudoctor check`` builds them."""
    from gpudoctor.commands.report import machine_summary

    summary = machine_summary(Facts(evidence), None)
    return dict(summary), ", ".join(machine_summary_parts(summary))


def _replace_line(report: str, label: str, value: str) -> str:
    """SYNTHETIC: the report with the value of its ``label:`` line replaced."""
    changed, count = re.subn(rf"(?m)^({re.escape(label)}:).*$", rf"\1 {value}", report)
    assert count == 1, label
    return changed


def _without_torch_warning(report: str) -> str:
    """SYNTHETIC: the report from its "PyTorch version" line on, without torch's "not compatible" warning above
    it (which names the GPU and the architectures the wheel was built for)."""
    return report[report.index("PyTorch version:") :]


# --------------------------------------------------------------------------- the machine summary


def test_an_8_gpu_topology_paste_heads_the_report_with_8_gpus():
    summary, line = _header(_pasted(Ev.NVIDIA_SMI_TOPO, fixture_text(TOPO_8_GPUS)))
    assert line.startswith("8 GPUs (model not reported)"), line
    assert "no NVIDIA GPUs" not in line
    assert isinstance(summary["gpus"], list) and len(summary["gpus"]) == 8
    assert summary["gpus_known"] is True
    assert summary["gpus_on_bus"] is None  # the bus was not read: unknown, not 0


def test_a_driver_mismatch_paste_does_not_say_there_is_no_gpu():
    summary, line = _header(_pasted(Ev.NVIDIA_SMI, fixture_text(MISMATCH)))
    assert summary["gpus"] == [] and summary["gpus_known"] is False
    assert line.startswith(GPUS_NOT_KNOWN)
    assert "no NVIDIA GPUs" not in line


def test_a_proc_driver_version_paste_shows_the_driver_and_unknown_gpus():
    evidence = _pasted(Ev.PROC_DRIVER_VERSION, fixture_text(PROC_VERSION_565))
    summary, line = _header(evidence)
    assert summary["gpus_known"] is False and "no NVIDIA GPUs" not in line
    assert "driver 565.57.01" in line
    # The module loads only where it finds a GPU: the checks may count on one being there.
    census = Facts(evidence).gpu_census
    assert census.present and not census.known and "565.57.01" in (census.implied_by or "")


def test_only_a_pci_scan_establishes_that_there_is_no_gpu():
    summary, line = _header(make_evidence(pci_devices_json=NO_GPU_SCAN))  # SYNTHETIC scan, no NVIDIA device
    assert summary["gpus"] == [] and summary["gpus_known"] is True and summary["gpus_on_bus"] == 0
    assert line.startswith("no GPU or TPU on the PCI bus")  # the bus was read: no vendor's accelerator is there


# --------------------------------------------------------------------------- the CUDA toolkit of a collect_env


def test_collect_env_cuda_runtime_is_a_known_toolkit_compared_with_the_driver():
    evidence = _pasted(Ev.TORCH_COLLECT_ENV, fixture_text(CPUONLY_3090))
    listed = judge(cuda.toolkits_installed, evidence)
    assert listed.status is Status.OK and "11.4.152" in listed.summary
    compared = judge(cuda.toolkit_vs_driver, evidence)
    assert compared.status is Status.OK, compared.summary  # driver 470.182.03 runs CUDA 11.4
    assert "11.4.152" in compared.summary and "no CUDA toolkit" not in compared.summary


def test_collect_env_toolkit_newer_than_the_driver_is_a_problem():
    # SYNTHETIC: the real report with its toolkit changed to CUDA 13.0.88 (what an issue of 15 showed).
    report = _replace_line(fixture_text(CPUONLY_3090), "CUDA runtime version", "13.0.88")
    result = judge(cuda.toolkit_vs_driver, _pasted(Ev.TORCH_COLLECT_ENV, report))
    assert result.status is Status.PROBLEM, result.summary
    assert "13.0.88" in result.summary and result.findings[0].cause == "driver-too-old"


def test_toolkits_that_were_not_collected_are_not_called_absent():
    result = judge(cuda.toolkit_vs_driver, _pasted(Ev.NVIDIA_SMI_TOPO, fixture_text(TOPO_8_GPUS)))
    assert result.status is Status.NOT_APPLICABLE
    assert "not known" in result.summary and "no CUDA toolkit installed" not in result.summary


# --------------------------------------------------------------------------- the PCI bus


def test_a_lnkcap_lnksta_excerpt_says_nothing_about_the_driver_binding():
    evidence = _pasted(Ev.LSPCI, fixture_text(LNKCAP_LNKSTA))
    bound = judge(pci.driver_bound, evidence)
    assert bound.status is Status.NOT_APPLICABLE, bound.summary
    assert "not known" in bound.summary and not bound.findings
    assert judge(pci.gpu_on_bus, evidence).status is Status.NOT_APPLICABLE
    # The link itself is still read (TOPO001 judges it).
    assert judge(topology.pcie_links, evidence).status is Status.WARNING


# SYNTHETIC: `lspci -nn | grep -i nvidia` (no -k): two functions, no "Kernel driver in use" line anywhere.
SYNTHETIC_LSPCI_WITHOUT_K = (
    "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204] (rev a1)\n"
    "01:00.1 Audio device [0403]: NVIDIA Corporation GA102 High Definition Audio Controller [10de:1aef] (rev a1)\n"
)


def test_lspci_without_k_lists_the_gpu_but_not_its_driver():
    evidence = _pasted(Ev.LSPCI, SYNTHETIC_LSPCI_WITHOUT_K)
    assert judge(pci.gpu_on_bus, evidence).status is Status.OK
    bound = judge(pci.driver_bound, evidence)
    assert bound.status is Status.NOT_APPLICABLE and "Kernel driver in use" in bound.summary
    # With -k the same GPU without a driver line has none bound.
    with_k = SYNTHETIC_LSPCI_WITHOUT_K.replace("(rev a1)\n01:00.1", "(rev a1)\n\tKernel modules: nouveau\n01:00.1", 1)
    result = judge(pci.driver_bound, _pasted(Ev.LSPCI, with_k))
    assert result.status is Status.PROBLEM and result.findings[0].cause == "driver-not-installed"


# --------------------------------------------------------------------------- PyTorch


def test_cuda_unavailable_with_a_known_driver_is_a_problem():
    # SYNTHETIC: the real report with CUDA unavailable and its GPU list lost; the driver line stays.
    report = _replace_line(fixture_text(RTX_5090D_CU126), "Is CUDA available", "False")
    report = _replace_line(report, "GPU models and configuration", "Could not collect")
    result = judge(pytorch.torch_cuda_init, _pasted(Ev.TORCH_COLLECT_ENV, _without_torch_warning(report)))
    assert result.status is Status.PROBLEM, result.summary
    assert result.findings[0].cause == "cuda-unavailable"
    assert "torch.cuda.init()" in " ".join(result.findings[0].fix.commands)


def test_cuda_unavailable_where_nothing_shows_a_gpu_is_a_warning_with_the_commands():
    # SYNTHETIC: as above, with the driver line "Could not collect" too (what the issue showed).
    report = _replace_line(fixture_text(RTX_5090D_CU126), "Is CUDA available", "False")
    for label in ("GPU models and configuration", "Nvidia driver version"):
        report = _replace_line(report, label, "Could not collect")
    result = judge(pytorch.torch_cuda_init, _pasted(Ev.TORCH_COLLECT_ENV, _without_torch_warning(report)))
    assert result.status is Status.WARNING, result.summary
    assert "not known" in result.summary and "no NVIDIA GPU here" not in result.summary
    commands = result.findings[0].fix.commands
    assert "nvidia-smi" in commands and any("lspci" in c for c in commands)
    assert "no-nvidia-gpu" in result.findings[0].other_causes


def test_an_arch_list_that_is_not_known_is_never_ok():
    # SYNTHETIC: a PyPI wheel without a local tag (the knowledge base cannot place it), without the warning.
    report = _without_torch_warning(fixture_text(RTX_5090D_CU126)).replace("2.6.0+cu126", "2.6.0")
    result = judge(pytorch.torch_arch, _pasted(Ev.TORCH_COLLECT_ENV, report))
    assert result.status is Status.NOT_APPLICABLE, result.summary
    assert "not known" in result.summary and "get_arch_list" in result.summary


# --------------------------------------------------------------------------- TensorFlow logs

# https://github.com/tensorflow/tensorflow/issues/23573 (the reporter's log; TensorFlow found the GTX 1080).
REAL_TF_LOG_23573 = "\n".join(
    (
        "2018-11-06 22:16:20.031851: I tensorflow/core/platform/cpu_feature_guard.cc:141] Your CPU supports "
        "instructions that this TensorFlow binary was not compiled to use: AVX2",
        "2018-11-06 22:16:20.718059: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1432] Found device 0 with "
        "properties: ",
        "name: GeForce GTX 1080 major: 6 minor: 1 memoryClockRate(GHz): 1.7335",
        "pciBusID: 0000:07:00.0",
        "totalMemory: 8.00GiB freeMemory: 6.59GiB",
        "2018-11-06 22:16:20.718927: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1511] Adding visible gpu "
        "devices: 0",
    )
)


def test_a_tensorflow_log_that_shows_the_gpu_is_ok_and_one_that_says_nothing_is_not():
    assert judge(tensorflow.tf_gpu, _pasted(Ev.TENSORFLOW_LOG, REAL_TF_LOG_23573)).status is Status.OK
    first_line = REAL_TF_LOG_23573.splitlines()[0]  # the same log cut before TensorFlow looked for a GPU
    result = judge(tensorflow.tf_gpu, _pasted(Ev.TENSORFLOW_LOG, first_line))
    assert result.status is Status.NOT_APPLICABLE and "not known" in result.summary


# SYNTHETIC: a TensorFlow log line in the shape TF 2.x prints when cuInit finds no GPU.
SYNTHETIC_CUINIT_NO_DEVICE = (
    "2023-01-01 10:00:00.000000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:267] "
    "failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
)


def test_a_failed_cuinit_in_a_tensorflow_log_is_never_ok():
    result = judge(tensorflow.tf_gpu, _pasted(Ev.TENSORFLOW_LOG, SYNTHETIC_CUINIT_NO_DEVICE))
    assert result.status is Status.WARNING, result.summary  # nothing says whether there is a GPU
    assert result.findings[0].cause == "cuda-unavailable" and "no-nvidia-gpu" in result.findings[0].other_causes
    beside_a_gpu = make_evidence(tensorflow_log_txt=SYNTHETIC_CUINIT_NO_DEVICE, lspci_txt=SYNTHETIC_LSPCI_WITHOUT_K)
    assert judge(tensorflow.tf_gpu, beside_a_gpu).status is Status.PROBLEM


# --------------------------------------------------------------------------- NVML, GPUs, driver


def test_nvml_errors_nvidia_smi_printed_are_nvml_errors():
    mismatch = judge(nvml.nvml_init, _pasted(Ev.NVIDIA_SMI, fixture_text(MISMATCH)))
    assert mismatch.status is Status.PROBLEM and mismatch.findings[0].cause == "driver-library-mismatch"
    unknown = judge(nvml.nvml_init, _pasted(Ev.NVIDIA_SMI, fixture_text(CONTAINER_UNKNOWN_ERROR)))
    assert unknown.status is Status.PROBLEM and "Unknown Error" in unknown.summary


def test_no_gpu_list_is_not_the_driver_reporting_none():
    result = judge(gpus.inventory, _pasted(Ev.NVIDIA_SMI_TOPO, fixture_text(TOPO_8_GPUS)))
    assert result.status is Status.NOT_APPLICABLE
    assert "not collected" in result.summary and "8 GPUs" in result.summary
    assert "the driver reports no GPU" not in result.summary


# SYNTHETIC: what nvidia-smi prints when the driver is loaded and initialised no GPU (its whole output).
SYNTHETIC_NO_DEVICES = "No devices were found\n"


def test_no_devices_found_beside_a_gpu_on_the_bus_is_a_problem():
    evidence = make_evidence(nvidia_smi_txt=SYNTHETIC_NO_DEVICES, lspci_txt=SYNTHETIC_LSPCI_WITHOUT_K)
    result = judge(gpus.inventory, evidence)
    assert result.status is Status.PROBLEM and result.findings[0].cause == "driver-no-devices"
    alone = judge(gpus.inventory, _pasted(Ev.NVIDIA_SMI, SYNTHETIC_NO_DEVICES))
    assert alone.status is Status.WARNING and "not known" in alone.summary


def test_driver_checks_say_what_was_not_collected_and_how_to_get_it():
    evidence = _pasted(Ev.NVIDIA_SMI_TOPO, fixture_text(TOPO_8_GPUS))
    for spec in (driver.kernel_module_loaded, driver.versions_match, driver.nouveau):
        result = judge(spec, evidence)
        assert result.status is Status.NOT_APPLICABLE
        assert "not known" in result.summary and ("cat /proc" in result.summary or "lsmod" in result.summary)


def test_health_that_was_not_collected_is_not_called_unsupported():
    evidence = _pasted(Ev.NVIDIA_SMI_TOPO, fixture_text(TOPO_8_GPUS))
    for spec in (health.ecc, health.memory_repairs, health.gpu_answers):
        result = judge(spec, evidence)
        assert result.status is Status.NOT_APPLICABLE
        assert "not supported" not in result.summary and "not known" in result.summary


def test_nvlink_and_nvswitch_questions_stay_open_without_their_sources():
    evidence = make_evidence(
        nvidia_smi_L_txt="GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1)\n"
    )
    assert "no NVSwitch on this machine" not in judge(topology.fabric_manager, evidence).summary


def test_cuda_visible_devices_without_a_gpu_list_is_not_ok():
    # SYNTHETIC environment record: only the variable, no GPU list to check it against.
    evidence = make_evidence(env_json={"variables": {"CUDA_VISIBLE_DEVICES": "3"}})
    result = judge(environment.visible_devices, evidence)
    assert result.status is Status.NOT_APPLICABLE and "not known" in result.summary


# --------------------------------------------------------------------------- causes


def _core_cause_ids() -> set[str]:
    """Every cause of the catalogue: core.json and the vendors' own files (rocm.json, apple.json, ...)."""
    ids: set[str] = set()
    for path in sorted((REPO / "gpudoctor" / "kb" / "data" / "causes").glob("*.json")):
        ids |= {entry["id"] for entry in json.loads(path.read_text(encoding="utf-8"))["causes"]}
    return ids


def _named_causes(source: str) -> set[str]:
    """Every cause id a check module names: ``cause=`` / ``other_causes=`` values (and a ``cause`` variable's),
    CudaInitCause's cause arguments, and the Xid category table."""
    names: set[str] = set()

    def strings(node: ast.AST) -> None:
        # The values a cause expression can take: constants, the items of a tuple, both arms of a conditional.
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
            names.add(node.value)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for item in node.elts:
                strings(item)
        elif isinstance(node, ast.IfExp):
            strings(node.body)
            strings(node.orelse)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg in ("cause", "other_causes"):
            strings(node.value)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "cause" for t in node.targets):
            strings(node.value)  # `cause = "..."` before a `cause=cause`
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "CudaInitCause":
            for argument in node.args[2:]:
                strings(argument)
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_XID_CATEGORY_CAUSES" for t in node.targets):
            assert isinstance(node.value, ast.Dict)
            for value in node.value.values:
                strings(value)
    return names


def test_every_cause_the_checks_name_is_in_the_causes_catalogue():
    checks = REPO / "checks"
    owned = [
        p for p in sorted(checks.glob("*.py")) if p.name not in ("signatures.py", "evidence_gaps.py", "_cause_fixes.py")
    ]
    named: dict[str, set[str]] = {p.name: _named_causes(p.read_text(encoding="utf-8")) for p in owned}
    core = _core_cause_ids()
    unknown = {name: sorted(ids - core) for name, ids in named.items() if ids - core}
    assert not unknown, unknown
    everything = set().union(*named.values())
    assert len(everything) >= 40, sorted(everything)  # the checks name most of the core causes
    assert {"driver-not-loaded", "driver-library-mismatch", "nouveau-bound", "torch-cpu-build"} <= everything


def test_a_finding_with_a_cause_names_it_in_the_json():
    result = judge(nvml.nvml_init, _pasted(Ev.NVIDIA_SMI, fixture_text(MISMATCH)))
    finding = next(f for f in result.findings if f.severity is Severity.PROBLEM)
    assert finding.to_dict()["cause"] == "driver-library-mismatch"
