"""Read AMD's files into JSON-able evidence records: the KFD topology, ROCm installs, device nodes.

Files only, no commands; every function takes ``root`` so the same code reads a chroot or a container's
file system. Interpretation happens in ``gpudoctor.facts``.
"""

from __future__ import annotations


def scan_kfd_topology(root: str = "/") -> dict[str, object]:
    """/sys/class/kfd/kfd/topology: every node's properties, io_links and mem_banks, as text."""
    return {"readable": False, "error": "not implemented yet", "nodes": {}}


def scan_rocm_install(root: str = "/") -> dict[str, object]:
    """ROCm installs: /opt/rocm and /opt/rocm-* with their .info/version files."""
    return {"installs": []}


def scan_accel_device_nodes(root: str = "/") -> dict[str, object]:
    """/dev/kfd, /dev/dri/*, /dev/accel*, /dev/vfio/*: type, mode, owner group, whether this user may open
    them; and this user's groups by name."""
    return {"nodes": {}, "groups": []}
