"""What a Ray task does on its node: run ``gpudoctor fleet node-check`` there and hand its output back.

Plain Python with no Ray in it: the driver wraps :func:`node_check_task` with ``ray.remote``, and Ray ships it
by reference (``gpudoctor.fleet.ray_task.node_check_task``), so the module must be importable on every node,
which it is wherever gpudoctor is installed.  The check runs in a process of its own through the hardened
runner, never in the Ray worker: a hung driver call there is killed with everything it started, and the
worker's Python (Ray's imports, its threads) never shapes what the check sees.
"""

from __future__ import annotations

import sys
from typing import TypedDict

# The stderr kept for the gatherer: enough for the last lines of a traceback, small on the wire.
STDERR_TAIL_CHARS = 2000


class NodeAnswer(TypedDict):
    """What comes back from one node (plain types only: Ray pickles it)."""

    host: str  # the node's own name (:func:`gpudoctor.fleet.nodes.this_node_name`)
    stdout: str  # the node-check's tagged report lines
    exit_code: int | None
    stderr_tail: str
    error: str | None  # the runner's: not found, did not answer in time, ...
    timed_out: bool
    timeout_s: float  # the limit the runner applied on the node


def node_check_argv(
    command: str | None,
    level: str,
    budget: float,
    from_path: str | None,
    fail_on: str,
) -> list[str]:
    """The node-side command line: ``--gpudoctor PATH`` as given, else ``<python> -m gpudoctor`` where the
    empty first word stands for the node's own Python (the Ray worker's interpreter, which has gpudoctor since
    it imported this module; the driver cannot know its path)."""
    head = [command] if command else ["", "-m", "gpudoctor"]
    argv = [*head, "fleet", "node-check", "--level", level, "--budget", f"{budget:g}", "--fail-on", fail_on]
    if from_path:
        argv += ["--from", from_path]
    return argv


def node_check_task(argv: list[str], timeout: float) -> NodeAnswer:
    """Run the node check (``argv`` from :func:`node_check_argv`, built here when ``argv[0]`` is empty so the
    node's interpreter is used) for at most ``timeout`` seconds.  Never raises for the command's failures: they
    come back in the answer.  A Ray cancel (KeyboardInterrupt here) makes the runner kill the check first."""
    from gpudoctor.evidence.run_command import run_command
    from gpudoctor.fleet.nodes import this_node_name

    if not argv[0]:
        argv = [sys.executable, *argv[1:]]
    item = run_command("gpudoctor fleet node-check", argv, timeout)
    return NodeAnswer(
        host=this_node_name(),
        stdout=item.text or "",
        exit_code=item.exit_code,
        stderr_tail=(item.stderr or "")[-STDERR_TAIL_CHARS:],
        error=item.error,
        timed_out=bool(item.timed_out),
        timeout_s=timeout,
    )
