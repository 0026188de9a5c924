"""``gpudoctor fleet k8s -o DIR``: the Kubernetes manifests (DaemonSet, node-problem-detector plugin)."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    from gpudoctor.evidence.safe_write import write_directory
    from gpudoctor.generate.k8s_manifests import K8sRequest, k8s_manifests

    files = k8s_manifests(
        K8sRequest(
            image=args.image,
            namespace=args.namespace,
            interval_s=args.interval,
            level=args.level,
            budget_s=args.time_budget,
        )
    )
    write_directory(args.output, files, force=args.force)
    for name in sorted(files):
        sys.stderr.write(f"wrote {args.output}/{name}\n")
    return 0
