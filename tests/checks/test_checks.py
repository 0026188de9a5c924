"""Checks judged per scenario: real captured outputs where they exist, SYNTHETIC records otherwise."""

from __future__ import annotations

import json

import pytest

from gpudoctor.api import DOC_SECTIONS, CheckContext, check
from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.registry import load_registry
from gpudoctor.results import Status
from gpudoctor.runner import run_check
from gpudoctor_checks import cuda, devices, driver, environment, gpus, nvml, pci
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import (
    NO_GPU_SCAN,
    SYNTHETIC_PROC_DRIVER_535,
    SYNTHETIC_PROC_MODULES_NOUVEAU,
    SYNTHETIC_PROC_MODULES_NVIDIA,
    make_evidence,
    pci_scan,
    run,
)

# --- the registry and the documentation contract ------------------------------------------------------


def test_every_builtin_check_is_documented_in_three_sections():
    registry = load_registry()
    assert not registry.load_errors
    assert len(registry.checks) >= 25
    for spec in registry.checks:
        for section in DOC_SECTIONS:
            assert section in spec.doc, (spec.code, section)


def test_codes_are_unique_and_stable_families():
    codes = [c.code for c in load_registry().checks]
    assert len(codes) == len(set(codes))
    families = {c.rstrip("0123456789") for c in codes}
    assert families <= {
        "COL",
        "PCI",
        "DRV",
        "NVML",
        "GPU",
        "CUDA",
        "CUDNN",
        "DEV",
        "ENV",
        "GATE",
        "FW",
        "TORCH",
        "TF",
        "JAX",
        "CUPY",
        "SMOKE",
        "TOPO",
        "HEALTH",
        "ROCM",
        "XPU",
        "MPS",
        "TPU",
        "PLAT",
    }


def test_a_raising_check_is_recorded_as_crashed():
    @check("TEST001", area="test", title="raises")
    def broken(facts, ctx):
        """What it checks: x. Why it matters: y. How to fix: z."""
        raise ZeroDivisionError("boom")

    result = run_check(broken, Facts(make_evidence()), CheckContext())
    assert result.status is Status.CRASHED
    assert "ZeroDivisionError: boom" in result.summary and "Traceback" in result.traceback


def test_bad_check_code_is_refused():
    with pytest.raises(ValueError):
        check("lower1", area="x", title="y")


# --- PCI bus and driver binding ---------------------------------------------------------------------------


def test_no_gpu_on_a_vm_is_a_warning_that_names_the_vm():
    outcome = run(pci.gpu_on_bus, make_evidence(pci_devices_json=NO_GPU_SCAN, container_json={}))
    assert outcome.status is Status.WARNING
    assert "virtual machine" in outcome.summary and "QEMU" in outcome.summary


@pytest.mark.parametrize(
    "bound, status, words",
    [
        (None, Status.PROBLEM, "no kernel driver bound"),
        ("nouveau", Status.PROBLEM, "held by nouveau"),
        ("vfio-pci", Status.WARNING, "passthrough"),
        ("nvidia", Status.OK, "driven by nvidia"),
    ],
)
def test_driver_binding_verdicts(bound, status, words):
    evidence = make_evidence(pci_devices_json=pci_scan(("0000:01:00.0", "0x2204", bound)))
    outcome = run(pci.driver_bound, evidence)
    assert outcome.status is status
    assert words in (outcome.findings[0].message if outcome.findings else outcome.summary)


def test_nouveau_is_a_problem_with_the_blacklist_fix():
    evidence = make_evidence(
        pci_devices_json=pci_scan(("0000:01:00.0", "0x2204", "nouveau")),
        proc_modules_txt=SYNTHETIC_PROC_MODULES_NOUVEAU,
        os_release='ID=ubuntu\nVERSION_ID="22.04"\n',
    )
    outcome = run(driver.nouveau, evidence)
    assert outcome.status is Status.PROBLEM
    commands = outcome.findings[0].fix.commands
    assert any("blacklist nouveau" in c for c in commands) and "sudo update-initramfs -u" in commands


# --- driver versions -------------------------------------------------------------------------------------


def test_version_mismatch_from_the_real_error_text_and_library_files():
    evidence = make_evidence(
        nvidia_smi_txt=fixture_text("C/err-nvml-version-mismatch-reboot-illinois-60.txt"),
        proc_driver_nvidia_version_txt=SYNTHETIC_PROC_DRIVER_535,
        driver_libraries_json={
            "libnvidia-ml": [
                {
                    "path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                    "realpath": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14",
                }
            ],
            "libcuda": [],
        },
    )
    outcome = run(driver.versions_match, evidence)
    assert outcome.status is Status.PROBLEM
    assert "535.54.03" in outcome.summary and "550.54.14" in outcome.summary
    assert "sudo reboot" in outcome.findings[0].fix.commands


def test_matching_versions_are_ok():
    evidence = make_evidence(
        proc_driver_nvidia_version_txt=SYNTHETIC_PROC_DRIVER_535,
        proc_modules_txt=SYNTHETIC_PROC_MODULES_NVIDIA,
        driver_libraries_json={
            "libnvidia-ml": [{"path": "/usr/lib/libnvidia-ml.so.1", "realpath": "/usr/lib/libnvidia-ml.so.535.54.03"}]
        },
    )
    assert run(driver.versions_match, evidence).status is Status.OK
    assert run(driver.kernel_module_loaded, evidence).summary.startswith("loaded: 535.54.03")


# --- NVML init errors, each mapped to its own fix ---------------------------------------------------


def _nvml_failure(code: int, name: str, message: str) -> dict:
    # SYNTHETIC record in the shape gpudoctor.evidence.nvml_probe prints.
    return {
        "schema": 1,
        "bindings": {"importable": True},
        "init": {"ok": False, "error": {"code": code, "name": name, "message": message}},
    }


@pytest.mark.parametrize(
    "code, name, message, in_container, expected",
    [
        (12, "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML Shared Library Not Found", False, "libnvidia-ml.so.1"),
        (9, "NVML_ERROR_DRIVER_NOT_LOADED", "Driver Not Loaded", False, "modprobe nvidia"),
        (
            18,
            "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
            "RM has detected an NVML/RM version mismatch.",
            False,
            "sudo reboot",
        ),
        (4, "NVML_ERROR_NO_PERMISSION", "Insufficient Permissions", False, "usermod"),
        (15, "NVML_ERROR_GPU_IS_LOST", "GPU is lost", False, "Xid"),
        (999, "NVML_ERROR_UNKNOWN", "Unknown Error", True, "create-dev-char-symlinks"),
        (999, "NVML_ERROR_UNKNOWN", "Unknown Error", False, "NVRM"),
    ],
)
def test_nvml_errors_map_to_fixes(code, name, message, in_container, expected):
    evidence = make_evidence(
        nvml_json=_nvml_failure(code, name, message),
        pci_devices_json=pci_scan(("0000:01:00.0", "0x20b0", "nvidia")),
        container_json={"dockerenv": in_container, "containerenv": False, "cgroup": ""},
    )
    outcome = run(nvml.nvml_init, evidence)
    assert outcome.status is Status.PROBLEM
    finding = outcome.findings[0]
    text = " ".join([finding.message, finding.fix.summary, *finding.fix.commands])
    assert expected in text


def test_legacy_pynvml_shadowing_is_a_problem():
    packages = {
        "distributions": {
            "nvidia-ml-py": {"version": "12.560.30", "provides_pynvml_module": True},
            "pynvml": {"version": "11.5.0", "provides_pynvml_module": True},
        }
    }
    outcome = run(nvml.bindings, make_evidence(python_packages_json=packages))
    assert outcome.status is Status.PROBLEM
    assert "python -m pip uninstall -y pynvml" in outcome.findings[0].fix.commands
    modern = {
        "distributions": {
            "nvidia-ml-py": {"version": "13.580.65", "provides_pynvml_module": True},
            "pynvml": {"version": "12.0.0", "provides_pynvml_module": False},
        }
    }
    assert run(nvml.bindings, make_evidence(python_packages_json=modern)).status is Status.OK


# --- GPU inventory from real captured outputs ----------------------------------------------------------


def test_inventory_from_real_8_gpu_xml():
    evidence = make_evidence(nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"))
    outcome = run(gpus.inventory, evidence)
    assert outcome.status is Status.OK
    records = outcome.data["gpus"]
    assert len(records) == 8
    assert all(r["compute_capability"] == "7.0" and r["compute_capability_source"] == "knowledge base" for r in records)
    assert outcome.data["cuda_driver_max"] == "11.2"


def test_gpu_on_bus_missing_from_driver_is_a_problem():
    xml = fixture_text("A/telegraf-tesla-t4-515.105.01-v11.txt")
    facts_evidence = make_evidence(nvidia_smi_q_x_xml=xml)
    seen = Facts(facts_evidence).gpus[0].bus_id
    evidence = make_evidence(
        nvidia_smi_q_x_xml=xml,
        pci_devices_json=pci_scan((seen, "0x1eb8", "nvidia"), ("0000:99:00.0", "0x1eb8", "nvidia")),
    )
    outcome = run(gpus.inventory, evidence)
    assert outcome.status is Status.PROBLEM
    assert "0000:99:00.0" in outcome.findings[0].message


def test_cuda_max_falls_back_to_the_knowledge_base():
    # An old table (driver 440) pasted alone still yields the CUDA version it printed.
    text = fixture_text("C/issue-gtx780-440.33.01-old-layout-NA-not-supported-tab-indented-pytorch-31007.txt")
    facts = Facts(make_evidence(nvidia_smi_txt=text))
    assert facts.driver.cuda_max == "10.2" and facts.driver.cuda_max_source == "nvidia-smi"
    # With only the kernel module's version (SYNTHETIC line, 470 branch), the knowledge base fills it in.
    facts = Facts(
        make_evidence(
            proc_driver_nvidia_version_txt=(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n"
            )
        )
    )
    assert (facts.driver.cuda_max, facts.driver.cuda_max_source) == ("11.4", "knowledge base")
    # The hadoop XML (schema v8, driver 375.66) has no cuda_version element and predates the table.
    xml = fixture_text("A/hadoop-2x-tesla-p100-pcie-375.66-v8-asf-header.txt")
    facts = Facts(make_evidence(nvidia_smi_q_x_xml=xml))
    assert facts.driver.kernel_version == "375.66" and facts.driver.cuda_max is None


def test_exclusive_and_prohibited_compute_modes():
    record = {
        "schema": 1,
        "init": {"ok": True},
        "driver_version": "535.54.03",
        "device_count": 2,
        "devices": [
            {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_mode": "Exclusive_Process"},
            {"index": 1, "name": "NVIDIA A100-SXM4-80GB", "compute_mode": "Prohibited"},
        ],
    }
    outcome = run(gpus.compute_mode, make_evidence(nvml_json=record))
    assert outcome.status is Status.PROBLEM
    assert [f.severity.value for f in outcome.findings] == ["warning", "problem"]
    assert "sudo nvidia-smi -i 1 -c DEFAULT" in outcome.findings[1].fix.commands


# --- CUDA toolkit against the driver --------------------------------------------------------------------


def _toolkit(version: str) -> dict:
    # SYNTHETIC scan_cuda_toolkits record with a version.json as NVIDIA's installers write it.
    path = f"/usr/local/cuda-{version.rsplit('.', 1)[0]}"
    return {
        "toolkits": [
            {
                "path": path,
                "realpath": path,
                "nvcc": True,
                "dist_info": [],
                "cudart": [],
                "version.json": json.dumps({"cuda": {"name": "CUDA SDK", "version": version}}),
                "version.txt": None,
            }
        ],
        "links": {},
    }


@pytest.mark.parametrize(
    "toolkit, status, words",
    [
        ("12.2.2", Status.OK, "runs CUDA 12.2.2"),
        ("12.4.1", Status.WARNING, "minor-version compatibility"),
        ("13.0.2", Status.PROBLEM, "needs driver ≥ 580"),
    ],
)
def test_toolkit_against_driver_535(toolkit, status, words):
    evidence = make_evidence(
        proc_driver_nvidia_version_txt=SYNTHETIC_PROC_DRIVER_535,
        proc_modules_txt=SYNTHETIC_PROC_MODULES_NVIDIA,
        cuda_toolkits_json=_toolkit(toolkit),
    )
    outcome = run(cuda.toolkit_vs_driver, evidence)
    assert outcome.status is status
    assert words in (outcome.findings[0].message if outcome.findings else outcome.summary)


def test_toolkit_without_a_driver_says_it_cannot_run_here():
    evidence = make_evidence(proc_modules_txt="", pci_devices_json=NO_GPU_SCAN, cuda_toolkits_json=_toolkit("13.0.2"))
    outcome = run(cuda.toolkit_vs_driver, evidence)
    assert outcome.status is Status.NOT_APPLICABLE
    assert "compiled here but not run" in outcome.summary and "580" in outcome.summary


# --- device nodes -------------------------------------------------------------------------------------


def _nodes(**overrides) -> dict:
    nodes = {
        p: {"char_device": True, "mode": "0o666", "readable": True, "writable": True}
        for p in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0")
    }
    nodes.update(overrides)
    return {"nodes": {k: v for k, v in nodes.items() if v is not None}, "uid": 1000, "groups": [1000]}


@pytest.mark.parametrize(
    "overrides, status, words",
    [
        ({}, Status.OK, "readable and writable"),
        ({"/dev/nvidia-uvm": None}, Status.PROBLEM, "/dev/nvidia-uvm is missing"),
        (
            {"/dev/nvidia0": {"char_device": True, "mode": "0o660", "readable": False, "writable": False}},
            Status.PROBLEM,
            "cannot open /dev/nvidia0",
        ),
    ],
)
def test_device_nodes(overrides, status, words):
    evidence = make_evidence(
        proc_driver_nvidia_version_txt=SYNTHETIC_PROC_DRIVER_535,
        proc_modules_txt=SYNTHETIC_PROC_MODULES_NVIDIA,
        device_nodes_json=_nodes(**overrides),
    )
    outcome = run(devices.device_nodes, evidence)
    assert outcome.status is status
    assert words in (outcome.findings[0].message if outcome.findings else outcome.summary)


# --- environment: CUDA_VISIBLE_DEVICES by CUDA's rules ---------------------------------------------------


@pytest.mark.parametrize(
    "value, status, words",
    [
        ("0,1", Status.OK, "CUDA sees 2 of 8"),
        ("0,1,9,2", Status.WARNING, "entry '9' names no GPU"),
        ("", Status.WARNING, "hides every GPU"),
        ("-1", Status.WARNING, "hides every GPU"),
        ("3,3", Status.PROBLEM, "repeats 3"),
        ("9", Status.PROBLEM, "visible: none"),
    ],
)
def test_cuda_visible_devices_on_a_real_8_gpu_machine(value, status, words):
    evidence = make_evidence(
        nvidia_smi_q_x_xml=fixture_text("A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"),
        env_json={"variables": {"CUDA_VISIBLE_DEVICES": value}, "present": []},
    )
    outcome = run(environment.visible_devices, evidence)
    assert outcome.status is status
    text = " ".join([outcome.summary, *(f.message for f in outcome.findings)])
    assert words in text


def test_mig_uuids_in_cuda_visible_devices():
    listing = fixture_text("C/gpuexporter-h100-mig-nvidia-smi-L.txt")
    facts = Facts(make_evidence(nvidia_smi_L_txt=listing))
    mig = [d.uuid for g in facts.gpus for d in g.mig_devices if d.uuid]
    assert len(mig) >= 2
    evidence = make_evidence(
        nvidia_smi_L_txt=listing, env_json={"variables": {"CUDA_VISIBLE_DEVICES": f"{mig[0]},{mig[1]}"}, "present": []}
    )
    outcome = run(environment.visible_devices, evidence)
    assert any("one CUDA process can use only the first" in f.message for f in outcome.findings)


def test_mixed_gpus_without_pci_order_warns():
    record = {
        "schema": 1,
        "init": {"ok": True},
        "driver_version": "550.54.14",
        "device_count": 2,
        "devices": [{"index": 0, "name": "NVIDIA GeForce RTX 4090"}, {"index": 1, "name": "NVIDIA GeForce RTX 3090"}],
    }
    outcome = run(environment.device_order, make_evidence(nvml_json=record, env_json={"variables": {}}))
    assert outcome.status is Status.WARNING
    assert "export CUDA_DEVICE_ORDER=PCI_BUS_ID" in outcome.findings[0].fix.commands


# --- containers and WSL ---------------------------------------------------------------------------------


def test_container_without_gpu_access():
    evidence = make_evidence(
        container_json={"dockerenv": True, "containerenv": False, "cgroup": ""},
        device_nodes_json={"nodes": {}, "uid": 0},
        env_json={"variables": {}, "present": []},
    )
    outcome = run(environment.container_context, evidence)
    assert outcome.status is Status.PROBLEM
    assert "docker run --gpus all ..." in outcome.findings[0].fix.commands


def test_wsl1_and_wsl2():
    wsl1 = make_evidence(
        proc_version_txt="Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)",
        container_json={"wsl_lib_files": None},
    )
    assert run(environment.container_context, wsl1).status is Status.PROBLEM
    wsl2 = make_evidence(
        proc_version_txt="Linux version 5.15.167.4-microsoft-standard-WSL2 (root@x)",
        container_json={"wsl_lib_files": ["libcuda.so", "libcuda.so.1", "nvidia-smi"]},
        driver_libraries_json={"libnvidia-ml": [], "libcuda": []},
    )
    outcome = run(environment.container_context, wsl2)
    assert outcome.status is Status.OK and "WSL2" in outcome.summary
    assert run(pci.gpu_on_bus, wsl2).status is Status.NOT_APPLICABLE


def test_checks_never_crash_on_missing_evidence():
    registry = load_registry()
    facts = Facts(make_evidence())
    for spec in registry.checks:
        result = run_check(spec, facts, CheckContext())
        assert result.status is not Status.CRASHED, (spec.code, result.traceback)


def test_checks_never_crash_on_corrupt_json_evidence():
    evidence = make_evidence()
    for name in (
        "nvml.json",
        "env.json",
        "pci-devices.json",
        "device-nodes.json",
        "cuda-toolkits.json",
        "cudnn.json",
        "driver-libraries.json",
        "container.json",
        "python-packages.json",
    ):
        evidence.add(EvidenceItem(name=name, kind="json", text='{"truncated": [1, 2'))
    facts = Facts(evidence)
    for spec in load_registry().checks:
        result = run_check(spec, facts, CheckContext({"require_gpu": True, "min_gpus": 1, "cuda": "12.4"}))
        assert result.status is not Status.CRASHED, (spec.code, result.traceback)


def test_library_path_entries_missing_and_naming_another_cuda():
    # SYNTHETIC env record in the shape scan_environment writes; nvcc text is a real capture.
    env = {
        "variables": {"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64:/opt/gone"},
        "present": [],
        "missing_library_dirs": ["/opt/gone"],
    }
    evidence = make_evidence(env_json=env, nvcc_version_txt=fixture_text("D/nvcc-12.8.93-cosmos-rl-131.txt"))
    outcome = run(environment.library_path, evidence)
    assert outcome.status is Status.WARNING
    messages = [f.message for f in outcome.findings]
    assert any("/opt/gone" in m for m in messages)
    assert any("CUDA 11.8" in m and "CUDA 12.8" in m for m in messages)
