"""The parts of ``fleet run --ray`` that need no cluster: the node task run here, answers turned into outcomes
(garbage included), node names, addresses, and Ray missing."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.errors import UsageError
from gpudoctor.fleet.frames import encode
from gpudoctor.fleet.nodes import is_safe_node_name, this_node_name
from gpudoctor.fleet.ray_connect import RayNode, check_reachable, first_line, tcp_target
from gpudoctor.fleet.ray_run import DEAD_NODE, choose_name, dead_outcomes, outcome_of, task_failure, unique_names
from gpudoctor.fleet.ray_task import NodeAnswer, node_check_argv, node_check_task
from tests.fleet.ray_cluster import HEALTHY_SNAPSHOT

NODE = RayNode(node_id="a1b2c3d4e5f6a7b8", hostname="gpu7.cluster.example", ip="10.0.0.7", alive=True)


def answer(stdout: str = "", **fields: Any) -> NodeAnswer:
    base = NodeAnswer(host="gpu7", stdout=stdout, exit_code=0, stderr_tail="", error=None, timed_out=False, timeout_s=8)
    return NodeAnswer(**{**base, **fields})  # type: ignore[typeddict-item]


def test_the_node_task_runs_the_node_check_and_hands_back_its_frames() -> None:
    argv = node_check_argv(None, "quick", 60, str(HEALTHY_SNAPSHOT), "problem")
    assert argv[0] == ""  # the node's own Python, filled in there
    got = node_check_task(argv, timeout=120)
    assert got["exit_code"] == 0 and got["error"] is None and not got["timed_out"], got["stderr_tail"]
    outcome = outcome_of(got, NODE)
    assert outcome.answered and outcome.exit_code == 0
    assert outcome.node == got["host"]  # the node's own name, from its frames


def test_a_check_past_its_limit_is_stopped_on_the_node() -> None:
    got = node_check_task(["sleep", "30"], timeout=1)
    assert got["timed_out"]
    assert outcome_of(got, NODE).failure == "did not answer within 1 s; its check was stopped on the node"


def test_a_missing_gpudoctor_on_the_node_is_one_line() -> None:
    got = node_check_task(["/nonexistent/synthetic-gpudoctor", "fleet", "node-check"], timeout=5)
    outcome = outcome_of(got, NODE)
    assert outcome.failure == "gpudoctor could not run there: command not found: /nonexistent/synthetic-gpudoctor"
    assert outcome.node == this_node_name()  # the worker's own name, as no frame came


def test_an_answer_without_frames_names_the_last_stderr_line() -> None:
    outcome = outcome_of(answer(exit_code=1, stderr_tail="Traceback ...\nImportError: no gpudoctor\n"), NODE)
    assert outcome.failure == "its gpudoctor printed no report (exit code 1): ImportError: no gpudoctor"


def test_a_damaged_report_is_not_kept() -> None:
    lines = list(encode("gpu7", 0, {"summary": {"exit_code": 0}}))
    lines[1] = lines[1].replace('"exit_code":0', '"exit_code":7')
    outcome = outcome_of(answer("\n".join(lines)), NODE)
    assert not outcome.answered and outcome.failure and "damaged" in outcome.failure


@given(st.text(max_size=400), st.text(max_size=40), st.text(max_size=200))
def test_any_answer_becomes_an_outcome_with_a_safe_name(stdout: str, host: str, stderr: str) -> None:
    """synthetic: garbage output, host names and stderr from a node never raise, never name an unsafe file."""
    outcome = outcome_of(answer(stdout, host=host, stderr_tail=stderr, exit_code=None), NODE)
    assert is_safe_node_name(outcome.node)
    assert outcome.answered or outcome.failure


def test_names_prefer_the_frames_then_the_host_then_ray() -> None:
    assert choose_name("node1", "x", NODE) == "node1"
    assert choose_name("", "../etc", NODE) == "gpu7"  # an unsafe host name is passed over
    bare = RayNode(node_id="ffff0000aaaa1111", hostname="", ip="", alive=True)
    assert choose_name("", "", bare) == "ray-ffff0000aaaa"


def test_dead_nodes_are_reported_once_unless_alive_under_the_same_name() -> None:
    nodes = [
        RayNode("1", "node1", "127.0.1.1", True),
        RayNode("2", "node1", "127.0.1.1", False),  # node1's raylet restarted: its old self is dead
        RayNode("3", "node4", "127.0.1.4", False),
        RayNode("4", "node4", "127.0.1.4", False),
    ]
    assert [(o.node, o.failure) for o in dead_outcomes(nodes)] == [("node4", DEAD_NODE)]


def test_two_nodes_with_one_name_get_two_files() -> None:
    outcomes = unique_names(dead_outcomes([RayNode("1", "h", "a", False), RayNode("2", "h", "b", False)]))
    assert [o.node for o in outcomes] == ["h"]
    from gpudoctor.fleet.gather import NodeOutcome

    named = unique_names([NodeOutcome("h", failure="x"), NodeOutcome("h", failure="y"), NodeOutcome("g")])
    assert [o.node for o in named] == ["h-1", "h-2", "g"]


def test_ray_errors_become_one_line() -> None:
    class NodeDiedError(Exception):
        """synthetic: named like Ray's."""

    assert task_failure(NodeDiedError("long\ntext")) == "the node died in Ray during the check"
    assert task_failure(RuntimeError("first\nsecond")) == "the check's Ray task failed: RuntimeError: first"
    assert first_line(ValueError("")) == "ValueError"


@pytest.mark.parametrize(
    ("address", "target"),
    [("auto", None), ("10.0.0.1:6379", ("10.0.0.1", 6379)), ("ray://head:10001", ("head", 10001)),
     ("[::1]:6379", ("::1", 6379))],
)  # fmt: skip
def test_addresses(address: str, target: tuple[str, int] | None) -> None:
    assert tcp_target(address) == target


@pytest.mark.parametrize("address", ["head", "head:", ":6379", "head:99999", "head:x"])
def test_bad_addresses_are_usage_errors(address: str) -> None:
    with pytest.raises(UsageError):
        tcp_target(address)


def test_an_unreachable_address_fails_fast() -> None:
    with pytest.raises(UsageError, match=r"cannot reach the Ray cluster at 127\.0\.0\.1:9: "):
        check_reachable("127.0.0.1:9", timeout=5)  # loopback, the discard port: nothing listens there


def test_without_ray_the_command_says_to_install_it(tmp_path: Any) -> None:
    # ray made unimportable in a child process, as on a machine without it.
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from gpudoctor.cli import main\n"
        f"sys.exit(main(['fleet', 'run', '--ray', '127.0.0.1:9', '-o', {str(tmp_path / 'r')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'ray==" in lines[0], done.stderr
