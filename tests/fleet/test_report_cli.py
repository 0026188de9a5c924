"""``gpudoctor fleet report`` end to end: node reports made by the real CLI from real snapshots (the
recorded H100 VM; a snapshot holding a real nvidia-smi error text), read back by the real CLI."""

from __future__ import annotations

import functools
import json
import pathlib
import shutil

import pytest

from tests.helpers.fixtures import real_fixtures_dir
from tests.synthetic.fleet_reports import real_h100_report_text, run_gpudoctor

MISMATCH_FIXTURE = "C/err-nvml-version-mismatch-reboot-illinois-60.txt"


@functools.lru_cache(maxsize=1)
def _broken_report_text(workdir: str) -> str:
    snapshot = pathlib.Path(workdir) / "mismatch-snapshot"
    snapshot.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(real_fixtures_dir() / MISMATCH_FIXTURE, snapshot / "nvidia-smi.txt")
    done = run_gpudoctor("check", "--from", str(snapshot), "--format", "json")
    assert done.returncode == 1, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """Three real node reports (two healthy, one with the real driver/library mismatch) and a junk file."""
    if not (real_fixtures_dir() / MISMATCH_FIXTURE).exists():
        pytest.skip(f"real fixture {MISMATCH_FIXTURE} not available (../shared/fixtures)")
    folder = tmp_path_factory.mktemp("fleet")
    (folder / "gpu01.json").write_text(real_h100_report_text())
    (folder / "gpu02.json").write_text(real_h100_report_text())
    (folder / "gpu03.json").write_text(_broken_report_text(str(tmp_path_factory.getbasetemp())))
    (folder / "notes.json").write_text("not json at all")
    (folder / "fleet-missing.json").write_text(json.dumps({"missing": [{"node": "gpu04", "why": "no answer"}]}))
    return folder


def test_json_report(fleet_dir: pathlib.Path) -> None:
    done = run_gpudoctor("fleet", "report", str(fleet_dir), "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["schema_version"] == 1 and report["kind"] == "gpudoctor-fleet-report"
    assert [n["node"] for n in report["nodes"]] == ["gpu01", "gpu02", "gpu03"]
    assert report["summary"]["exit_code"] == 1
    assert (report["summary"]["ok"], report["summary"]["problem"], report["summary"]["unreadable"]) == (2, 1, 1)
    [group] = report["problem_groups"]
    assert (group["code"], group["cause"], group["nodes"]) == ("DRV002", "driver-library-mismatch", ["gpu03"])
    assert group["command"] == "sudo reboot"
    assert report["missing"] == [{"node": "gpu04", "why": "no answer"}]
    assert report["unreadable"][0]["source"].endswith("notes.json")
    assert report["areas"].index("pci") < report["areas"].index("driver") < report["areas"].index("smoke")


def test_text_report(fleet_dir: pathlib.Path) -> None:
    done = run_gpudoctor("fleet", "report", str(fleet_dir))
    assert done.returncode == 1
    out = done.stdout
    assert out.startswith("gpudoctor fleet report: 3 nodes: 2 ok, 1 problem; 1 did not answer; 1 file unreadable")
    assert "DRV " in out and "gpu03  FAIL" in out
    assert "[FAIL] 1 node: DRV002 Driver/library version mismatch" in out
    assert "$ sudo reboot" in out and "gpu04: no answer" in out and "notes.json: not JSON" in out
    assert "\x1b[" not in out  # no colour unless asked


def test_markdown_report(fleet_dir: pathlib.Path) -> None:
    done = run_gpudoctor("fleet", "report", str(fleet_dir), "--format", "markdown")
    assert done.returncode == 1
    assert "| gpu03 | ❌ |" in done.stdout
    assert "## Problems (nodes grouped by identical finding)" in done.stdout


def test_output_file_is_never_replaced_without_force(fleet_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    target = tmp_path / "fleet.md"
    target.write_text("mine")
    done = run_gpudoctor("fleet", "report", str(fleet_dir), "--format", "markdown", "-o", str(target))
    assert done.returncode == 2 and target.read_text() == "mine"
    assert done.stderr.count("\n") == 1 and "--force" in done.stderr
    done = run_gpudoctor("fleet", "report", str(fleet_dir), "--format", "markdown", "-o", str(target), "--force")
    assert done.returncode == 1 and target.read_text().startswith("# gpudoctor fleet report")


def test_healthy_files_given_one_by_one_exit_zero(tmp_path: pathlib.Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(real_h100_report_text())
    done = run_gpudoctor("fleet", "report", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems, no drift between identical nodes, no slow outliers." in done.stdout


def test_empty_folder_is_one_clear_line(tmp_path: pathlib.Path) -> None:
    done = run_gpudoctor("fleet", "report", str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("gpudoctor: error: no node reports (*.json) in ")
    assert done.stderr.count("\n") == 1


def test_only_unreadable_files_still_report(tmp_path: pathlib.Path) -> None:
    (tmp_path / "x.json").write_text('{"schema_version": 2, "tool": {"name": "gpudoctor"}, "results": []}')
    done = run_gpudoctor("fleet", "report", str(tmp_path))
    assert done.returncode == 1
    assert "No node report could be read." in done.stdout and "schema_version 2" in done.stdout


def test_a_daemonset_log_with_several_rounds_gives_its_newest_report(tmp_path: pathlib.Path) -> None:
    """`kubectl logs` of the gpudoctor-check DaemonSet: report, status line, report, status line (the real CLI's
    reports; the log around them is SYNTHETIC, shaped as the DaemonSet's loop prints it)."""
    from tests.synthetic.fleet_reports import real_h100_report, synthetic_node_report

    older = synthetic_node_report(real_h100_report(), driver="550.54.15")
    newer = real_h100_report()
    log = "".join(
        json.dumps(report, indent=2)
        + "\ngpudoctor-check: node=gpu7 exit=0 (0 ok, 1 problem, 2 unknown); next in 300s\n"
        for report in (older, newer)
    )
    (tmp_path / "gpu7.json").write_text(log, encoding="utf-8")
    (tmp_path / "junk.json").write_text("gpudoctor-check: node=x exit=2\n{not a report\n", encoding="utf-8")
    done = run_gpudoctor("fleet", "report", str(tmp_path), "--format", "json")
    fleet = json.loads(done.stdout)
    nodes = {node["node"]: node for node in fleet["nodes"]}
    assert list(nodes) == ["gpu7"]
    assert nodes["gpu7"]["config"]["driver"] == newer["machine"]["driver_version"] != "550.54.15"
    assert [u["source"].endswith("junk.json") for u in fleet["unreadable"]] == [True]
