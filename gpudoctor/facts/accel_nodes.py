"""The non-NVIDIA accelerator device nodes (/dev/kfd, /dev/dri/renderD*, /dev/accel*, /dev/vfio/*) and the
groups of the user who would open them.

(Stub: filled in with the AMD access work.)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AccelNode:
    path: str
    char_device: bool | None = None
    mode: str | None = None  # "0o660"
    group: str | None = None  # owning group's name ("render")
    readable: bool | None = None
    writable: bool | None = None
    error: str | None = None


@dataclass(frozen=True)
class AccelNodes:
    collected: bool = False
    nodes: dict[str, AccelNode] = field(default_factory=dict)
    user_groups: tuple[str, ...] = ()  # names of this user's groups
    uid: int | None = None


def parse_accel_nodes(data: object) -> AccelNodes:
    return AccelNodes()
