"""XPU001/XPU002 on real Intel captures (../shared/fixtures/H-intel) and SYNTHETIC sysfs / torch probe records."""

from __future__ import annotations

import copy
import json
import subprocess

from gpudoctor.api import Severity
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor_checks import intel_xpu
from tests.helpers.fixtures import fixture_text
from tests.synthetic import framework_probe_json as synthetic
from tests.synthetic.evidence import judge, messages

H = "H-intel/"
OPENCL_ONLY = H + "sycl-ls-verbose-ci-arc-a750-opencl-only-no-level_zero-intel-llvm-17535.txt"
WINDOWS = H + "sycl-ls-windows-arc-a770-plus-uhd770-old-ext_oneapi-format-llamacpp-5513.txt"
CPU_ONLY = H + "sycl-ls-cpu-only-no-gpu-i7-8750h-stable-diffusion-cpp-330.txt"
A770 = H + "xpu-smi-discovery-d-arc-a770-borderless-new-format-excerpt-llamacpp-pr28725.txt"


def _evidence(**items: tuple[str, str]) -> Evidence:
    evidence = Evidence()
    for name, (kind, text) in items.items():
        evidence.add(EvidenceItem(name=name, kind=kind, text=text))
    return evidence


def _sysfs(*functions: tuple[str, str, str | None]) -> tuple[str, str]:
    """SYNTHETIC scan_pci record of Intel VGA functions: (address, device id, bound driver)."""
    devices = [
        {"address": a, "vendor": "0x8086", "device": d, "class": "0x030000", "driver": drv} for a, d, drv in functions
    ]
    return "json", json.dumps({"readable": True, "devices": devices})


def _lspci(*lines: str) -> tuple[str, str]:
    return "command", "".join(line + "\n" for line in lines)


def _torch(record: dict) -> tuple[str, str]:
    return "json", json.dumps(record)


def test_no_intel_gpu_is_not_applicable() -> None:
    for check in (intel_xpu.intel_driver, intel_xpu.torch_sees_intel_gpu):
        assert judge(check, _evidence()).status.value == "not_applicable"


def test_a750_listed_under_opencl_only_is_a_level_zero_warning() -> None:
    result = judge(intel_xpu.intel_driver, _evidence(**{"sycl-ls.txt": ("command", fixture_text(OPENCL_ONLY))}))
    warnings = [f for f in result.findings if f.severity is Severity.WARNING]
    assert len(warnings) == 1
    assert "A750" in warnings[0].message and "OpenCL only" in warnings[0].message
    assert warnings[0].cause == "intel-level-zero-missing"
    assert warnings[0].fix is not None
    assert warnings[0].fix.commands == ("sudo apt-get install -y libze1 libze-intel-gpu1",)


def test_a770_and_igpu_on_level_zero_is_fine() -> None:
    result = judge(intel_xpu.intel_driver, _evidence(**{"sycl-ls.txt": ("command", fixture_text(WINDOWS))}))
    assert not messages(result, Severity.WARNING) and not messages(result, Severity.PROBLEM)
    assert "Level Zero sees it" in result.summary


def test_cpu_only_sycl_ls_is_a_note() -> None:
    result = judge(intel_xpu.intel_driver, _evidence(**{"sycl-ls.txt": ("command", fixture_text(CPU_ONLY))}))
    assert [f.severity for f in result.findings] == [Severity.INFO]
    assert "no GPU" in result.findings[0].message


def test_synthetic_unbound_arc_a770_on_the_bus_is_a_problem() -> None:
    evidence = _evidence(
        **{
            "pci-devices.json": _sysfs(("0000:03:00.0", "0x56a0", None)),
            "lspci.txt": _lspci("03:00.0 VGA compatible controller: Intel Corporation DG2 [Arc A770]"),  # synthetic
            "proc-modules.txt": ("file", "snd_hda_intel 61440 0 - Live 0x0000000000000000\n"),
        }
    )
    result = judge(intel_xpu.intel_driver, evidence)
    problems = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert len(problems) == 1 and "0000:03:00.0" in problems[0].message
    assert problems[0].fix is not None and problems[0].fix.commands[0] == "sudo modprobe i915"


def test_synthetic_unbound_battlemage_gets_xe() -> None:
    evidence = _evidence(
        **{
            "pci-devices.json": _sysfs(("0000:29:00.0", "0xe20b", None)),
            "lspci.txt": ("command", fixture_text(H + "lspci-s-vvv-arc-b580-battlemage-g21-excerpt-lact-890.txt")),
        }
    )
    result = judge(intel_xpu.intel_driver, evidence)
    problems = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert problems and problems[0].fix is not None and problems[0].fix.commands[0] == "sudo modprobe xe"


def test_synthetic_bound_arc_is_ok_and_an_igpu_alone_is_a_note() -> None:
    bound = _evidence(
        **{
            "pci-devices.json": _sysfs(("0000:03:00.0", "0x56a0", "i915")),
            "lspci.txt": _lspci("03:00.0 VGA compatible controller: Intel Corporation DG2 [Arc A770]"),  # synthetic
        }
    )
    assert judge(intel_xpu.intel_driver, bound).findings == []
    igpu = _evidence(
        **{
            "pci-devices.json": _sysfs(("0000:00:02.0", "0x9bc4", "i915")),
            "lspci.txt": _lspci("00:02.0 VGA compatible controller: Intel Corporation CometLake-H GT2 [UHD Graphics]"),
        }
    )  # synthetic
    result = judge(intel_xpu.intel_driver, igpu)
    assert [f.severity for f in result.findings] == [Severity.INFO]
    assert judge(intel_xpu.torch_sees_intel_gpu, igpu).status.value == "not_applicable"


def test_cuda_torch_on_an_arc_machine_gets_the_xpu_wheel_index() -> None:
    # Synthetic torch probe record (a CUDA wheel) with the real A770 xpu-smi capture.
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record.update(is_available=False, device_count=0, devices=[], xpu_built=False, xpu_available=False)
    evidence = _evidence(**{"xpu-smi.txt": ("command", fixture_text(A770)), "framework-torch.json": _torch(record)})
    result = judge(intel_xpu.torch_sees_intel_gpu, evidence)
    [problem] = [f for f in result.findings if f.severity is Severity.PROBLEM]
    assert problem.cause == "torch-without-xpu"
    assert problem.fix is not None
    [command] = problem.fix.commands
    assert command.endswith(
        "-m pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/xpu"
    )
    assert subprocess.run(["bash", "-n", "-c", command], check=False).returncode == 0


def test_xpu_torch_that_sees_the_gpu_is_ok_and_one_that_does_not_points_at_level_zero() -> None:
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)  # synthetic, turned into an XPU build
    record.update(version="2.8.0+xpu", cuda=None, is_available=False, devices=[], xpu_built=True, xpu_available=True,
                  xpu_devices=[{"index": 0, "name": "Intel(R) Arc(TM) A770 Graphics"}])  # fmt: skip
    smi = ("command", fixture_text(A770))
    assert (
        judge(
            intel_xpu.torch_sees_intel_gpu, _evidence(**{"xpu-smi.txt": smi, "framework-torch.json": _torch(record)})
        ).findings
        == []
    )
    record.update(xpu_available=False, xpu_devices=[])
    result = judge(
        intel_xpu.torch_sees_intel_gpu, _evidence(**{"xpu-smi.txt": smi, "framework-torch.json": _torch(record)})
    )
    assert [f.cause for f in result.findings] == ["intel-level-zero-missing"]


def test_kb_xpu_wheel_index_and_validated_platforms_cite_their_sources() -> None:
    from gpudoctor.kb import intel_xpu as kb

    assert kb.torch_xpu_index() == "https://download.pytorch.org/whl/xpu"
    assert kb.torch_xpu_index("nightly") == "https://download.pytorch.org/whl/nightly/xpu"
    assert kb.torch_xpu_native_since() == "2.5"
    assert kb.level_zero_packages() == ("libze1", "libze-intel-gpu1")
    keys = set(kb.source_keys())
    rows = kb.validated_platforms()
    assert any("Arc B-Series" in r.gpus and "Ubuntu 24.04" in r.os for r in rows)
    assert all(r.sources and set(r.sources) <= keys for r in rows)
