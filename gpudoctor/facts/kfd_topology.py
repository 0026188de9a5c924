"""The KFD topology (/sys/class/kfd/kfd/topology) as typed nodes and links.

(Stub: filled in with the KFD work.)
"""

from __future__ import annotations

from gpudoctor.facts.amd_model import KfdTopology


def parse_kfd_topology(data: object) -> KfdTopology | None:
    """``kfd-topology.json`` as typed nodes and links; None when not collected or unreadable."""
    return None
