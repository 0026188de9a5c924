"""The commands: one module per command, each wiring evidence -> facts -> checks -> results -> renderers.

The CLI imports only the module of the command it runs (``run``), so ``gpudoctor --help``
and ``--version`` never import one.  Each module has ``main(args) -> exit code``, wrapped by
:func:`gpudoctor.commands.common.guarded`.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Callable

# Command name -> the module (in this package) that runs it.
COMMAND_MODULES: dict[str, str] = {
    "check": "check",
    "collect": "collect",
    "list-checks": "list_checks",
    "explain": "explain",
    "schema": "schema",
    "kb": "kb",
    "smoke": "smoke",
    "topo": "topo",
    "dockerfile": "dockerfile",
    "install-script": "install_script",
    "fleet": "fleet",
    "slurm-healthcheck": "slurm_healthcheck",
}


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The ``main`` of the named command, its module imported now."""
    module = importlib.import_module(f"{__name__}.{COMMAND_MODULES[name]}")
    main: Callable[[argparse.Namespace], int] = module.main
    return main


# The commands that run external programs (evidence collection, probes, smoke workloads): while they run,
# Ctrl-C and SIGTERM also end the programs waiting in worker threads.  The others never start one, so they
# skip the runner's import (psutil) and stay as quick as --help.
RUNS_PROGRAMS = frozenset(
    {"check", "collect", "smoke", "topo", "dockerfile", "install-script", "fleet", "slurm-healthcheck"}
)


def run(name: str, args: argparse.Namespace) -> int:
    main = command(name)
    if name not in RUNS_PROGRAMS or getattr(args, "from_path", None):  # a snapshot is read, nothing is run
        return main(args)
    from gpudoctor.evidence.interrupts import stop_commands_on_signals

    with stop_commands_on_signals():
        return main(args)
