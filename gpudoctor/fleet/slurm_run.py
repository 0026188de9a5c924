"""``fleet run --slurm``: one ``srun`` task per node running ``gpudoctor fleet node-check``; the reports taken
back apart from srun's output.

The nodes and their states come from ``sinfo`` (hostlists expanded by ``scontrol show hostnames``, never by
a parser of ours).  A node that cannot run a job (down, drained, failing, not responding) is not asked: it
is reported "not checked" with Slurm's reason, and the one srun goes to the others, so one bad node never
holds the whole run in the queue.
"""

from __future__ import annotations

import argparse
import math
import re
import sys

from gpudoctor.errors import UsageError
from gpudoctor.fleet.frames import decode
from gpudoctor.fleet.gather import NodeOutcome, refuse_existing_reports
from gpudoctor.fleet.slurm_commands import failure_of, run_slurm_command
from gpudoctor.fleet.slurm_state import SINFO_FIELDS, SlurmNode, parse_hostnames, parse_sinfo_nodes
from gpudoctor.verdict import DEFAULT_LEVEL_BUDGET_S

# Beyond the node's budget: srun's allocation and launch, Python's start, the report's way back.
LAUNCH_MARGIN_S = 60.0
# srun's output kept per node: a report's frames are ~70 KB for a full 8-GPU H100 report; room for more.
OUTPUT_PER_NODE = 512 * 1024
JOB_NAME = "gpudoctor-fleet"
# srun's own lines that name a node: "srun: error: node2: task 1: Exited with exit code 1",
# "srun: error: Task launch for StepId=1.0 failed on node node2: Job prolog failed".
_SRUN_NODE_LINE = re.compile(
    r"srun: (?:error: )?(?:(?P<a>[A-Za-z0-9._-]+): task \d+: |.*? on node (?P<b>[A-Za-z0-9._-]+): )"
)
_EXITED = re.compile(r": task \d+: Exited with exit code \d+\s*$")


def run_slurm(args: argparse.Namespace) -> list[NodeOutcome]:
    """Every target node's outcome: its report, or why there is none."""
    nodes = target_nodes(args.partition, args.nodes)
    refuse_existing_reports(args.output, [n.name for n in nodes], args.force)
    outcomes: dict[str, NodeOutcome] = {}
    runnable: list[str] = []
    for node in nodes:
        why = node.why_unavailable()
        if why is None:
            runnable.append(node.name)
        else:
            reason = f" ({node.reason})" if node.reason else ""
            outcomes[node.name] = NodeOutcome(node.name, failure=f"not checked: {why}{reason}")
    if runnable:
        skipped = f"; {len(nodes) - len(runnable)} not checked (out of service)" if len(runnable) < len(nodes) else ""
        sys.stderr.write(
            f"gpudoctor: checking {len(runnable)} node{'s' if len(runnable) != 1 else ''} through one srun "
            f"(level {args.level}, budget {run_budget(args):g} s){skipped}\n"
        )
        outcomes.update(gather_from_srun(args, runnable))
    return [outcomes[n.name] for n in nodes]


def target_nodes(partition: str | None, hostlist: str | None) -> list[SlurmNode]:
    """The nodes asked for (``--nodes``), else the partition's (``--partition``), else the default
    partition's, with their states; a node named in ``--nodes`` that Slurm does not know is refused."""
    wanted: list[str] | None = None
    if hostlist:
        expanded = run_slurm_command("scontrol", ["show", "hostnames", hostlist])
        problem = failure_of(expanded)
        wanted = parse_hostnames(expanded.text or "") if problem is None else []
        if problem or not wanted:
            raise UsageError(f"--nodes {hostlist!r}: Slurm could not expand it ({problem or 'no node names'})")
    query = ["-h", "-N", "-o", SINFO_FIELDS]
    if partition:
        query += ["-p", partition]
    if wanted:
        query += ["-n", ",".join(wanted)]
    listed = run_slurm_command("sinfo", query)
    problem = failure_of(listed)
    if problem:
        raise UsageError(f"sinfo failed: {problem}")
    known = parse_sinfo_nodes(listed.text or "")
    if wanted is not None:
        by_name = {n.name: n for n in known}
        unknown = [name for name in wanted if name not in by_name]
        if unknown:
            where = f" in partition {partition}" if partition else ""
            raise UsageError(f"Slurm knows no node {unknown[0]!r}{where} (from --nodes {hostlist!r})")
        return [by_name[name] for name in wanted]
    if not partition:
        known = [n for n in known if (n.partition or "").endswith("*")] or known
    if not known:
        raise UsageError(f"no nodes in partition {partition!r}" if partition else "sinfo lists no nodes")
    return known


def run_budget(args: argparse.Namespace) -> float:
    return float(args.time_budget) if args.time_budget is not None else DEFAULT_LEVEL_BUDGET_S[args.level]


def srun_argv(args: argparse.Namespace, nodes: list[str]) -> list[str]:
    """One task on each node (``--kill-on-bad-exit=0``: a node with a problem exits 1 and must not stop the
    others), labelled, limited in time; each runs ``fleet node-check`` with this run's options."""
    budget = run_budget(args)
    minutes = max(1, math.ceil((budget + LAUNCH_MARGIN_S) / 60))
    argv = [
        f"--nodes={len(nodes)}",
        f"--ntasks={len(nodes)}",
        "--ntasks-per-node=1",
        f"--nodelist={','.join(nodes)}",
        "--kill-on-bad-exit=0",
        "--label",
        f"--job-name={JOB_NAME}",
        f"--time={minutes}",
    ]
    if args.partition:
        argv.append(f"--partition={args.partition}")
    argv += getattr(args, "srun_args", None) or []  # the site's own: account, reservation, --exclusive, gres
    gpudoctor = [args.gpudoctor] if args.gpudoctor else [sys.executable, "-m", "gpudoctor"]
    check = [*gpudoctor, "fleet", "node-check", "--level", args.level, "--budget", f"{budget:g}"]
    check += ["--fail-on", args.fail_on]
    if args.from_path:
        check += ["--from", args.from_path]
    return [*argv, "--", *check]


def gather_from_srun(args: argparse.Namespace, nodes: list[str]) -> dict[str, NodeOutcome]:
    """Run the one srun and take each node's report out of its output."""
    timeout = run_budget(args) + LAUNCH_MARGIN_S + len(nodes) / 100
    item = run_slurm_command(
        "srun", srun_argv(args, nodes), timeout, max_output=max(4_000_000, OUTPUT_PER_NODE * len(nodes))
    )
    received = decode((item.text or "").splitlines())
    said = srun_lines_by_node(item.stderr or "")
    overall = failure_of(item) or "srun ended without it"
    outcomes: dict[str, NodeOutcome] = {}
    for node in nodes:
        got = received.get(node)
        if got is not None and got.report_text is not None:
            outcomes[node] = NodeOutcome(node, got.report_text, got.exit_code)
            continue
        # The node's own word first when its gpudoctor ran (it says why it has no report), else srun's line.
        spoke = got.error if got is not None and got.exit_code is not None else None
        why = spoke or said.get(node) or (got.error if got is not None else None) or f"no report ({overall})"
        if item.timed_out and node not in said:
            why = f"did not answer within {timeout:g} s"
        outcomes[node] = NodeOutcome(node, failure=why)
    return outcomes


def srun_lines_by_node(stderr: str) -> dict[str, str]:
    """srun's own error line for each node it names; a launch failure wins over a plain exit code."""
    said: dict[str, str] = {}
    for raw in stderr.splitlines():
        line = raw.strip()
        match = _SRUN_NODE_LINE.match(line)
        if not match:
            continue
        node = match["a"] or match["b"]
        if node and (node not in said or _EXITED.search(said[node])):
            said[node] = line.removeprefix("srun: error: ").removeprefix("srun: ")
    return said
