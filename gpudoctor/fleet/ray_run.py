"""``fleet run --ray``: one task pinned to each alive node (node-affinity scheduling), each running
``gpudoctor fleet node-check``; nodes that do not answer within the budget are reported.  (Stub.)"""

from __future__ import annotations

import argparse

from gpudoctor.errors import UsageError
from gpudoctor.fleet.gather import NodeOutcome


def run_ray(args: argparse.Namespace) -> list[NodeOutcome]:
    raise UsageError("fleet run --ray is not built yet")
