"""Acting on a node's verdict in Slurm: drain with the reason on a problem, resume a drain of ours once the
node is healthy, never touch a node someone else took out of service.

"Ours" is read from the reason alone: every drain gpudoctor sets starts with "gpudoctor:" (the verdict's
line).  A node drained, down or failing with any other reason (a person's "maintenance", Slurm's own "Not
responding" or "Prolog error") belongs to whoever set it: a problem found there is said on stderr, and the
node is left as it is.
"""

from __future__ import annotations

import argparse
import enum
import sys
from dataclasses import dataclass

from gpudoctor.fleet.slurm_commands import failure_of, run_slurm_command
from gpudoctor.fleet.slurm_state import SlurmNode, parse_scontrol_node
from gpudoctor.verdict import Verdict, VerdictState

# slurmd kills a HealthCheckProgram that "does not terminate normally within 60 seconds" (slurm.conf(5),
# HealthCheckProgram).  45 s leaves the Python start and the scontrol calls room inside that.
HEALTHCHECK_BUDGET_S = 45.0


class Action(str, enum.Enum):
    DRAIN = "drain"  # take it out: scontrol update state=drain reason=...
    UPDATE_REASON = "update the reason of"  # ours already, the reason changed
    RESUME = "resume"  # ours, and the node is healthy again
    KEEP = "leave"  # nothing to change


@dataclass(frozen=True)
class Decision:
    action: Action
    why: str  # one line for stderr


def decide(node: SlurmNode | None, verdict: Verdict, unknown: str = "pass") -> Decision:
    """What to do to ``node`` (None: Slurm's view could not be read) given the verdict; pure, no Slurm."""
    line = verdict.line()
    bad = verdict.state is VerdictState.PROBLEM or (verdict.state is VerdictState.UNKNOWN and unknown == "drain")
    if node is not None and node.out_of_service and not node.drained_by_gpudoctor:
        owner = f"{node.why_unavailable() or 'out of service'} by someone else (reason: {node.reason or 'none given'})"
        return Decision(Action.KEEP, f"{owner}; gpudoctor leaves it as it is" + (f"; found: {line}" if bad else ""))
    if bad:
        if node is not None and node.drained_by_gpudoctor:
            if node.reason == line:
                return Decision(Action.KEEP, f"already drained by gpudoctor: {line}")
            return Decision(Action.UPDATE_REASON, line)
        return Decision(Action.DRAIN, line)
    if verdict.state is VerdictState.UNKNOWN:
        return Decision(Action.KEEP, f"{line} (--unknown pass: the node is neither drained nor resumed)")
    if node is not None and node.drained_by_gpudoctor:
        return Decision(Action.RESUME, f"healthy again ({line}); was drained with: {node.reason}")
    return Decision(Action.KEEP, line)


def act_on_verdict(node: str, verdict: Verdict, args: argparse.Namespace) -> int:
    """Read the node's state, act (or with ``--dry-run`` only say what would be done), return the exit code:
    0 the node may run jobs, 1 it may not (a failing Prolog also fails the job's launch there)."""
    from gpudoctor.render.common import printable

    unknown = getattr(args, "unknown", "pass")
    dry_run = bool(getattr(args, "dry_run", False))
    shown = printable(node)
    read = run_slurm_command("scontrol", ["show", "node", "-o", node])
    state = parse_scontrol_node(read.text or "", node)
    if state is None:
        why = failure_of(read) or "its state was not in scontrol's answer"
        sys.stderr.write(f"{shown}: could not read the node's state from Slurm: {printable(why)}\n")
    decision = decide(state, verdict, unknown)
    bad = verdict.state is VerdictState.PROBLEM or (verdict.state is VerdictState.UNKNOWN and unknown == "drain")
    exit_code = 1 if bad else 0
    if decision.action is Action.KEEP:
        sys.stderr.write(f"{shown}: {printable(decision.why)}\n")
        return exit_code
    if dry_run:
        sys.stderr.write(f"{shown}: would {decision.action.value} the node: {printable(decision.why)} (--dry-run)\n")
        return exit_code
    if decision.action is Action.RESUME:
        update = ["update", f"nodename={node}", "state=resume"]
    else:  # drain, or a new reason on our drain: setting state=drain again replaces the reason
        update = ["update", f"nodename={node}", "state=drain", f"reason={verdict.line()}"]
    done = run_slurm_command("scontrol", update)
    failed = failure_of(done)
    if failed:
        sys.stderr.write(f"{shown}: could not {decision.action.value} the node: {printable(failed)}\n")
        return exit_code
    past = {Action.DRAIN: "drained", Action.UPDATE_REASON: "updated the drain reason of", Action.RESUME: "resumed"}
    sys.stderr.write(f"{shown}: {past[decision.action]}: {printable(decision.why)}\n")
    return exit_code
