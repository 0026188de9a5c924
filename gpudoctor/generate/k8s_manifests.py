"""Kubernetes manifests for fleets: a DaemonSet running the check on GPU nodes and a node-problem-detector
custom plugin.  (Stub of the skeleton.)"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class K8sRequest:
    image: str | None
    namespace: str
    interval_s: float
    level: str
    budget_s: float | None


def k8s_manifests(request: K8sRequest) -> dict[str, str]:
    """File name -> text, for ``fleet k8s -o DIR``."""
    return {}
