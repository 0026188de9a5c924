"""``fleet run --slurm``: one ``srun`` task per node running ``gpudoctor fleet node-check``; the reports taken
back apart from srun's output.  (Stub of the skeleton.)"""

from __future__ import annotations

import argparse

from gpudoctor.errors import UsageError
from gpudoctor.fleet.gather import NodeOutcome


def run_slurm(args: argparse.Namespace) -> list[NodeOutcome]:
    raise UsageError("fleet run --slurm is not built yet")
