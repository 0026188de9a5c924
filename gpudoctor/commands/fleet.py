"""``gpudoctor fleet run|report|k8s|slurm-config|node-check``: the fleet's commands, one module each below."""

from __future__ import annotations

import argparse
import importlib
from typing import Callable

from gpudoctor.commands.common import guarded

# Fleet command -> the module (gpudoctor.commands.<module>) whose ``run(args) -> exit code`` does it.
FLEET_MODULES = {
    "run": "fleet_run",
    "report": "fleet_report",
    "k8s": "fleet_k8s",
    "slurm-config": "fleet_slurm_config",
    "node-check": "fleet_node_check",
}


@guarded
def main(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"gpudoctor.commands.{FLEET_MODULES[args.fleet_command]}")
    run: Callable[[argparse.Namespace], int] = module.run
    return run(args)
