"""The fleet report's text, JSON and Markdown renderers: hostile strings shown as data, large fleets
summarised, JSON stable and strict (SYNTHETIC summaries)."""

from __future__ import annotations

import json
import re

from gpudoctor.fleet.render_json import fleet_to_dict, render_fleet_json
from gpudoctor.fleet.render_markdown import md, render_fleet_markdown
from gpudoctor.fleet.render_text import render_fleet_text
from gpudoctor.fleet.report_aggregate import build_report
from gpudoctor.fleet.report_model import Measurement, NodeProblem, NodeSummary, Unreadable
from gpudoctor.fleet.report_view import ALL_ROWS_UP_TO

HOSTILE = "evil\x1b[2J|*x*|<b>\u202e\ud800"


def _synthetic_node(name: str, worst: str = "ok", message: str = "fine", bf16: float = 700.0) -> NodeSummary:
    problems = [NodeProblem("DRV002", "driver", "problem", message, None, "reboot | now", "sudo reboot")]
    return NodeSummary(
        node=name,
        source=f"/r/{name}.json",
        exit_code=0 if worst == "ok" else 1,
        worst=worst,
        areas={"driver": "problem" if worst == "problem" else "ok", "pci": "ok"},
        problems=problems if worst == "problem" else [],
        config={"driver": "580.159.04"},
        gpu_model="NVIDIA H100 80GB HBM3",
        gpu_count=8,
        measurements=[Measurement("matmul bf16", bf16, "TFLOP/s", "cuda:0")],
    )


def _hostile_report():  # type: ignore[no-untyped-def]
    nodes = [_synthetic_node(f"n{i}") for i in range(6)] + [_synthetic_node(HOSTILE, "problem", HOSTILE, 100.0)]
    return build_report(nodes, [Unreadable(f"/r/{HOSTILE}.json", HOSTILE)], [(HOSTILE, HOSTILE)])


def test_text_shows_escape_sequences_as_data() -> None:
    text = render_fleet_text(_hostile_report())
    assert "\x1b" not in text and "\u202e" not in text and "\ud800" not in text
    assert "evil\\x1b[2J" in text
    assert "DRV" in text.splitlines()[3] and "PCI" in text.splitlines()[3]  # columns in gpudoctor's area order
    assert text.splitlines()[3].index("PCI") < text.splitlines()[3].index("DRV")


def test_text_colour_only_when_asked() -> None:
    report = _hostile_report()
    assert "\x1b[" not in render_fleet_text(report)
    assert "\x1b[1;31m" in render_fleet_text(report, color=True)


def test_markdown_escapes_pipes_and_markup() -> None:
    text = render_fleet_markdown(_hostile_report())
    assert "\x1b" not in text and "<b>" not in text
    assert "evil\\\\x1b\\[2J\\|\\*x\\*\\|&lt;b>" in text
    columns = None
    for line in text.splitlines():
        if not line.startswith("| "):
            columns = None
            continue
        cells = re.sub(r"\\.", "", line).count("|")  # escaped characters are not cell borders
        columns = columns or cells
        assert cells == columns, line
    assert md("a|b") == "a\\|b" and md("line\nbreak") == "line break"


def test_json_is_strict_and_complete() -> None:
    report = _hostile_report()
    data = json.loads(render_fleet_json(report))
    assert data["nodes"][-1]["node"] == HOSTILE
    [outlier] = data["outliers"]
    assert outlier["node"] == HOSTILE and outlier["robust_z"] is None  # MAD 0: no z, the drop decided
    assert data["outlier_rule"] == {"min_peers": 5, "robust_z_below": -3.5, "min_relative_drop": 0.1}
    assert data["problem_groups"][0]["count"] == 1
    assert data == fleet_to_dict(report)  # the node-per-line writer says exactly what the data says
    assert "\ud800" not in render_fleet_json(report)  # written as an escape: any output encoding takes it


def test_large_fleets_list_only_nodes_needing_a_look_in_text_and_markdown() -> None:
    nodes = [_synthetic_node(f"clean{i:04d}", bf16=700.0 + i % 3) for i in range(2000)]
    nodes.insert(100, _synthetic_node("broken", "problem", "mismatch"))
    nodes.insert(200, _synthetic_node("slowpoke", bf16=300.0))
    report = build_report(nodes, [])
    text = render_fleet_text(report)
    assert "broken" in text and "slowpoke" in text and "clean0005" not in text
    assert "2000 clean nodes (every area ok) not listed" in text
    assert any(line.startswith("slowpoke") and " slow " in line for line in text.splitlines())
    markdown = render_fleet_markdown(report)
    assert "| broken | ❌ |" in markdown and "| slowpoke | 🐢 slow |" in markdown and "| clean0005 |" not in markdown
    assert len(json.loads(render_fleet_json(report))["nodes"]) == 2002


def test_small_fleets_list_every_node() -> None:
    nodes = [_synthetic_node(f"n{i}") for i in range(ALL_ROWS_UP_TO)]
    text = render_fleet_text(build_report(nodes, []))
    assert all(f"\nn{i} " in text for i in range(ALL_ROWS_UP_TO))
