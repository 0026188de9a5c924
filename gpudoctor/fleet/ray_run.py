"""``fleet run --ray``: one task pinned to each alive node (node-affinity scheduling), each running
``gpudoctor fleet node-check``; nodes that do not answer within the budget are reported.

The driver attaches to the running cluster (it never starts one), lists the nodes the GCS knows, and sends
each alive node one task with ``NodeAffinitySchedulingStrategy(node_id, soft=False)``: the check must run
*there*, never on whichever node has room.  The task asks for no CPU and no GPU, so a node busy with
training still takes it and the check sees every GPU.  Each node's report comes back as the node-check's
tagged lines (:mod:`gpudoctor.fleet.frames`), as under srun.  A check that overruns its budget is killed on
its node by the hardened runner (with everything it started), and the task answers saying so; a task still
out at the driver's deadline (the budget plus time for a worker to start) is cancelled by killing its worker
(Ray 2.60's gentle cancel, a KeyboardInterrupt in the task, did not reach a running task here).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from typing import Any

from gpudoctor.fleet.frames import decode
from gpudoctor.fleet.gather import NodeOutcome, refuse_existing_reports
from gpudoctor.fleet.nodes import is_safe_node_name
from gpudoctor.fleet.ray_connect import RayNode, connect, first_line, import_ray, list_nodes
from gpudoctor.fleet.ray_task import NodeAnswer, node_check_argv, node_check_task
from gpudoctor.verdict import DEFAULT_LEVEL_BUDGET_S

# The node-check stops itself at the budget; this long after, the runner on the node kills it (a hung driver
# call, a wrapper that never returns) and the task answers with why.
NODE_GRACE_S = 5.0
# The driver's deadline, from the tasks' submission: the budget, the node's grace and time for a Ray worker to
# start.  A task still out then (its worker never started, its node froze) is cancelled by killing its worker.
START_MARGIN_S = 15.0
# A finished task's answer is a few hundred kB at most: fetching it never takes long.
GET_TIMEOUT_S = 30.0
DEAD_NODE = "not checked: the node is dead in Ray"


def run_ray(args: argparse.Namespace) -> list[NodeOutcome]:
    ray = import_ray()
    budget = float(args.time_budget or DEFAULT_LEVEL_BUDGET_S[args.level])
    started = time.monotonic()
    connect(ray, args.ray)
    try:
        nodes = list_nodes(ray)
        alive = [n for n in nodes if n.alive]
        refuse_existing_reports(args.output, [provisional_name(n) for n in alive], args.force)
        sys.stderr.write(
            f"gpudoctor: attached to Ray in {time.monotonic() - started:.1f} s; checking {len(alive)} alive "
            f"node{'s' if len(alive) != 1 else ''} (budget {budget:g} s)\n"
        )
        outcomes = _check_alive(ray, args, alive, budget)
        outcomes += dead_outcomes(nodes)
        return unique_names(outcomes)
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()


def _check_alive(ray: Any, args: argparse.Namespace, alive: list[RayNode], budget: float) -> list[NodeOutcome]:
    argv = node_check_argv(args.gpudoctor, args.level, budget, args.from_path, args.fail_on)
    return check_nodes(ray, alive, argv, node_timeout_s=budget + NODE_GRACE_S, deadline_s=budget + START_MARGIN_S)


def check_nodes(
    ray: Any, alive: list[RayNode], argv: list[str], node_timeout_s: float, deadline_s: float
) -> list[NodeOutcome]:
    """One pinned task per node running ``argv`` (killed on the node after ``node_timeout_s``); what is still
    out ``deadline_s`` after submission is cancelled and reported as not answering."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, num_gpus=0, max_retries=0)(node_check_task)
    submitted = time.monotonic()
    refs: dict[Any, RayNode] = {}
    for node in alive:
        strategy = NodeAffinitySchedulingStrategy(node_id=node.node_id, soft=False)
        task = remote.options(scheduling_strategy=strategy, name=f"gpudoctor-node-check-{node.node_id[:12]}")
        refs[task.remote(argv, node_timeout_s)] = node
    ready, late = _wait(ray, list(refs), submitted + deadline_s)
    for ref in late:
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)  # kills its worker, and Ray the processes the worker started
    outcomes = [_answered(ray, ref, refs[ref]) for ref in ready]
    outcomes += [
        NodeOutcome(
            provisional_name(refs[ref]), failure=f"did not answer within {deadline_s:g} s; its Ray task was cancelled"
        )
        for ref in late
    ]
    return outcomes


def _wait(ray: Any, refs: list[Any], deadline: float) -> tuple[list[Any], list[Any]]:
    if not refs:
        return [], []
    ready, late = ray.wait(refs, num_returns=len(refs), timeout=max(0.0, deadline - time.monotonic()))
    return list(ready), list(late)


def _answered(ray: Any, ref: Any, node: RayNode) -> NodeOutcome:
    try:
        answer: NodeAnswer = ray.get(ref, timeout=GET_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - the task, its worker or its node failed: one line says which
        return NodeOutcome(provisional_name(node), failure=task_failure(exc))
    return outcome_of(answer, node)


def outcome_of(answer: NodeAnswer, node: RayNode) -> NodeOutcome:
    """A node's answer as an outcome: its report when its frames arrived whole, else why not."""
    received = decode(answer["stdout"].splitlines())
    host = answer["host"]
    got = received.get(host) or next(iter(received.values()), None)
    name = choose_name(got.node if got else "", host, node)
    if answer["timed_out"]:
        return NodeOutcome(
            name, failure=f"did not answer within {answer['timeout_s']:g} s; its check was stopped on the node"
        )
    if got is not None and got.report_text is not None:
        return NodeOutcome(name, report_text=got.report_text, exit_code=got.exit_code)
    if got is not None and got.error:
        return NodeOutcome(name, failure=got.error + _stderr_hint(answer))
    if answer["error"]:
        return NodeOutcome(name, failure=f"gpudoctor could not run there: {answer['error']}")
    return NodeOutcome(
        name, failure=f"its gpudoctor printed no report (exit code {answer['exit_code']}){_stderr_hint(answer)}"
    )


def _stderr_hint(answer: NodeAnswer) -> str:
    lines = [line.strip() for line in answer["stderr_tail"].splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def task_failure(exc: BaseException) -> str:
    """Why a task brought no answer, from Ray's exception (matched by name: ``ray.exceptions`` is optional)."""
    kind = type(exc).__name__
    if kind == "NodeDiedError":
        return "the node died in Ray during the check"
    if kind in ("WorkerCrashedError", "ActorDiedError"):
        return f"the Ray worker running the check died: {first_line(exc)}"
    if kind == "TaskCancelledError":
        return "its Ray task was cancelled"
    if kind == "GetTimeoutError":
        return "its answer did not arrive"
    cause = getattr(exc, "cause", None)  # RayTaskError: what the task itself raised
    if isinstance(cause, BaseException):
        return f"the check's Ray task failed: {type(cause).__name__}: {first_line(cause)}"
    return f"the check's Ray task failed: {kind}: {first_line(exc)}"


def dead_outcomes(nodes: list[RayNode]) -> list[NodeOutcome]:
    """Dead nodes, once per name, leaving out a name an alive node has (a raylet restarted on the same host
    leaves its old self behind as dead)."""
    alive_names = {provisional_name(n) for n in nodes if n.alive}
    seen: set[str] = set()
    outcomes = []
    for node in nodes:
        name = provisional_name(node)
        if node.alive or name in alive_names or name in seen:
            continue
        seen.add(name)
        outcomes.append(NodeOutcome(name, failure=DEAD_NODE))
    return outcomes


def provisional_name(node: RayNode) -> str:
    """The name Ray knows a node by (before its own answer names it)."""
    return choose_name("", "", node)


def choose_name(framed: str, host: str, node: RayNode) -> str:
    """The first usable of: the name in the node's report frames, the worker's host name, Ray's host name, its
    IP, its Ray id.  Names are data: one that is no plain host name is passed over (it names a file)."""
    for candidate in (framed, host, node.hostname.split(".")[0], node.ip):
        if candidate and is_safe_node_name(candidate):
            return candidate
    return f"ray-{node.node_id[:12]}" if is_safe_node_name(node.node_id[:12]) else "ray-node"


def unique_names(outcomes: list[NodeOutcome]) -> list[NodeOutcome]:
    """Two Ray nodes on one host (a common test set-up) would write one file: number the repeats."""
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.node] = counts.get(outcome.node, 0) + 1
    seen: dict[str, int] = {}
    for outcome in outcomes:
        if counts[outcome.node] > 1:
            seen[outcome.node] = seen.get(outcome.node, 0) + 1
            outcome.node = f"{outcome.node}-{seen[outcome.node]}"
    return outcomes
