"""``gpudoctor fleet run --slurm|--ray``: the check on every node through the scheduler, the reports gathered."""

from __future__ import annotations

import argparse

from gpudoctor.fleet.gather import (
    check_output_dir,
    fleet_exit_code,
    print_outcomes,
    write_outcomes,
)


def run(args: argparse.Namespace) -> int:
    check_output_dir(args.output)
    if args.slurm:
        from gpudoctor.fleet.slurm_run import run_slurm

        outcomes = run_slurm(args)
    else:
        from gpudoctor.fleet.ray_run import run_ray

        outcomes = run_ray(args)
    write_outcomes(args.output, outcomes, args.force)
    print_outcomes(outcomes)
    return fleet_exit_code(outcomes)
