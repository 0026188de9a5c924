"""Acting on a node's verdict in Slurm: drain with the reason on a problem, resume a drain of ours once the
node is healthy, never touch a drain someone else set.  (Stub of the skeleton: says what it would do.)"""

from __future__ import annotations

import argparse
import sys

from gpudoctor.verdict import Verdict, VerdictState


def act_on_verdict(node: str, verdict: Verdict, args: argparse.Namespace) -> int:
    sys.stderr.write(f"{node}: {verdict.line()}\n")
    return 1 if verdict.state is VerdictState.PROBLEM else 0
