"""`gpudoctor topo` run as a user runs it: the matrix, JSON, the SVG, and never overwriting a file."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.e2e.test_cli import as_json, fixture, gpudoctor, statuses

A100_8X = "B/xuesongtap-8x-a100-nv12-17nics-mlx5-bond-full.txt"


def test_text_shows_the_matrix_nics_and_the_checks():
    result = gpudoctor("topo", "--from", str(fixture(A100_8X)))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "GPU topology: 8 GPUs, 17 NICs" in out
    assert out.count("NV12") >= 56  # every ordered GPU pair of the matrix
    assert "mlx5_bond_0" in out
    assert "TOPO002" in out and "28× NV12" in out
    assert "\x1b[" not in out  # not a terminal: no colour


def test_json_carries_the_structured_topology_and_follows_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    result = gpudoctor(
        "topo", "--from", str(fixture("B/nccl-1439-8gpu-pcie-pix-phb-sys-2socket.txt")), "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    report = as_json(result)
    jsonschema.validate(report, as_json(gpudoctor("schema")))
    topo = report["sections"]["topology"]
    assert [gpu["index"] for gpu in topo["gpus"]] == list(range(8))
    assert [gpu["numa_node"] for gpu in topo["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    paths = {(p["a"], p["b"]): p["path"] for p in topo["pairs"]}
    assert paths[(0, 1)] == "PIX" and paths[(0, 2)] == "PHB" and paths[(3, 4)] == "SYS"
    assert statuses(report) == {
        "TOPO001": "not_applicable",
        "TOPO002": "warning",
        "TOPO003": "not_applicable",
        "TOPO004": "not_applicable",
        "TOPO005": "ok",
        "TOPO006": "not_applicable",
    }


def test_svg_is_written_once_and_never_overwritten_without_force(tmp_path):
    target = tmp_path / "machine.svg"
    result = gpudoctor("topo", "--from", str(fixture(A100_8X)), "--svg", str(target))
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(target.read_text())
    drawn = {element.get("data-gpu") for element in root.iter() if element.get("data-gpu") is not None}
    assert drawn == {str(i) for i in range(8)}
    assert f"wrote {target}" in result.stderr

    target.write_text("my own drawing")
    again = gpudoctor("topo", "--from", str(fixture(A100_8X)), "--svg", str(target))
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "--force" in again.stderr and target.read_text() == "my own drawing"

    forced = gpudoctor("topo", "--from", str(fixture(A100_8X)), "--svg", str(target), "--force")
    assert forced.returncode == 0 and "<svg" in target.read_text()[:200]


def test_svg_to_stdout():
    result = gpudoctor("topo", "--from", str(fixture("B/stas00-mleng-2gpu-nv2.txt")), "--svg", "-")
    assert result.returncode == 0, result.stderr
    root = ET.fromstring(result.stdout)
    links = [e for e in root.iter() if e.get("data-link") == "0-1"]
    assert links and links[0].get("data-kind") == "nvlink"


@pytest.mark.parametrize(
    "argv", [["topo", "--from", "/nonexistent/snapshot"], ["topo", "--format", "yaml"], ["topo", "--timeout", "0"]]
)
def test_bad_usage_is_one_line_and_exit_2(argv):
    result = gpudoctor(*argv)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_live_topo_on_this_machine_says_what_it_knows():
    result = gpudoctor("topo")
    assert result.returncode in (0, 1), result.stderr
    assert "crashed" not in result.stdout.split("Summary:")[-1].split("\n")[0].replace("0 crashed", "")
    report = as_json(gpudoctor("topo", "--format", "json"))
    assert "crashed" not in statuses(report).values()
    assert isinstance(report["sections"]["topology"]["gpus"], list)


def test_check_json_carries_the_topology_section_too():
    result = gpudoctor("check", "--from", str(fixture(A100_8X)), "--format", "json")
    report = as_json(result)
    assert len(report["sections"]["topology"]["pairs"]) == 28
