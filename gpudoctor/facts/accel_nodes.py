"""The non-NVIDIA accelerator device nodes (/dev/kfd, /dev/dri/renderD*, /dev/accel*, /dev/vfio/*) and the
groups of the user who would open them (``accel-device-nodes.json``).

ROCm opens ``/dev/kfd`` (the compute interface every AMD GPU shares) and one ``/dev/dri/renderD<N>`` per GPU;
both are owned by a group (``render`` on newer udev, ``video`` on older ones) that the user must be in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.facts.json_values import json_bool, json_dict, json_int, json_list, json_text
from gpudoctor.facts.tolerant import never_raises

KFD = "/dev/kfd"
_RENDER = re.compile(r"^/dev/dri/renderD(\d{1,5})$")


@dataclass(frozen=True)
class AccelNode:
    path: str
    char_device: bool | None = None
    mode: str | None = None  # "0o660"
    group: str | None = None  # owning group's name ("render")
    readable: bool | None = None
    writable: bool | None = None
    error: str | None = None
    gid: int | None = None
    directory: bool | None = None

    @property
    def usable(self) -> bool | None:
        """Whether this user may open it read-write (what ROCm asks of /dev/kfd); None when not known."""
        if self.readable is None or self.writable is None:
            return None
        return self.readable and self.writable


@dataclass(frozen=True)
class AccelNodes:
    collected: bool = False
    nodes: dict[str, AccelNode] = field(default_factory=dict)
    user_groups: tuple[str, ...] = ()  # names of this user's groups
    uid: int | None = None
    is_root: bool | None = None
    dri_directory: bool | None = None  # /dev/dri exists
    error: str | None = None  # the scan's own error, when it failed

    @property
    def kfd(self) -> AccelNode | None:
        return self.nodes.get(KFD)

    @property
    def render_nodes(self) -> tuple[AccelNode, ...]:
        """The /dev/dri/renderD* nodes in minor order."""
        found = [(int(m.group(1)), node) for path, node in self.nodes.items() if (m := _RENDER.match(path))]
        return tuple(node for _, node in sorted(found, key=lambda item: item[0]))


def _node(path: str, value: object) -> AccelNode:
    record = json_dict(value)
    return AccelNode(
        path=path,
        char_device=json_bool(record.get("char_device")),
        mode=json_text(record.get("mode")),
        group=json_text(record.get("group")),
        readable=json_bool(record.get("readable")),
        writable=json_bool(record.get("writable")),
        error=json_text(record.get("error")),
        gid=json_int(record.get("gid")),
        directory=json_bool(record.get("directory")),
    )


@never_raises(AccelNodes)
def parse_accel_nodes(data: object) -> AccelNodes:
    """``accel-device-nodes.json`` as typed nodes and this user's groups; ``collected`` False when absent."""
    if not isinstance(data, dict):
        return AccelNodes()
    nodes = {
        path: _node(path, value)
        for path, value in json_dict(data.get("nodes")).items()
        if isinstance(path, str) and path.startswith("/dev/")
    }
    groups: list[str] = []
    for item in json_list(data.get("groups")):
        name = json_text(json_dict(item).get("name")) if isinstance(item, dict) else json_text(item)
        if name is not None and name not in groups:
            groups.append(name)
    uid = json_int(data.get("uid"))
    is_root = json_bool(data.get("root"))
    return AccelNodes(
        collected=True,
        nodes=nodes,
        user_groups=tuple(groups),
        uid=uid,
        is_root=is_root if is_root is not None else (uid == 0 if uid is not None else None),
        dri_directory=json_bool(data.get("dri_directory")),
        error=json_text(data.get("error")),
    )
