"""Smoke checks on an AMD GPU through ROCm: torch names HIP devices ``cuda:N``; the link is read from the PCI
scan (no NVML), the peaks from the knowledge base's AMD rows.

Both the smoke record and the sysfs scan record are SYNTHETIC (no ROCm machine here): the smoke record has the
shape gpudoctor/probes/smoke_torch.py prints on a ROCm build (device kind "rocm"), the scan the shape of
gpudoctor's own scan_pci for an MI300X (device id 0x74a1, as in the real rocm-smi captures of G-amd).
"""

from __future__ import annotations

import copy

from gpudoctor.results import Status
from gpudoctor_checks import smoke
from tests.synthetic import smoke_json as synthetic
from tests.synthetic.evidence import make_evidence, run

BUS = "0000:26:00.0"


def _scan(width_now: int) -> dict[str, object]:
    return {
        "readable": True,
        "scanned": 3,
        "dmi": {},
        "devices": [
            {
                "address": BUS,
                "vendor": "0x1002",
                "device": "0x74a1",
                "class": "0x120000",
                "driver": "amdgpu",
                "numa_node": "0",
                "current_link_speed": "32.0 GT/s PCIe",
                "current_link_width": str(width_now),
                "max_link_speed": "32.0 GT/s PCIe",
                "max_link_width": "16",
            }
        ],
    }


def _mi300x_record(h2d: float, fp16: float) -> dict[str, object]:
    record = synthetic.single_gpu_bandwidth("AMD Instinct MI300X", BUS, h2d, h2d, matmul_fp32=80.0)
    device = record["devices"][1]
    device.update({"kind": "rocm", "capability": "9.4", "memory_total_mib": 196592})
    record["matmul"].append(copy.deepcopy(record["matmul"][1]) | {"dtype": "fp16", "tflops": fp16})
    record["framework_version"] = "2.6.0+rocm6.2.4"
    return record


def test_pinned_bandwidth_is_judged_against_the_amd_gpus_own_link_from_sysfs() -> None:
    outcome = run(
        smoke.bandwidth_vs_link, make_evidence(pci_devices_json=_scan(16), smoke_json=_mi300x_record(52.0, 700))
    )
    assert outcome.status is Status.OK, outcome.summary
    link = outcome.data["cuda:0"]["link"]
    assert (link["gen_now"], link["width_now"], link["source"]) == (5, 16, "sysfs")


def test_an_amd_gpu_on_half_its_lanes_is_named() -> None:
    outcome = run(
        smoke.bandwidth_vs_link, make_evidence(pci_devices_json=_scan(8), smoke_json=_mi300x_record(24.0, 700))
    )
    assert outcome.status is Status.WARNING
    assert "x8 of its x16" in outcome.summary


def test_matmul_is_judged_against_the_mi300x_spec() -> None:
    outcome = run(smoke.matmul_vs_spec, make_evidence(pci_devices_json=_scan(16), smoke_json=_mi300x_record(52.0, 300)))
    assert outcome.data["devices"]["cuda:0"]["spec"] == "AMD Instinct MI300X"
    assert outcome.status is Status.WARNING  # fp16 300 of its 1307 TFLOP/s spec
    assert "of the 1307 of its spec" in outcome.summary


def test_acceleration_is_real_on_a_rocm_device() -> None:
    outcome = run(
        smoke.acceleration_real, make_evidence(pci_devices_json=_scan(16), smoke_json=_mi300x_record(52.0, 700))
    )
    assert outcome.status is Status.OK, outcome.summary
