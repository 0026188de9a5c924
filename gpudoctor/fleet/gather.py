"""What a fleet run gathered: one outcome per node, written as ``<node>.json`` plus a line per node that
failed to answer.  Shared by every engine (Slurm, Ray): they differ in how they reach the nodes, never in
what they hand back or how it is written.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import TextIO

from gpudoctor.errors import UsageError
from gpudoctor.fleet.nodes import report_file_name

# The gatherer's own summary beside the reports (not a node report: `fleet report` skips it by name).
MISSING_FILE = "fleet-missing.json"


@dataclass
class NodeOutcome:
    """One node: its report (the text of ``check --format json``) and exit code, or why there is none."""

    node: str
    report_text: str | None = None
    exit_code: int | None = None
    # Why no report came back: "did not answer within 120 s", "not checked: drained (reason ...)", ...
    failure: str | None = None

    @property
    def answered(self) -> bool:
        return self.report_text is not None


def check_output_dir(path: str) -> None:
    """``-o DIR`` must be a folder or not exist yet; it is created only once there is something to write (a
    cluster that cannot be reached leaves nothing behind)."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise UsageError(f"{path} exists and is not a folder")


def refuse_existing_reports(path: str, nodes: list[str], force: bool) -> None:
    """Before any node is asked: a ``<node>.json`` already in DIR is kept unless ``--force``."""
    if force:
        return
    clashes = [n for n in nodes if os.path.lexists(os.path.join(path, report_file_name(n)))]
    if clashes:
        more = f" and {len(clashes) - 3} more" if len(clashes) > 3 else ""
        raise UsageError(
            f"{os.path.join(path, report_file_name(clashes[0]))}{' ' + ', '.join(clashes[1:3]) if len(clashes) > 1 else ''}"
            f"{more} already exist; use --force to replace them, or another -o folder"
        )


def write_outcomes(path: str, outcomes: list[NodeOutcome], force: bool) -> None:
    """``<node>.json`` for each node that answered (the report as the node wrote it), and
    ``fleet-missing.json`` listing the others with why; atomically, never through a link."""
    from gpudoctor.evidence.safe_write import write_file

    os.makedirs(path, exist_ok=True)
    for outcome in outcomes:
        if outcome.report_text is not None:
            text = outcome.report_text if outcome.report_text.endswith("\n") else outcome.report_text + "\n"
            write_file(os.path.join(path, report_file_name(outcome.node)), text, force=force)
    missing = [{"node": o.node, "why": o.failure or "no report"} for o in outcomes if not o.answered]
    write_file(os.path.join(path, MISSING_FILE), json.dumps({"missing": missing}, indent=2) + "\n", force=True)


def print_outcomes(outcomes: list[NodeOutcome], stream: TextIO = sys.stderr) -> None:
    """A line per node: which answered (with the verdict's exit code) and which did not, and why."""
    from gpudoctor.render.common import printable

    for outcome in sorted(outcomes, key=lambda o: o.node):
        if outcome.answered:
            stream.write(f"{printable(outcome.node)}: report gathered (exit code {outcome.exit_code})\n")
        else:
            stream.write(f"{printable(outcome.node)}: no report: {printable(outcome.failure or 'no answer')}\n")
    answered = sum(1 for o in outcomes if o.answered)
    stream.write(f"gpudoctor: {answered} of {len(outcomes)} nodes answered\n")


def fleet_exit_code(outcomes: list[NodeOutcome]) -> int:
    """0 every node answered and none has a problem, 1 a node has a problem or did not answer."""
    if not outcomes:
        return 1
    if any(not o.answered or o.exit_code not in (0,) for o in outcomes):
        return 1
    return 0
