"""What a fleet run writes: <node>.json for the nodes that answered, fleet-missing.json for the others."""

from __future__ import annotations

import json
import pathlib

import pytest

from gpudoctor.errors import UsageError
from gpudoctor.fleet.gather import (
    MISSING_FILE,
    NodeOutcome,
    check_output_dir,
    fleet_exit_code,
    refuse_existing_reports,
    write_outcomes,
)


def _synthetic_outcomes() -> list[NodeOutcome]:
    return [
        NodeOutcome("node1", '{"synthetic": 1}', 0),
        NodeOutcome("node2", '{"synthetic": 2}\n', 1),
        NodeOutcome("node3", failure="not checked: drained (maintenance)"),
    ]


def test_reports_and_the_missing_list_are_written(tmp_path: pathlib.Path) -> None:
    write_outcomes(str(tmp_path), _synthetic_outcomes(), force=False)
    assert (tmp_path / "node1.json").read_text() == '{"synthetic": 1}\n'
    assert (tmp_path / "node2.json").read_text() == '{"synthetic": 2}\n'
    assert json.loads((tmp_path / MISSING_FILE).read_text()) == {
        "missing": [{"node": "node3", "why": "not checked: drained (maintenance)"}]
    }
    assert not (tmp_path / "node3.json").exists()


def test_exit_code_is_clean_only_when_every_node_answered_clean() -> None:
    outcomes = _synthetic_outcomes()
    assert fleet_exit_code(outcomes) == 1
    assert fleet_exit_code(outcomes[:1]) == 0
    assert fleet_exit_code(outcomes[1:2]) == 1
    assert fleet_exit_code([]) == 1


def test_existing_reports_are_kept_without_force(tmp_path: pathlib.Path) -> None:
    (tmp_path / "node1.json").write_text("kept")
    with pytest.raises(UsageError, match="--force"):
        refuse_existing_reports(str(tmp_path), ["node1", "node2"], force=False)
    refuse_existing_reports(str(tmp_path), ["node1"], force=True)
    with pytest.raises(UsageError):
        write_outcomes(str(tmp_path), _synthetic_outcomes(), force=False)
    assert (tmp_path / "node1.json").read_text() == "kept"


def test_a_node_name_that_could_escape_the_folder_is_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(UsageError):
        write_outcomes(str(tmp_path), [NodeOutcome("../evil", "{}", 0)], force=False)
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError):
        check_output_dir(str(tmp_path / "file"))
