"""The smoke-probe parser: real and SYNTHETIC records into SmokeFacts, run statuses, and garbage that never raises.

The real CPU record is ``tests/recorded/cpu-container-debian/smoke-torch.json`` (recorded by
``gpudoctor smoke`` on this CPU machine); GPU-side records are SYNTHETIC
(``tests/synthetic/smoke_json.py``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pathlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.smoke import parse_smoke
from gpudoctor.facts.smoke_model import SMOKE_FILE, SmokeFacts
from tests.helpers.strategies import any_code_points, json_like, mutated_json
from tests.synthetic import smoke_json as synthetic

RECORDED_DIR = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "cpu-container-debian"
RECORDED = RECORDED_DIR / "smoke-torch.json"
STATUSES = ("ok", "not_installed", "import_error", "crashed", "timed_out")


def _item(record: Any = None, text: str | None = None, **fields: Any) -> EvidenceItem:
    if text is None and record is not None:
        text = json.dumps(record)
    return EvidenceItem(name=SMOKE_FILE, kind="json", text=text, **fields)


def _recorded(path: pathlib.Path) -> str:
    if not path.is_file():
        pytest.skip(f"the real CPU smoke record {path} has not been recorded yet")
    return path.read_text(encoding="utf-8")


# --- real records ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_real_cpu_record_reads_every_workload(framework):
    path = RECORDED if framework == "torch" else RECORDED_DIR / f"smoke-{framework}.json"
    text = _recorded(path)
    record = json.loads(text)
    facts = parse_smoke(_item(text=text))
    assert facts.run.status == "ok"
    assert facts.framework == framework and facts.framework_version == record["framework_version"]
    assert [d.id for d in facts.devices] == [d["id"] for d in record["devices"]]
    assert facts.accelerators == []  # a CPU machine
    measured = [r for r in record["matmul"] if isinstance(r.get("tflops"), float)]
    assert [r.tflops for r in facts.matmul if r.tflops is not None] == [r["tflops"] for r in measured]
    assert len(facts.cnn) == len(record["cnn"])
    for row, raw in zip(facts.cnn, record["cnn"]):
        assert row.loss_decreased == raw["loss_decreased"] and row.steps_per_s == raw["steps_per_s"]
    assert facts.python is not None and facts.python.executable == record["python"]["executable"]
    if record.get("allreduce"):
        assert facts.allreduce is not None and facts.allreduce.backend == record["allreduce"]["backend"]


def test_facts_reads_smoke_json_once():
    evidence = Evidence()
    facts = Facts(evidence)
    assert facts.smoke.run.status == "not_collected"
    evidence = Evidence()
    evidence.add(_item(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY))
    facts = Facts(evidence)
    assert facts.smoke is facts.smoke
    assert [d.id for d in facts.smoke.accelerators] == ["cuda:0"]


# --- synthetic GPU record --------------------------------------------------------------------------------------


def test_synthetic_h100_record():
    facts = parse_smoke(_item(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY))
    assert facts.run.status == "ok" and facts.run.error is None
    gpu = facts.accelerators[0]
    assert (gpu.id, gpu.name, gpu.capability, gpu.pci_bus_id) == (
        "cuda:0",
        "NVIDIA H100 80GB HBM3",
        "9.0",
        "0000:18:00.0",
    )
    bf16 = next(r for r in facts.matmul if r.device == "cuda:0" and r.dtype == "bf16")
    assert bf16.tflops == 733.0 and bf16.n == 8192
    skipped = next(r for r in facts.matmul if r.device == "cpu" and r.dtype == "bf16")
    assert skipped.tflops is None and skipped.skipped == "no fast bf16 on this CPU"
    pinned = [r for r in facts.bandwidth if r.memory == "pinned"]
    assert {(r.direction, r.gbps) for r in pinned} == {("h2d", 53.1), ("d2h", 52.4)}
    assert facts.allreduce is None and facts.p2p == []


def test_multi_gpu_record_keeps_pairs_and_allreduce():
    record = synthetic.eight_h100(
        [synthetic.p2p(0, 1, True, 372.0), synthetic.p2p(1, 0, False, None)], synthetic.nccl(362.0)
    )
    facts = parse_smoke(_item(record))
    assert len(facts.accelerators) == 8
    assert [(p.src, p.dst, p.access, p.gbps) for p in facts.p2p] == [
        ("cuda:0", "cuda:1", True, 372.0),
        ("cuda:1", "cuda:0", False, None),
    ]
    assert facts.allreduce.backend == "nccl" and facts.allreduce.busbw_gbps == 362.0


# --- run status ------------------------------------------------------------------------------------------------


def test_no_item_is_not_collected():
    facts = parse_smoke(None)
    assert facts.run.status == "not_collected" and facts.devices == []


def test_interrupted_run_keeps_what_arrived():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_SLOW)
    record["cnn"] = []
    item = _item(record, error="interrupted: the torch smoke run was stopped by Ctrl-C; what finished is kept")
    facts = parse_smoke(item)
    assert facts.run.status == "ok"
    assert facts.run.error.startswith("interrupted")
    assert facts.stopped_by == "interrupt"
    assert [r.tflops for r in facts.matmul if r.device == "cuda:0"] == [20.1, 297.0]


def test_interrupted_before_any_result_is_a_crash_that_says_so():
    item = _item(text="", error="interrupted: the torch smoke run was stopped by Ctrl-C before it printed a result")
    facts = parse_smoke(item)
    assert facts.run.status == "crashed" and "interrupted" in facts.run.error
    assert facts.matmul == []


def test_timed_out_run_keeps_the_record_it_printed():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    item = _item(record, timed_out=True, error="the torch smoke probe did not finish within 45 s and was stopped")
    facts = parse_smoke(item)
    assert facts.run.status == "timed_out" and "did not finish" in facts.run.error
    assert facts.stopped_by == "timeout"
    assert len(facts.matmul) == len(record["matmul"])


def test_timed_out_without_output():
    facts = parse_smoke(_item(text=None, timed_out=True, error="stopped", stderr="loading torch\n"))
    assert facts.run.status == "timed_out" and facts.run.output_tail == "loading torch"
    assert facts.stopped_by == "timeout" and facts.matmul == []


def test_not_installed_and_import_error_follow_the_framework_probes():
    base = {"probe": "smoke", "probe_version": 1, "python": synthetic.SYNTHETIC_PYTHON, "framework": "torch"}
    facts = parse_smoke(_item(dict(base, installed=False, errors={"import": "torch is not installed"})))
    assert facts.run.status == "not_installed"
    assert facts.errors == {"import": "torch is not installed"}
    failed = dict(
        base,
        installed=True,
        import_ok=False,
        import_error={
            "type": "ImportError",
            "message": "libcudnn.so.9: cannot open shared object file",
            "traceback_tail": "Traceback ...\nImportError: libcudnn.so.9",
        },
    )
    facts = parse_smoke(_item(failed))
    assert facts.run.status == "import_error"
    assert facts.run.error == "ImportError: libcudnn.so.9: cannot open shared object file"


def test_probe_error_keeps_results_and_says_why():
    record = dict(
        copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY),
        probe_error="Traceback (most recent call last):\n  ...\nRuntimeError: CUDA error: misaligned address",
    )
    facts = parse_smoke(_item(record))
    assert facts.run.status == "ok"
    assert facts.run.error == "the probe failed: RuntimeError: CUDA error: misaligned address"
    assert facts.matmul


def test_banner_before_the_record_is_skipped():
    text = "Warning: something printed to stdout\n" + json.dumps(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY) + "\n"
    assert parse_smoke(_item(text=text)).run.status == "ok"


@pytest.mark.parametrize(
    "text", ["", "not json", "[1, 2]", "null", '{"probe": "torch", "import_ok": true}', '{"unrelated": 1}']
)
def test_no_smoke_record_is_a_crash(text):
    facts = parse_smoke(_item(text=text, exit_code=1))
    assert facts.run.status == "crashed" and facts.run.error
    assert facts.devices == [] and facts.matmul == []


# --- wrong types -----------------------------------------------------------------------------------------------


def test_values_of_the_wrong_type_are_unknown_or_skipped():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY)
    record["devices"].append({"id": 7, "kind": "cuda"})  # no usable id: dropped
    record["devices"].append("cuda:9")  # not an object: dropped
    record["devices"].append(dict(record["devices"][1]))  # the same id twice: the first wins
    record["matmul"][2].update(tflops="fast", n=True, seconds=-1.0)
    record["matmul"].append({"device": "cuda:0"})  # no dtype: dropped
    record["cnn"][1].update(loss_last=float("nan"), loss_decreased="yes", steps_per_s=float("inf"))
    record["bandwidth"][1].update(gbps=-3.0, memory=None)
    record["budget_s"] = "25"
    record["stopped_by"] = "cosmic rays"
    record["errors"] = {"cuda": 12, "nccl": "NCCL not found", 3: "x"}
    record["allreduce"] = ["not", "an", "object"]
    facts = parse_smoke(_item(text=json.dumps(record)))  # NaN/Infinity are written as JSON's extensions
    assert [d.id for d in facts.devices] == ["cpu", "cuda:0"]
    row = facts.matmul[2]
    assert (row.tflops, row.n, row.seconds) == (None, None, None)
    assert len(facts.matmul) == len(synthetic.SYNTHETIC_SMOKE_H100_HEALTHY["matmul"])
    cnn = facts.cnn[1]
    assert cnn.loss_last is None and cnn.loss_decreased is None and cnn.steps_per_s is None
    assert facts.bandwidth[1].gbps is None and facts.bandwidth[1].memory == "unknown"
    assert facts.budget_s is None and facts.stopped_by is None
    assert facts.errors == {"nccl": "NCCL not found", "3": "x"}  # JSON keys are text
    assert facts.allreduce is None


# --- garbage never raises --------------------------------------------------------------------------------------
item_fields = st.fixed_dictionaries(
    {
        "exit_code": st.none() | st.integers(-15, 255),
        "stderr": st.text(max_size=200),
        "timed_out": st.booleans(),
        "duration_s": st.none() | st.floats(allow_nan=True),
        "error": st.none() | st.text(max_size=40),
    }
)


def _well_typed(facts: SmokeFacts) -> None:
    assert isinstance(facts, SmokeFacts)
    assert facts.run.status in STATUSES
    for result in (
        facts.matmul + facts.cnn + facts.bandwidth + facts.p2p + ([facts.allreduce] if facts.allreduce else [])
    ):
        for field in dataclasses.fields(result):
            value = getattr(result, field.name)
            if isinstance(value, float):
                assert (math.isfinite(value) and value >= 0) or field.name.startswith("loss")
            assert not isinstance(value, (dict, list))
    for device in facts.devices:
        assert isinstance(device.id, str) and isinstance(device.kind, str)
        assert device.capability is None or device.capability.count(".") == 1


@given(text=st.none() | any_code_points(), fields=item_fields)
def test_any_text_gives_facts(text: str | None, fields: dict[str, Any]) -> None:
    _well_typed(parse_smoke(EvidenceItem(name=SMOKE_FILE, kind="json", text=text, **fields)))


@given(value=json_like(), fields=item_fields)
def test_any_json_gives_facts(value: object, fields: dict[str, Any]) -> None:
    _well_typed(parse_smoke(_item(text=json.dumps(value), **fields)))


@pytest.mark.parametrize(
    "name",
    ["SYNTHETIC_SMOKE_H100_HEALTHY", "SYNTHETIC_SMOKE_H100_SLOW", "SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX", "eight_h100"],
)
@given(data=st.data())
def test_mutated_records_never_raise(name: str, data: st.DataObject) -> None:
    if name == "eight_h100":
        record = synthetic.eight_h100([synthetic.p2p(0, 1, True, 372.0)], synthetic.nccl(362.0))
    else:
        record = copy.deepcopy(getattr(synthetic, name))
    value = data.draw(mutated_json(record))
    _well_typed(parse_smoke(_item(text=json.dumps(value), timed_out=data.draw(st.booleans()))))
