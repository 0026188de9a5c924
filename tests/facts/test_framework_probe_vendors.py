"""The torch and TensorFlow probe records of AMD ROCm, Intel XPU and Apple machines, read into facts.

No such machine is here, so the GPU-side records are SYNTHETIC (built below from the synthetic CUDA record, with
values shaped as the probes write them); the real CPU-side records recorded on this machine, which predate the
vendor keys, check that old data still parses.  The real probes run in ``tests/probes/test_torch_probe_vendors.py``.
"""

from __future__ import annotations

import copy
import json
import pathlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.framework_model import FrameworkDevice, PythonTarget, TensorflowFacts, TorchFacts, probe_file_name
from gpudoctor.facts.framework_probe import parse_tensorflow_probe, parse_torch_probe, with_macos_target
from tests.helpers.strategies import json_like, mutated_json
from tests.synthetic import framework_probe_json as synthetic

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian"
GFX90A = "gfx90a:sramecc+:xnack-"


def _item(framework: str, record: Any) -> EvidenceItem:
    return EvidenceItem(name=probe_file_name(framework), kind="json", text=json.dumps(record))


def _synthetic_rocm_torch() -> dict[str, Any]:
    # SYNTHETIC: a torch ROCm 6.2 wheel on one MI250X GCD (values shaped as the probe writes them).
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record.update(
        version="2.5.1+rocm6.2",
        cuda=None,
        hip="6.2.41133-dd7f95766",
        cudnn=None,
        nccl=None,
        arch_list=["gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"],
        driver_cuda_version=None,
        devices=[
            {
                "index": 0,
                "name": "AMD Instinct MI250X/MI250",
                "capability": [9, 0],
                "total_memory": 68_702_699_520,
                "multi_processor_count": 110,
                "arch_name": GFX90A,
            }
        ],
        mps_built=False,
        mps_available=False,
        xpu_built=False,
        xpu_available=False,
        xpu_device_count=0,
        xpu_devices=[],
    )
    return record


def test_synthetic_rocm_torch_keeps_the_gfx_target() -> None:
    facts = parse_torch_probe(_item("torch", _synthetic_rocm_torch()))
    assert facts.hip == "6.2.41133-dd7f95766" and facts.cuda is None and facts.cpu_only is False
    assert facts.arch_list[:2] == ["gfx900", "gfx906"] and facts.arch_list_known is True
    assert [(d.name, d.arch_name, d.platform) for d in facts.devices] == [("AMD Instinct MI250X/MI250", GFX90A, "rocm")]
    assert (facts.mps_built, facts.mps_available, facts.xpu_built, facts.xpu_available) == (False, False, False, False)
    assert facts.xpu_devices == []


def test_synthetic_xpu_torch_lists_xpu_devices() -> None:
    # SYNTHETIC: a "+xpu" wheel with one Arc A770 visible to torch.xpu.
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record.update(
        version="2.8.0+xpu",
        cuda=None,
        is_available=False,
        device_count=0,
        devices=[],
        xpu_built=True,
        xpu_available=True,
        xpu_device_count=1,
        xpu_devices=[{"index": 0, "name": "Intel(R) Arc(TM) A770 Graphics", "total_memory": 16_225_243_136}],
    )
    facts = parse_torch_probe(_item("torch", record))
    assert (facts.xpu_built, facts.xpu_available) == (True, True)
    assert facts.xpu_devices == [
        FrameworkDevice(index=0, name="Intel(R) Arc(TM) A770 Graphics", memory_total_mib=15473, platform="xpu")
    ]
    assert facts.devices == []


def test_synthetic_rosetta_torch_on_macos() -> None:
    # SYNTHETIC: an x86_64 Python under Rosetta on an Apple-silicon Mac, the python record as _probe_common writes it.
    record = copy.deepcopy(synthetic.SYNTHETIC_TORCH_CUDA_OK)
    record["python"].update(platform="darwin", machine="x86_64", mac_version="10.16", translated=True)
    record.update(version="2.2.2", cuda=None, is_available=False, devices=[], mps_built=True, mps_available=False)
    facts = parse_torch_probe(_item("torch", record))
    assert facts.python is not None
    assert (facts.python.os, facts.python.machine) == ("macos", "x86_64")
    assert (facts.python.mac_version, facts.python.translated) == ("10.16", True)
    assert (facts.mps_built, facts.mps_available) == (True, False)


def test_synthetic_tensorflow_rocm_and_metal() -> None:
    # SYNTHETIC: a tensorflow-rocm build (build_info as TF exposes it) and, separately, tensorflow-metal on a Mac.
    record = copy.deepcopy(synthetic.SYNTHETIC_TENSORFLOW_GPU_OK)
    record.update(
        built_with_cuda=False,
        built_with_rocm=True,
        build_info={"is_cuda_build": False, "is_rocm_build": True, "rocm_version": "6.2.0"},
        metal_plugin=None,
    )
    facts = parse_tensorflow_probe(_item("tensorflow", record))
    assert (facts.rocm_build, facts.build_rocm, facts.built_with_cuda, facts.metal_plugin) == (
        True,
        "6.2.0",
        False,
        None,
    )
    del record["built_with_rocm"]  # older probe records: build_info alone still says it
    assert parse_tensorflow_probe(_item("tensorflow", record)).rocm_build is True
    record.update(build_info={"is_cuda_build": False, "is_rocm_build": False}, metal_plugin="1.1.0")
    facts = parse_tensorflow_probe(_item("tensorflow", record))
    assert (facts.rocm_build, facts.build_rocm, facts.metal_plugin) == (False, None, "1.1.0")


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_recorded_records_without_the_vendor_keys_still_parse(framework: str) -> None:
    path = RECORDED / probe_file_name(framework)
    if not path.exists():
        pytest.skip(f"{path.name} not recorded")
    facts = (parse_torch_probe if framework == "torch" else parse_tensorflow_probe)(
        EvidenceItem(name=path.name, kind="json", text=path.read_text(encoding="utf-8"))
    )
    assert facts.run.status == "ok" and facts.python is not None
    assert facts.python.mac_version is None and facts.python.translated is None
    if isinstance(facts, TorchFacts):
        assert all(d.arch_name is None for d in facts.devices) and facts.xpu_devices == []
    else:
        # The recorded build_info of tensorflow-cpu says is_rocm_build False.
        assert facts.rocm_build is False and facts.metal_plugin is None


def test_with_macos_target_keeps_what_is_there() -> None:
    base = PythonTarget(version="3.12.3", platform="darwin")
    assert with_macos_target(base, {"python": {"platform": "linux"}}) is base
    assert with_macos_target(None, {"python": {"translated": False}}) == PythonTarget(translated=False)
    assert with_macos_target(base, "garbage") is base
    assert with_macos_target(base, {"python": {"mac_version": 14, "translated": "yes"}}) is base  # wrong types


# --- garbage -----------------------------------------------------------------------------------------------------

_VENDOR_KEYS = ("mps_built", "mps_available", "xpu_built", "xpu_available", "xpu_device_count", "xpu_devices")


@given(st.data())
def test_torch_vendor_keys_of_any_type_never_raise(data: st.DataObject) -> None:
    record = _synthetic_rocm_torch()
    for key in (*_VENDOR_KEYS, "devices"):
        record[key] = data.draw(json_like())
    record["python"] = data.draw(st.one_of(json_like(), st.fixed_dictionaries({"mac_version": json_like()})))
    facts = parse_torch_probe(_item("torch", record))
    assert isinstance(facts, TorchFacts)
    assert facts.mps_built in (True, False, None) and all(isinstance(d, FrameworkDevice) for d in facts.xpu_devices)


@given(st.data())
def test_mutated_vendor_records_never_raise(data: st.DataObject) -> None:
    torch_record = data.draw(mutated_json(_synthetic_rocm_torch()))
    assert isinstance(parse_torch_probe(_item("torch", torch_record)), TorchFacts)
    tf_record = copy.deepcopy(synthetic.SYNTHETIC_TENSORFLOW_GPU_OK)
    tf_record.update(built_with_rocm=data.draw(json_like()), metal_plugin=data.draw(json_like()))
    tf_record["build_info"] = data.draw(st.one_of(json_like(), st.fixed_dictionaries({"rocm_version": json_like()})))
    assert isinstance(parse_tensorflow_probe(_item("tensorflow", tf_record)), TensorflowFacts)
