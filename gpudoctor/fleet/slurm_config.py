"""The slurm.conf lines for ``gpudoctor slurm-healthcheck``.  (Stub of the skeleton.)"""

from __future__ import annotations

import argparse


def slurm_config_text(args: argparse.Namespace) -> str:
    return "# not built yet\n"
