"""The torch and TensorFlow probes' vendor keys (ROCm, MPS, XPU, Rosetta, tensorflow-metal).

Real: the probes run in the framework venv (torch 2.13.0+cpu, tensorflow-cpu) on this Linux CPU machine, whose
honest answers are "no MPS, no XPU, no HIP".  SYNTHETIC: hand-made module objects standing in for torch builds this
machine cannot have (ROCm with a device, XPU with a device, an old torch with neither backend), run through the
probe's own ``body`` so that every attribute access is exercised.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest

from gpudoctor.evidence.framework_probes import run_probe
from gpudoctor.facts.framework_probe import parse_tensorflow_probe, parse_torch_probe
from gpudoctor.probes import _probe_common as common
from gpudoctor.probes import torch_probe

VENDOR_KEYS = {"mps_built", "mps_available", "xpu_built", "xpu_available", "xpu_device_count", "xpu_devices"}


def test_real_torch_cpu_says_no_other_backend(framework_python: str) -> None:
    item = run_probe("torch", framework_python, 180.0)
    record = item.json()
    assert isinstance(record, dict) and record.get("import_ok") is True, item.stderr[-2000:]
    assert set(record) >= VENDOR_KEYS
    assert record["hip"] is None and record["devices"] == []
    assert record["mps_built"] is False and record["mps_available"] is False  # torch.backends.mps on Linux
    assert record["xpu_built"] is False and record["xpu_available"] is False
    assert record["xpu_device_count"] == 0 and record["xpu_devices"] == []
    assert record["probe_errors"] == {}
    assert "mac_version" not in record["python"] and "translated" not in record["python"]  # Linux: not asked
    facts = parse_torch_probe(item)
    assert (facts.mps_built, facts.mps_available, facts.xpu_built, facts.xpu_available) == (False, False, False, False)
    assert facts.xpu_devices == [] and facts.hip is None and facts.cpu_only is True
    assert facts.python is not None and facts.python.translated is None and facts.python.mac_version is None


def test_real_tensorflow_cpu_is_no_rocm_build_and_has_no_metal(framework_python: str) -> None:
    item = run_probe("tensorflow", framework_python, 240.0)
    record = item.json()
    assert isinstance(record, dict) and record.get("import_ok") is True, item.stderr[-2000:]
    assert record["built_with_rocm"] is False and record["metal_plugin"] is None
    assert record["build_info"]["is_rocm_build"] is False
    facts = parse_tensorflow_probe(item)
    assert (facts.rocm_build, facts.build_rocm, facts.metal_plugin) == (False, None, None)


# --- SYNTHETIC torch modules through the probe's body --------------------------------------------------------------


def _props(**values: Any) -> SimpleNamespace:
    return SimpleNamespace(**values)


def _synthetic_torch(
    hip: str | None, cuda_devices: list[SimpleNamespace], xpu: Any = None, mps: Any = None
) -> SimpleNamespace:
    cuda = SimpleNamespace(
        is_available=lambda: bool(cuda_devices),
        device_count=lambda: len(cuda_devices),
        get_device_properties=lambda index: cuda_devices[index],
        init=lambda: None,
    )
    backends = SimpleNamespace(cudnn=SimpleNamespace(version=lambda: None))
    if mps is not None:
        backends.mps = mps
    torch = SimpleNamespace(
        __version__="0.0.0+synthetic",
        version=SimpleNamespace(cuda=None, hip=hip, debug=False),
        backends=backends,
        cuda=cuda,
        _C=SimpleNamespace(_cuda_getArchFlags=lambda: "gfx90a gfx942" if hip else ""),
    )
    if xpu is not None:
        torch.xpu = xpu
    return torch


def _run_body(torch: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    # Nothing may reach a real torch: the fallback import of torch.backends.mps must fail here.
    monkeypatch.setitem(sys.modules, "torch", None)
    probe = common.Probe("torch", "torch", candidates=("torch",))
    torch_probe.body(torch, probe)
    return probe.doc


def test_synthetic_rocm_device_reports_its_gcn_arch_name(monkeypatch: pytest.MonkeyPatch) -> None:
    device = _props(
        name="AMD Instinct MI250X/MI250", major=9, minor=0, total_memory=1 << 36, gcnArchName="gfx90a:sramecc+:xnack-"
    )
    doc = _run_body(_synthetic_torch("6.2.41133-dd7f95766", [device]), monkeypatch)
    assert doc["arch_list"] == ["gfx90a", "gfx942"]
    assert doc["devices"][0]["arch_name"] == "gfx90a:sramecc+:xnack-"
    assert doc["devices"][0]["capability"] == [9, 0]


def test_synthetic_cuda_device_has_no_arch_name(monkeypatch: pytest.MonkeyPatch) -> None:
    device = _props(name="NVIDIA A100", major=8, minor=0, total_memory=1 << 35, gcnArchName="should not be read")
    torch = _synthetic_torch(None, [device])
    torch.version.cuda = "12.6"
    doc = _run_body(torch, monkeypatch)
    assert doc["devices"][0]["arch_name"] is None


def test_synthetic_xpu_and_mps(monkeypatch: pytest.MonkeyPatch) -> None:
    xpu = SimpleNamespace(
        _is_compiled=lambda: True,
        is_available=lambda: True,
        device_count=lambda: 1,
        get_device_properties=lambda index: _props(name="Intel(R) Arc(TM) A770 Graphics", total_memory=1 << 34),
    )
    mps = SimpleNamespace(is_built=lambda: False, is_available=lambda: False)
    doc = _run_body(_synthetic_torch(None, [], xpu=xpu, mps=mps), monkeypatch)
    assert (doc["xpu_built"], doc["xpu_available"], doc["xpu_device_count"]) == (True, True, 1)
    assert doc["xpu_devices"] == [
        {"index": 0, "name": "Intel(R) Arc(TM) A770 Graphics", "total_memory": 1 << 34, "driver_version": None}
    ]
    assert (doc["mps_built"], doc["mps_available"]) == (False, False)


def test_synthetic_old_torch_without_either_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _run_body(_synthetic_torch(None, []), monkeypatch)
    assert {key: doc[key] for key in VENDOR_KEYS} == {
        "mps_built": None,
        "mps_available": None,
        "xpu_built": None,
        "xpu_available": None,
        "xpu_device_count": None,
        "xpu_devices": [],
    }


def test_synthetic_backends_that_raise_are_errors_not_crashes(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> bool:
        raise RuntimeError("synthetic failure")

    xpu = SimpleNamespace(_is_compiled=boom, is_available=boom, device_count=boom)
    mps = SimpleNamespace(is_built=boom, is_available=boom)
    probe_doc = _run_body(_synthetic_torch(None, [], xpu=xpu, mps=mps), monkeypatch)
    assert probe_doc["xpu_available"] is None and probe_doc["mps_built"] is None and probe_doc["xpu_devices"] == []


def test_python_info_off_macos_has_no_macos_keys() -> None:
    info = common.python_info()
    if sys.platform == "darwin":
        assert "mac_version" in info and info["translated"] in (True, False, None)
    else:
        assert "mac_version" not in info and "translated" not in info


def test_python_info_pretending_darwin_is_guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    # SYNTHETIC: sys.platform forced to "darwin" on Linux: mac_ver() answers "" and glibc has no sysctlbyname,
    # so both keys are present and unknown instead of the probe dying.
    monkeypatch.setattr(sys, "platform", "darwin")
    info = common.python_info()
    assert info["mac_version"] is None and info["translated"] is None
