"""How a smoke run's figures are reported: median with spread, repetitions and warm-up (JSON too), the CPU
baseline's thread count and the share of the CPU it got, the text table's title and columns.

The records are SYNTHETIC (``tests/synthetic/smoke_json.py`` plus the measurement fields the probes add,
``gpudoctor/facts/smoke_model.py``), except the real CPU record of ``tests/recorded/`` where named.
"""

from __future__ import annotations

import copy
import io

from gpudoctor.evidence.model import Evidence
from gpudoctor.facts.facts import Facts
from gpudoctor.render.progress import count_text, smoke_progress
from gpudoctor.render.smoke_table import render_smoke_table
from gpudoctor.results import Status
from gpudoctor_checks import smoke
from tests.synthetic import smoke_json as synthetic
from tests.synthetic.evidence import NO_GPU_SCAN, make_evidence, run


def _measured(record: dict, spread: float, repeats: int, warmup: int, **extra: object) -> dict:
    record.update(spread=spread, repeats=repeats, warmup=warmup, warmup_settled=True, ended_by="target", **extra)
    return record


def _synthetic_cpu_only(cpu_share: float) -> dict:
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX)
    for device in record["devices"]:
        if device["id"] == "cpu":
            device["threads"] = 2
    for row in record["matmul"]:
        if row["device"] == "cpu" and not row.get("skipped"):
            _measured(row, 0.021, 9, 3, threads=2, cpu_share=cpu_share)
    for row in record["cnn"]:
        if row["device"] == "cpu":
            _measured(row, 0.034, 5, 2, threads=2, cpu_share=cpu_share)
    return record


def test_the_json_data_carries_every_figure_with_its_spread_repetitions_and_warm_up():
    record = _synthetic_cpu_only(cpu_share=0.97)
    outcome = run(smoke.acceleration_real, make_evidence(smoke_json=record, pci_devices_json=NO_GPU_SCAN))
    assert outcome.status is Status.OK
    rows = outcome.data["measurements"]["matmul"]
    fp32 = next(r for r in rows if r["device"] == "cpu" and r["dtype"] == "fp32")
    assert (fp32["spread"], fp32["repeats"], fp32["warmup"], fp32["threads"]) == (0.021, 9, 3, 2)
    assert {r["dtype"] for r in rows} >= {"fp32"}  # every dtype listed, measured or skipped with its reason
    cnn = outcome.data["measurements"]["cnn"][0]
    assert (cnn["spread"], cnn["repeats"], cnn["warmup"]) == (0.034, 5, 2)
    assert outcome.data["cpu_threads"] == 2 and outcome.data["cpu_matmul_spread"] == 0.021
    assert "on 2 threads" in outcome.summary and "busy" not in outcome.summary


def test_a_cpu_baseline_measured_on_a_busy_machine_says_so():
    record = _synthetic_cpu_only(cpu_share=0.31)
    outcome = run(smoke.acceleration_real, make_evidence(smoke_json=record, pci_devices_json=NO_GPU_SCAN))
    assert "got only 31 % of its threads' CPU time" in outcome.summary
    assert outcome.data["cpu_share"] == 0.31


def _facts(record: dict) -> Facts:
    evidence: Evidence = make_evidence(smoke_json=record, pci_devices_json=NO_GPU_SCAN)
    return Facts(evidence)


def test_the_table_shows_spread_repetitions_and_the_cpu_threads():
    text = render_smoke_table(_facts(_synthetic_cpu_only(cpu_share=0.97)).smoke)
    assert "spread" in text and "±2.1%" in text and "9 (+3)" in text
    assert "(2 threads)" in text  # the CPU baseline's device line states its threads
    assert "(p75 - p25) / median" in text


def test_the_title_has_no_empty_version_when_the_framework_is_missing():
    record = copy.deepcopy(synthetic.SYNTHETIC_SMOKE_CPU_ONLY_ON_GPU_BOX)
    record.update(framework_version=None, installed=False, import_ok=False, matmul=[], cnn=[], devices=[])
    record["errors"] = {"import": "torch is not installed in /usr/bin/python3"}
    text = render_smoke_table(_facts(record).smoke)
    assert text.startswith("Smoke test (torch, quick mode,")
    assert "torch ," not in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_names_the_phase_and_no_count_while_the_framework_imports():
    assert count_text({"stage": "import", "detail": "torch", "done": None, "total": None}) == ""
    assert count_text({"stage": "matmul", "detail": "cpu fp32", "done": 3, "total": 12}) == "3/12"
    stream = _Terminal()
    with smoke_progress(True, stream) as update:
        update({"stage": "import", "detail": "torch", "done": None, "total": None})
    drawn = stream.getvalue()
    assert "importing the framework torch" in drawn
    assert "None" not in drawn
