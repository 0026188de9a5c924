"""The command line of fleets: ``gpudoctor fleet run|report|k8s|slurm-config|node-check`` and
``gpudoctor slurm-healthcheck``.  Argument parsing only, standard library only (like ``gpudoctor.cli``)."""

from __future__ import annotations

import argparse
from typing import Any

from gpudoctor.cli_options import add_level_and_budget, add_timeout, input_path, positive_int, seconds

FLEET_REPORT_FORMATS = ("text", "json", "markdown", "html")


def _add_node_check_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="from_path",
        type=input_path,
        metavar="PATH",
        help="diagnose a snapshot instead of the live node; '{node}' in PATH becomes the node's name "
        "(snaps/{node}: each node reads its own, for rehearsals and tests)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("problem", "warning"),
        default="problem",
        help="a problem only (default), or a warning too, counts against the node",
    )


def _add_unknown(parser: argparse.ArgumentParser, prefix: str) -> None:
    parser.add_argument(
        "--unknown",
        choices=("pass", "drain"),
        default="pass",
        help=f"{prefix}when gpudoctor cannot judge the node (it failed, the budget ran out): pass (default; exit 0, "
        "the reason on stderr) or drain it",
    )


def _srun_option(value: str) -> str:
    """An srun option ("--account=ops"): a bare word would become srun's program and run instead of the check."""
    if not value.startswith("-") or value.strip() in ("-", "--"):
        raise argparse.ArgumentTypeError(f"{value!r} is not an srun option (write it as --srun-arg=--name=value)")
    return value


def add_fleet_commands(commands: argparse._SubParsersAction[Any]) -> None:
    _add_slurm_healthcheck(commands)
    fleet = commands.add_parser(
        "fleet",
        help="check every node of a cluster through Slurm, Ray or Kubernetes, and aggregate the reports",
        description="Run gpudoctor on every node through the scheduler the cluster already has (never an agent or "
        "SSH loop of its own), and turn the node reports into one fleet report.",
    )
    fleet_commands = fleet.add_subparsers(dest="fleet_command", metavar="FLEET_COMMAND", parser_class=type(fleet))
    fleet_commands.required = True
    _add_run(fleet_commands)
    _add_report(fleet_commands)
    _add_k8s(fleet_commands)
    _add_slurm_config(fleet_commands)
    _add_node_check(fleet_commands)


def _add_slurm_healthcheck(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hook = commands.add_parser(
        "slurm-healthcheck",
        help="Slurm Prolog / HealthCheckProgram: drain this node with the reason when it has a problem, "
        "resume it once fixed",
        description="Check this node and act on the verdict in Slurm: a problem drains the node with a reason "
        "'gpudoctor: CODE ...' (visible in sinfo -R); once the node is healthy again, a drain gpudoctor set is "
        "resumed. A node drained by anyone else is never touched. Exit 0 ok, 1 problem (a failing Prolog also "
        "fails the job's launch there). The budget is 45 s unless given (slurmd kills a HealthCheckProgram after "
        "60 s). 'gpudoctor fleet slurm-config' prints the slurm.conf lines.",
    )
    add_level_and_budget(hook, "quick")
    # slurmd kills a HealthCheckProgram after 60 s (slurm.conf(5)): a budget well inside that by default.
    hook.set_defaults(time_budget=45.0)
    _add_node_check_target(hook)
    hook.add_argument(
        "--node",
        metavar="NAME",
        help="the Slurm node name (default: $SLURMD_NODENAME, which slurmd sets for its hooks, else the host name)",
    )
    _add_unknown(hook, "")
    hook.add_argument(
        "--dry-run", action="store_true", help="say what would be done to the node, change nothing in Slurm"
    )
    add_timeout(hook)


def _add_run(fleet_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = fleet_commands.add_parser(
        "run",
        help="run the check on every node (srun, or Ray tasks pinned per node) and gather the JSON reports",
        description="Run 'gpudoctor check' on every node through the scheduler and write one <node>.json per node "
        "into -o DIR (the same JSON as 'check --format json'), plus fleet-missing.json naming each node that "
        "did not answer and why. Then: gpudoctor fleet report DIR.",
    )
    engine = run.add_mutually_exclusive_group(required=True)
    engine.add_argument("--slurm", action="store_true", help="through Slurm: one srun task on each node")
    engine.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="through the Ray cluster at ADDRESS (host:port, or 'auto'): one task pinned to each alive node",
    )
    run.add_argument("--partition", metavar="P", help="Slurm: the partition's nodes (default: the default partition)")
    run.add_argument("--nodes", metavar="LIST", help="Slurm: these nodes (a hostlist: node[1-4],gpu7)")
    run.add_argument(
        "--srun-arg",
        dest="srun_args",
        action="append",
        type=_srun_option,
        default=[],
        metavar="OPTION",
        help="Slurm: one more srun option, repeatable: --srun-arg=--account=ops, --srun-arg=--reservation=maint. "
        "Where cgroups constrain devices (ConstrainDevices=yes) a step sees only the GPUs it asked for: add "
        "--srun-arg=--exclusive (or --srun-arg=--gres=gpu:8) so that the check sees every GPU of the node",
    )
    run.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder for the node reports")
    run.add_argument("--force", action="store_true", help="replace <node>.json files already in DIR")
    run.add_argument(
        "--gpudoctor",
        metavar="PATH",
        help="the gpudoctor command on the nodes (default: this one's Python, '-m gpudoctor': a shared install)",
    )
    add_level_and_budget(run, "standard")
    _add_node_check_target(run)
    run.set_defaults(time_budget=None)


def _add_report(fleet_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    report = fleet_commands.add_parser(
        "report",
        help="aggregate node reports: a nodes × areas table, nodes grouped by problem, drift, slow outliers",
        description="Read node reports (folders of <node>.json from 'fleet run', or report files copied by hand) "
        "and write one fleet report: a table of nodes × areas, nodes grouped by identical problem with the fix, "
        "configuration drift within groups of identical nodes (driver, CUDA, torch, PCIe links), and smoke "
        "figures below their GPU model's median (median/MAD). Reads the reports one at a time.",
    )
    report.add_argument("paths", nargs="+", type=input_path, metavar="DIR|FILE", help="node reports or folders of them")
    report.add_argument("--format", choices=FLEET_REPORT_FORMATS, default="text", help="output format (default: text)")
    report.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    report.add_argument("--force", action="store_true", help="replace FILE if it exists")


def _add_k8s(fleet_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    k8s = fleet_commands.add_parser(
        "k8s",
        help="write Kubernetes manifests: a DaemonSet running the check on GPU nodes, a node-problem-detector plugin",
        description="Write Kubernetes manifests into DIR: a DaemonSet that runs the check on every GPU node (NVIDIA "
        "runtime class, all GPUs visible without taking one from the scheduler) and a node-problem-detector "
        "custom plugin that sets a node condition from gpudoctor's verdict.",
    )
    k8s.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write (created)")
    k8s.add_argument("--force", action="store_true", help="replace files already in DIR")
    k8s.add_argument(
        "--image", metavar="IMAGE", help="the container image with gpudoctor (default: one built from DIR/Dockerfile)"
    )
    k8s.add_argument("--namespace", default="gpudoctor", metavar="NS", help="the namespace (default: gpudoctor)")
    k8s.add_argument(
        "--interval",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="how often each node is checked (default: 300)",
    )
    k8s.add_argument(
        "--runtime-class",
        default="nvidia",
        metavar="NAME",
        help="the RuntimeClass that gives pods the GPUs (default: nvidia, the GPU Operator's; '' for the cluster's "
        "default runtime)",
    )
    k8s.add_argument(
        "--npd-image",
        metavar="IMAGE",
        help="the node-problem-detector image its binary is copied from (default: the official registry.k8s.io one)",
    )
    k8s.add_argument(
        "--preflight",
        choices=("auto", "pypi", "wheel"),
        default="auto",
        help="without --image: where the Dockerfile's gpudoctor comes from, as for 'gpudoctor dockerfile' (auto: "
        "pypi for a release installed from an index, else this gpudoctor's wheel, written into DIR)",
    )
    add_level_and_budget(k8s, "quick")


def _add_slurm_config(fleet_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    config = fleet_commands.add_parser(
        "slurm-config",
        help="print the slurm.conf lines that run 'gpudoctor slurm-healthcheck' as Prolog and HealthCheckProgram",
        description="Print the slurm.conf lines (and the small wrapper script slurmd needs, since it runs hooks "
        "with an empty environment) for 'gpudoctor slurm-healthcheck' as HealthCheckProgram and Prolog.",
    )
    config.add_argument(
        "--gpudoctor", metavar="PATH", help="the gpudoctor command on the nodes (default: this one's full path)"
    )
    config.add_argument(
        "--interval",
        type=positive_int,
        default=300,
        metavar="SECONDS",
        help="HealthCheckInterval (default: 300)",
    )
    config.add_argument(
        "--wrapper-path",
        default="/etc/slurm/gpudoctor-healthcheck",
        metavar="PATH",
        help="where the wrapper will live on the nodes, for the Prolog= and HealthCheckProgram= lines "
        "(default: /etc/slurm/gpudoctor-healthcheck)",
    )
    config.add_argument(
        "--wrapper-only",
        action="store_true",
        help="print only the wrapper script (to redirect into --wrapper-path on every node)",
    )
    _add_unknown(config, "baked into the wrapper: ")
    add_level_and_budget(config, "quick")
    _add_node_check_target(config)


def _add_node_check(fleet_commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    node = fleet_commands.add_parser(
        "node-check",
        help="what 'fleet run' starts on each node: the check, its report printed in tagged lines for the gatherer",
        description="Run the check on this node and print its JSON report in short tagged lines (node name, part, "
        "checksum) that 'fleet run' gathers from the scheduler's output. You rarely run this yourself.",
    )
    add_level_and_budget(node, "standard")
    _add_node_check_target(node)
    add_timeout(node)
