"""Reading Slurm's node states (scontrol, sinfo, srun's error lines) and the health check's decisions."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.fleet.slurm_healthcheck import Action, decide
from gpudoctor.fleet.slurm_run import srun_argv, srun_lines_by_node
from gpudoctor.fleet.slurm_state import SlurmNode, parse_hostnames, parse_scontrol_node, parse_sinfo_nodes, state_words
from gpudoctor.verdict import Verdict, VerdictState

# Printed by Slurm 22.05.8's `scontrol show node -o node2` in the local cluster (../shared/tools), after
# `scontrol update nodename=node2 state=drain reason=maintenance`.
SCONTROL_22_05 = (
    "NodeName=node2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.40 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=node2 "
    "Port=17502 Version=22.05.8 OS=Linux 6.18.44-fc-v769 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0 "
    "FreeMem=20022 Sockets=2 Boards=1 State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
    "MCS_label=N/A Partitions=debug  BootTime=2026-11-25T15:44:23 SlurmdStartTime=2026-11-26T04:37:23 "
    "LastBusyTime=2026-11-26T04:37:23 CfgTRES=cpu=2,mem=1M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 "
    "AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=maintenance [root@2026-11-26T04:37:23]"
)
# srun's own stderr lines in that cluster (a node-check exiting 1; a Prolog that failed).
SRUN_STDERR = (
    "srun: error: node2: task 1: Exited with exit code 1\n"
    "srun: Prolog failure on node node3\n"
    "srun: error: Task launch for StepId=1.0 failed on node node3: Job prolog failed\n"
    "srun: error: Application launch failed: Job prolog failed\n"
)


def test_scontrol_line_gives_state_and_reason_without_the_stamp() -> None:
    node = parse_scontrol_node(SCONTROL_22_05, "node2")
    assert node == SlurmNode("node2", "IDLE+DRAIN", "maintenance")
    assert node.out_of_service and not node.drained_by_gpudoctor and node.why_unavailable() == "drained"
    assert parse_scontrol_node(SCONTROL_22_05, "node1") is None
    ours = SCONTROL_22_05.replace("Reason=maintenance", "Reason=gpudoctor: DRV002 a → b x=y") + " Comment=hi"
    assert parse_scontrol_node(ours, "node2") == SlurmNode("node2", "IDLE+DRAIN", "gpudoctor: DRV002 a → b x=y")


def test_sinfo_states_and_reasons() -> None:
    text = "node1|debug*|idle|none\nnode2|debug*|down*|Not responding\nnode3|debug*|drained|gpudoctor: x|y\n"
    text += "node1|gpu|idle|none\nnode4|debug*|idle~|none\nnode5|debug*|mixed|none\n"
    nodes = {n.name: n for n in parse_sinfo_nodes(text)}
    assert list(nodes) == ["node1", "node2", "node3", "node4", "node5"]
    assert nodes["node1"].why_unavailable() is None and nodes["node1"].partition == "debug*"
    assert nodes["node2"].why_unavailable() == "down" and nodes["node2"].reason == "Not responding"
    assert nodes["node3"].reason == "gpudoctor: x|y" and nodes["node3"].drained_by_gpudoctor
    assert nodes["node4"].why_unavailable() == "powered down"
    assert nodes["node5"].why_unavailable() is None
    assert state_words("IDLE+DRAIN+NOT_RESPONDING") == {"idle", "drain", "not_responding"}
    assert parse_hostnames("node1\nnode2\n\n") == ["node1", "node2"]


def test_srun_error_lines_are_mapped_to_their_nodes() -> None:
    said = srun_lines_by_node(SRUN_STDERR)
    assert said == {
        "node2": "node2: task 1: Exited with exit code 1",
        "node3": "Task launch for StepId=1.0 failed on node node3: Job prolog failed",
    }


def test_srun_runs_one_labelled_task_per_node_within_the_budget() -> None:
    args = argparse.Namespace(
        time_budget=100.0, level="quick", partition="gpu", gpudoctor="/opt/gd", fail_on="problem", from_path=None
    )
    argv = srun_argv(args, ["a1", "a2"])
    assert argv[:8] == [
        "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=a1,a2", "--kill-on-bad-exit=0", "--label",
        "--job-name=gpudoctor-fleet", "--time=3",
    ]  # fmt: skip
    assert "--partition=gpu" in argv
    assert argv[argv.index("--") + 1 :] == [
        "/opt/gd", "fleet", "node-check", "--level", "quick", "--budget", "100", "--fail-on", "problem",
    ]  # fmt: skip


def test_site_srun_options_go_before_the_command_and_a_bare_word_is_refused() -> None:
    from gpudoctor.cli import build_parser

    args = build_parser().parse_args(
        ["fleet", "run", "--slurm", "-o", "out", "--srun-arg=--exclusive", "--srun-arg=--account=ops"]
    )
    argv = srun_argv(args, ["a1"])
    assert argv.index("--exclusive") < argv.index("--") and argv.index("--account=ops") < argv.index("--")
    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(["fleet", "run", "--slurm", "-o", "out", "--srun-arg", "hostname"])
    assert refused.value.code == 2


def _verdict(state: VerdictState, reason: str = "DRV002 mismatch") -> Verdict:
    return Verdict(state, "DRV002", reason, 1 if state is VerdictState.PROBLEM else 0, 0)


def test_health_check_decisions() -> None:
    problem, ok, unknown = (
        _verdict(VerdictState.PROBLEM),
        _verdict(VerdictState.OK, "ok"),
        _verdict(VerdictState.UNKNOWN),
    )
    idle = SlurmNode("n", "IDLE")
    ours = SlurmNode("n", "IDLE+DRAIN", "gpudoctor: DRV002 mismatch")
    older = SlurmNode("n", "IDLE+DRAIN", "gpudoctor: DRV001 older")
    theirs = SlurmNode("n", "IDLE+DRAIN", "maintenance")
    down = SlurmNode("n", "DOWN+NOT_RESPONDING", "Not responding")
    assert decide(idle, problem).action is Action.DRAIN
    assert decide(None, problem).action is Action.DRAIN
    assert decide(ours, problem).action is Action.KEEP
    assert decide(older, problem).action is Action.UPDATE_REASON
    assert decide(theirs, problem).action is Action.KEEP and "someone else" in decide(theirs, problem).why
    assert decide(down, problem).action is Action.KEEP
    assert decide(ours, ok).action is Action.RESUME
    assert decide(theirs, ok).action is Action.KEEP
    assert decide(idle, ok).action is Action.KEEP
    assert decide(ours, unknown, "pass").action is Action.KEEP
    assert decide(idle, unknown, "drain").action is Action.DRAIN


@given(st.text(max_size=400))
def test_parsers_take_garbage(text: str) -> None:
    node = parse_scontrol_node(text)
    if node is not None:
        node.why_unavailable()
    for found in parse_sinfo_nodes(text):
        found.why_unavailable()
    parse_hostnames(text)
    srun_lines_by_node(text)
    state_words(text)


@given(st.lists(st.sampled_from(["NodeName=", "n1", " ", "State=", "IDLE+DRAIN", "Reason=", "[a@b]", "=", "Comment="])))
def test_scontrol_parser_takes_near_lines(parts: list[str]) -> None:
    node = parse_scontrol_node("".join(parts))
    assert node is None or node.name
