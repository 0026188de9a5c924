"""A CPU container without GPU access is one finding with one severity, whatever device nodes exist (issue 17).

The evidence below is REAL: ``gpudoctor collect`` output of the project's development container (Debian 12
in docker, no GPU on its PCI bus, NVIDIA user space 535 installed without a kernel module, which left a
stale ``/dev/nvidiactl``), captured 2026-11-25, each file verbatim.  The variant without the node is
SYNTHETIC: the same record with its ``nodes`` emptied, as on a fresh container before anything made one.
"""

from __future__ import annotations

import json

import pytest

from gpudoctor.api import CheckContext
from gpudoctor.facts.facts import Facts
from gpudoctor.registry import load_registry
from gpudoctor.results import Report, Status
from gpudoctor.runner import run_checks
from gpudoctor_checks import environment
from tests.synthetic.evidence import judge, make_evidence, pci_scan

REAL_CONTAINER_JSON = '{\n "cgroup": "9:name=systemd:/\\n8:pids:/\\n7:blkio:/\\n6:freezer:/\\n5:devices:/\\n4:memory:/\\n3:cpuset:/\\n2:cpuacct:/\\n1:cpu:/\\n0::/\\n",\n "containerenv": false,\n "dockerenv": true,\n "kubernetes_serviceaccount": false,\n "wsl_lib_files": null\n}'
REAL_DEVICE_NODES_JSON = '{\n "groups": [],\n "nodes": {\n  "/dev/nvidiactl": {\n   "char_device": true,\n   "directory": false,\n   "gid": 0,\n   "major": 195,\n   "minor": 255,\n   "mode": "0o666",\n   "readable": true,\n   "uid": 0,\n   "writable": true\n  }\n },\n "uid": 0\n}'
REAL_PCI_DEVICES_JSON = '{\n "devices": [],\n "dmi": {\n  "product_name": null,\n  "sys_vendor": null\n },\n "readable": true,\n "scanned": 6\n}'
REAL_NVML_JSON = '{"schema": 1, "bindings": {"importable": true, "module_file": "/work/main/.venv/lib/python3.11/site-packages/pynvml.py", "has_nvmlGetFunctionPointer": true}, "init": {"ok": false, "error": {"code": 9, "name": "NVML_ERROR_DRIVER_NOT_LOADED", "message": "Driver Not Loaded"}}}\n'
REAL_NVIDIA_SMI_TXT = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n"
REAL_PROC_VERSION_TXT = "Linux version 6.18.44-fc-v769 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC @0\n"


def _evidence(with_stale_node: bool):
    nodes = json.loads(REAL_DEVICE_NODES_JSON)
    if not with_stale_node:
        nodes["nodes"] = {}  # SYNTHETIC: no /dev/nvidia* at all
    return make_evidence(
        container_json=REAL_CONTAINER_JSON,
        device_nodes_json=nodes,
        pci_devices_json=REAL_PCI_DEVICES_JSON,
        nvml_json=REAL_NVML_JSON,
        nvidia_smi_txt=REAL_NVIDIA_SMI_TXT,
        proc_version_txt=REAL_PROC_VERSION_TXT,
    )


def _report(with_stale_node: bool) -> Report:
    checks = load_registry().checks
    return Report(run_checks(checks, Facts(_evidence(with_stale_node)), CheckContext()), {"kind": "snapshot"})


@pytest.mark.parametrize("with_stale_node", [True, False], ids=["stale-nvidiactl", "no-nodes-synthetic"])
def test_pci001_owns_the_verdict_and_env004_defers(with_stale_node):
    report = _report(with_stale_node)
    by_code = {r.code: r for r in report.results}
    assert by_code["PCI001"].status is Status.WARNING
    assert [f.cause for f in by_code["PCI001"].findings] == ["container-no-gpu-flag"]
    assert by_code["ENV004"].status is Status.NOT_APPLICABLE
    assert "PCI001" in by_code["ENV004"].summary
    assert not any(r.status is Status.CRASHED for r in report.results)


def test_the_exit_code_and_the_findings_do_not_depend_on_device_nodes():
    with_node, without_node = _report(True), _report(False)
    assert with_node.exit_code() == without_node.exit_code() == 0

    def verdicts(report: Report) -> dict[str, str]:
        return {r.code: r.status.value for r in report.results if r.status in (Status.PROBLEM, Status.WARNING)}

    assert verdicts(with_node) == verdicts(without_node) == {"PCI001": "warning"}
    steps = [with_node.next_step(), without_node.next_step()]
    assert [s.code if s else None for s in steps] == ["PCI001", "PCI001"]


def synthetic_gpu_on_the_bus() -> dict:
    """SYNTHETIC sysfs record: the host's GPU visible on the PCI bus of a container started without --gpus."""
    return pci_scan(("0000:01:00.0", "0x2330", "nvidia"))


@pytest.mark.parametrize("nodes", [{}, json.loads(REAL_DEVICE_NODES_JSON)["nodes"]], ids=["none", "stale-nvidiactl"])
def test_a_gpu_on_the_bus_without_gpu_nodes_is_env004s_problem_whatever_stale_node_exists(nodes):
    evidence = make_evidence(
        container_json=REAL_CONTAINER_JSON,
        device_nodes_json={"nodes": nodes, "uid": 0},
        pci_devices_json=synthetic_gpu_on_the_bus(),
        env_json={"variables": {}, "present": []},
    )
    result = judge(environment.container_context, evidence)
    assert result.status is Status.PROBLEM
    assert result.findings[0].cause == "container-no-gpu-flag"


def test_jax_falling_back_to_the_cpu_is_expected_without_a_gpu_on_the_bus():
    # The REAL JAX probe record of the same container (tests/recorded/cpu-container-debian): JAX prints "An NVIDIA
    # GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed" because /dev/nvidiactl
    # exists.  With no NVIDIA GPU on the bus that is what a CPU jaxlib should do: a note, not a warning.
    from tests.helpers.fixtures import REPO

    record = (REPO / "tests" / "recorded" / "cpu-container-debian" / "framework-jax.json").read_text(encoding="utf-8")
    assert "a CUDA-enabled jaxlib is not installed" in record
    evidence = _evidence(with_stale_node=True)
    evidence.add(make_evidence(framework_jax_json=record).items["framework-jax.json"])
    by_code = {r.code: r for r in run_checks(load_registry().checks, Facts(evidence), CheckContext())}
    assert by_code["JAX002"].status is Status.OK, by_code["JAX002"].summary
    assert any("expected here" in f.message for f in by_code["JAX002"].findings)
