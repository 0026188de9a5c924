"""Build evidence for check tests.

Text sources can come from the real captured fixtures; the JSON records
(sysfs scans, device nodes, environment) in these helpers are SYNTHETIC:
written by hand in the shape gpudoctor's own collectors produce.
"""

from __future__ import annotations

import json
from typing import Any

from gpudoctor.api import CheckContext
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.sources import source_by_name
from gpudoctor.facts.facts import Facts


def make_evidence(origin: str = "snapshot", **sources: Any) -> Evidence:
    """``make_evidence(nvidia_smi_txt="...", pci_devices_json={...})``: underscores stand for '-' and '.'."""
    evidence = Evidence(origin={"kind": origin})
    for key, value in sources.items():
        name = _name(key)
        source = source_by_name(name)
        if value is None:
            evidence.add(EvidenceItem(name=name, kind=source.kind if source else "file", error="not found"))
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        evidence.add(EvidenceItem(name=name, kind=source.kind if source else "file", text=text))
    return evidence


def _name(key: str) -> str:
    aliases = {
        "nvidia_smi_q_x_xml": "nvidia-smi-q-x.xml",
        "nvidia_smi_txt": "nvidia-smi.txt",
        "nvidia_smi_L_txt": "nvidia-smi-L.txt",
        "proc_driver_nvidia_version_txt": "proc-driver-nvidia-version.txt",
        "sys_module_nvidia_version_txt": "sys-module-nvidia-version.txt",
        "proc_modules_txt": "proc-modules.txt",
        "proc_version_txt": "proc-version.txt",
        "nvcc_version_txt": "nvcc-version.txt",
        "ldconfig_p_txt": "ldconfig-p.txt",
        "lspci_txt": "lspci.txt",
        "os_release": "os-release",
        "uname_txt": "uname.txt",
        "dmesg_nvidia_txt": "dmesg-nvidia.txt",
        "nvml_json": "nvml.json",
        "env_json": "env.json",
        "pci_devices_json": "pci-devices.json",
        "device_nodes_json": "device-nodes.json",
        "cuda_toolkits_json": "cuda-toolkits.json",
        "cudnn_json": "cudnn.json",
        "driver_libraries_json": "driver-libraries.json",
        "container_json": "container.json",
        "python_packages_json": "python-packages.json",
    }
    if key in aliases:
        return aliases[key]
    from gpudoctor.evidence.sources import SOURCE_NAMES

    by_key = {n.replace("-", "_").replace(".", "_"): n for n in SOURCE_NAMES}
    return by_key[key]


def run(check_spec, evidence: Evidence, **options: Any):
    """Run one check over the evidence, as the runner would, and return its outcome."""
    return check_spec.func(Facts(evidence), CheckContext(options))


# SYNTHETIC sysfs scans in the shape of gpudoctor.evidence.system_scan.scan_pci.
def pci_scan(*devices: tuple[str, str, str | None]) -> dict:
    """``pci_scan(("0000:01:00.0", "0x2204", "nvidia"), ...)`` -> a scan_pci record of VGA functions."""
    return {
        "readable": True,
        "scanned": 20,
        "dmi": {"sys_vendor": "Supermicro", "product_name": "SYS-4029GP"},
        "devices": [
            {
                "address": a,
                "vendor": "0x10de",
                "device": d,
                "class": "0x030000",
                "driver": drv,
                "numa_node": "0",
                "subsystem_vendor": None,
                "subsystem_device": None,
                "current_link_speed": None,
                "current_link_width": None,
                "max_link_speed": None,
                "max_link_width": None,
            }
            for a, d, drv in devices
        ],
    }


NO_GPU_SCAN = {
    "readable": True,
    "scanned": 6,
    "devices": [],
    "dmi": {"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"},
}

SYNTHETIC_PROC_MODULES_NVIDIA = (
    "nvidia_uvm 1404928 0 - Live 0x0000000000000000 (POE)\n"
    "nvidia_drm 77824 0 - Live 0x0000000000000000 (POE)\n"
    "nvidia 56426496 2 nvidia_uvm,nvidia_drm, Live 0x0000000000000000 (POE)\n"
)
SYNTHETIC_PROC_MODULES_NOUVEAU = "nouveau 2306048 1 - Live 0x0000000000000000\n"
SYNTHETIC_PROC_DRIVER_535 = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
)


def judge(check_spec, evidence: Evidence):
    """Run one check as the runner does (crashes contained) and fail the test if it crashed."""
    from gpudoctor.results import Status
    from gpudoctor.runner import run_check

    result = run_check(check_spec, Facts(evidence), CheckContext())
    assert result.status is not Status.CRASHED, result.traceback
    return result


def messages(result, severity=None) -> list[str]:
    """The findings' messages, of one severity or all."""
    return [f.message for f in result.findings if severity is None or f.severity is severity]
