"""A node report boiled down to a NodeSummary: from the real H100 report, and from any garbage."""

from __future__ import annotations

import json
import pathlib

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.fleet.report_config import pcie_summary
from gpudoctor.fleet.report_model import NodeSummary, Unreadable
from gpudoctor.fleet.report_read import read_report
from gpudoctor.fleet.report_summary import summarize
from tests.synthetic.fleet_reports import real_h100_report, synthetic_node_report

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=40,
)
REPORT_KEYS = st.sampled_from(["tool", "schema_version", "machine", "summary", "results", "sections"])


def test_the_real_h100_report_summarised() -> None:
    summary = summarize("gpu01", "gpu01.json", real_h100_report())
    assert isinstance(summary, NodeSummary)
    assert (summary.node, summary.exit_code, summary.worst) == ("gpu01", 0, "ok")
    assert summary.hardware == "1× NVIDIA H100 80GB HBM3"
    assert summary.areas["driver"] == "ok" and "rocm" not in summary.areas  # n/a areas left out
    assert summary.problems == []
    assert summary.config["driver"] == "580.159.04"
    assert summary.config["torch"] == "2.11.0+cu130 (CUDA 13.0)"
    assert summary.config["pcie"] == "1× Gen5 x16"
    figures = {m.metric: m for m in summary.measurements}
    assert round(figures["matmul bf16"].value, 1) == 701.8 and figures["matmul bf16"].unit == "TFLOP/s"
    assert figures["matmul bf16"].device == "cuda:0"
    assert {"CNN training fp32", "copy h2d pinned", "copy d2d"} <= set(figures)
    assert not any("cpu" in m.metric for m in summary.measurements)


def test_a_degraded_link_on_one_gpu_is_named() -> None:
    report = synthetic_node_report(real_h100_report(), gpu_count=8, pcie_width=8)
    summary = summarize("n", "n.json", report)
    assert isinstance(summary, NodeSummary)
    assert summary.config["pcie"] == "GPU0-6: Gen5 x16; GPU7: Gen5 x8 (max Gen5 x16)"
    assert summary.hardware == "8× NVIDIA H100 80GB HBM3"


def test_pcie_summary_of_garbage_is_none() -> None:
    assert pcie_summary(None) is None
    assert pcie_summary({"gpus": [{"pcie": {"gen_current": "5"}}, 3]}) is None


def test_older_and_foreign_json_are_unreadable_with_why() -> None:
    old = {**real_h100_report(), "schema_version": 2}
    why = summarize("n", "n.json", old)
    assert isinstance(why, Unreadable) and "schema_version 2" in why.why and "older" in why.why
    assert "not a gpudoctor report" in summarize("n", "n.json", {"results": []}).why  # type: ignore[union-attr]
    assert isinstance(summarize("n", "n.json", [1, 2]), Unreadable)


def test_files_that_are_not_reports(tmp_path: pathlib.Path) -> None:
    cases = {
        "text.json": b"Failed to initialize NVML",
        "empty.json": b"",
        "binary.json": b"\xff\xfe\x00garbage",
        "deep.json": b"[" * 100000 + b"]" * 100000,
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        read = read_report(str(tmp_path / name))
        assert isinstance(read, Unreadable), name
        assert read.source.endswith(name) and read.why


@given(JSON_VALUES)
def test_summarize_takes_any_json_value(value: object) -> None:
    assert isinstance(summarize("n", "n.json", value), (NodeSummary, Unreadable))


@given(st.dictionaries(REPORT_KEYS, JSON_VALUES, max_size=6), st.lists(JSON_VALUES, max_size=4))
def test_summarize_takes_report_shaped_garbage(fields: dict[str, object], results: list[object]) -> None:
    value = {**fields, "tool": {"name": "gpudoctor"}, "schema_version": 3, "results": results}
    summary = summarize("n", "n.json", value)
    assert isinstance(summary, NodeSummary)
    json.dumps(summary.config)  # plain strings only


@given(JSON_VALUES)
def test_summarize_takes_garbage_inside_a_real_report(value: object) -> None:
    report = real_h100_report()
    report["machine"]["gpus"] = value
    report["sections"]["topology"] = value
    for result in report["results"]:
        if result["code"] in ("SMOKE001", "TORCH001", "FW001"):
            result["data"] = {"measurements": value, "frameworks": value, "version": value}
    assert isinstance(summarize("n", "n.json", report), NodeSummary)


@given(st.binary(max_size=2000) | st.text(max_size=2000).map(lambda t: ("x\n{" + t).encode("utf-8", "replace")))
def test_a_report_is_looked_for_in_any_log_without_raising(raw: bytes) -> None:
    from gpudoctor.fleet.report_read import last_report_in_log

    found = last_report_in_log(raw)
    assert found is None or (isinstance(found, dict) and "schema_version" in found)
