"""A node's name: where it comes from on a node, and the file name a gatherer gives its report.

Node names come from the scheduler (Slurm's ``SLURMD_NODENAME``, Ray's node records) or from a host name:
data, never trusted as a path.  A name that is not a plain host-name token is refused as a file name.
"""

from __future__ import annotations

import os
import re
import socket

from gpudoctor.errors import UsageError

# RFC 1123 host-name characters plus "_" (Slurm node names allow it); no "/" or "..", never empty.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})$")
NODE_PLACEHOLDER = "{node}"


def this_node_name(environ: dict[str, str] | None = None) -> str:
    """The node's own name: Slurm's ``SLURMD_NODENAME`` (set in every step and hook), else the host name's
    first label (Ray workers, Kubernetes pods: ``socket.gethostname()``)."""
    env = os.environ if environ is None else environ
    name = env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    return name or "localhost"


def is_safe_node_name(name: str) -> bool:
    return bool(_SAFE_NAME.match(name)) and ".." not in name


def report_file_name(node: str) -> str:
    """``<node>.json``; a name that could escape the folder (a "/", "..", control characters) is refused."""
    if not is_safe_node_name(node):
        raise UsageError(f"node name {node!r} is not a plain host name; refusing to use it as a file name")
    return f"{node}.json"


def expand_node(template: str, node: str) -> str:
    """``--from snaps/{node}``: the per-node snapshot path of a rehearsal (every node diagnoses its own)."""
    if NODE_PLACEHOLDER in template and not is_safe_node_name(node):
        raise UsageError(f"node name {node!r} is not a plain host name; refusing to put it into a path")
    return template.replace(NODE_PLACEHOLDER, node)
