"""``gpudoctor slurm-healthcheck``: the Slurm Prolog / HealthCheckProgram entry (drain on a problem, resume
a drain of ours once fixed)."""

from __future__ import annotations

import argparse

from gpudoctor.commands.common import guarded
from gpudoctor.commands.node_run import produce_report, verdict_of


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.fleet.nodes import expand_node, this_node_name
    from gpudoctor.fleet.slurm_healthcheck import act_on_verdict

    node = args.node or this_node_name()
    if args.from_path:
        args.from_path = expand_node(args.from_path, node)
    node_run = produce_report(args)
    return act_on_verdict(node, verdict_of(node_run, args), args)
