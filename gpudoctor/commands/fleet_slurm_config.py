"""``gpudoctor fleet slurm-config``: the slurm.conf lines for ``slurm-healthcheck``."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    from gpudoctor.fleet.slurm_config import slurm_config_text

    sys.stdout.write(slurm_config_text(args))
    return 0
