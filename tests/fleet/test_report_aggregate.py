"""``fleet report``'s aggregate over SYNTHETIC fleets derived from the real H100 report: drift, outliers,
hardware groups, problem groups, missing nodes, duplicates."""

from __future__ import annotations

import json
import pathlib

import pytest

from gpudoctor.errors import UsageError
from gpudoctor.fleet.report_aggregate import aggregate, build_report
from gpudoctor.fleet.report_model import NodeProblem, NodeSummary
from tests.synthetic.fleet_reports import write_synthetic_fleet


def test_synthetic_driver_changed_on_one_of_twelve_is_drift(tmp_path: pathlib.Path) -> None:
    names = write_synthetic_fleet(tmp_path, 12, {7: {"driver": "550.54.14"}})
    report = aggregate([str(tmp_path)])
    [drift] = report.drift
    assert (drift.key, drift.usual, drift.usual_count) == ("driver", "580.159.04", 11)
    assert drift.odd == {"550.54.14": [names[7]]}
    assert drift.hardware == "1× NVIDIA H100 80GB HBM3"
    assert report.outliers == [] and report.problem_groups == []
    assert report.exit_code == 0  # drift is shown, not a failure


def test_synthetic_slow_matmul_on_one_node_is_an_outlier(tmp_path: pathlib.Path) -> None:
    names = write_synthetic_fleet(tmp_path, 12, {3: {"matmul_factor": 0.5, "matmul_dtype": "bf16"}})
    report = aggregate([str(tmp_path)])
    [outlier] = report.outliers
    assert (outlier.node, outlier.metric, outlier.unit, outlier.peers) == (names[3], "matmul bf16", "TFLOP/s", 12)
    assert outlier.value < 0.6 * outlier.median and outlier.robust_z < -3.5
    assert report.exit_code == 1


def test_synthetic_equal_figures_give_no_outlier(tmp_path: pathlib.Path) -> None:
    write_synthetic_fleet(tmp_path, 8, jitter=0.0)
    report = aggregate([str(tmp_path)])
    assert report.outliers == [] and report.drift == [] and report.exit_code == 0


def test_synthetic_mixed_gpu_models_are_separate_groups(tmp_path: pathlib.Path) -> None:
    # Six "A100" nodes at half the H100's figures: slower hardware, not slow nodes; and a driver that
    # differs between the two models is no drift (they are not identical nodes).
    changes = {i: {"gpu_name": "NVIDIA A100-SXM4-80GB", "matmul_factor": 0.5, "driver": "550.54.14"} for i in range(6)}
    write_synthetic_fleet(tmp_path, 12, changes)
    report = aggregate([str(tmp_path)])
    assert report.outliers == [] and report.drift == []
    assert {n.hardware for n in report.nodes} == {"1× NVIDIA H100 80GB HBM3", "1× NVIDIA A100-SXM4-80GB"}


def test_synthetic_gpu_count_splits_groups_and_pcie_drift_is_found(tmp_path: pathlib.Path) -> None:
    changes = {i: {"gpu_count": 8} for i in range(6)}
    changes[2] = {"gpu_count": 8, "pcie_width": 8}
    names = write_synthetic_fleet(tmp_path, 9, changes)
    report = aggregate([str(tmp_path)])
    [drift] = report.drift
    assert (drift.hardware, drift.key, drift.usual) == ("8× NVIDIA H100 80GB HBM3", "pcie", "8× Gen5 x16")
    assert drift.odd == {"GPU0-6: Gen5 x16; GPU7: Gen5 x8 (max Gen5 x16)": [names[2]]}


def _node(name: str, problems: list[NodeProblem]) -> NodeSummary:
    return NodeSummary(name, f"{name}.json", 1, "problem", {"driver": "problem"}, problems, {}, None, 0)


def test_identical_messages_group_exactly() -> None:
    def mismatch(versions: str) -> NodeProblem:
        return NodeProblem("DRV002", "driver", "problem", f"mismatch {versions}", "drv", "reboot", "sudo reboot")

    nodes = [_node(f"n{i}", [mismatch("550/555")]) for i in range(12)] + [_node("x", [mismatch("535/550")])]
    report = build_report(nodes, [])
    first, second = report.problem_groups
    assert (len(first.nodes), first.message, first.fix) == (12, "mismatch 550/555", "reboot")
    assert second.nodes == ["x"]


def test_missing_list_duplicates_and_unreadable(tmp_path: pathlib.Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    names = write_synthetic_fleet(first, 2)
    write_synthetic_fleet(second, 1)
    (first / "fleet-missing.json").write_text(
        json.dumps({"missing": [{"node": "gpu9", "why": "did not answer within 120 s"}, {"node": names[0]}]})
    )
    (second / "notes.json").write_text("[1, 2")
    report = aggregate([str(first), str(second)])
    assert [n.node for n in report.nodes] == names
    assert report.missing == [("gpu9", "did not answer within 120 s")]  # a node with a report is not missing
    whys = {pathlib.Path(u.source).name: u.why for u in report.unreadable}
    assert "a second report of node" in whys[f"{names[0]}.json"]
    assert whys["notes.json"].startswith("not JSON")
    assert report.exit_code == 1


def test_no_reports_and_typos_are_usage_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UsageError, match="no node reports"):
        aggregate([str(tmp_path)])
    with pytest.raises(UsageError, match="no such file"):
        aggregate([str(tmp_path / "nope")])


def test_pool_and_serial_reading_agree(tmp_path: pathlib.Path) -> None:
    write_synthetic_fleet(tmp_path, 210, {5: {"driver": "1.2.3"}, 9: {"matmul_factor": 0.3}})
    (tmp_path / "zz-junk.json").write_text("{}")
    serial, pooled = aggregate([str(tmp_path)], workers=1), aggregate([str(tmp_path)], workers=2)
    assert serial == pooled
    assert len(serial.nodes) == 210 and len(serial.unreadable) == 1 and serial.outliers
