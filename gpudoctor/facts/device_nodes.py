"""Facts from ``device-nodes.json``: the /dev/nvidia* nodes CUDA opens."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.facts.json_values import json_dict


@dataclass(frozen=True)
class DeviceNode:
    path: str
    char_device: bool | None = None
    mode: str | None = None
    readable: bool | None = None
    writable: bool | None = None


@dataclass(frozen=True)
class DeviceNodeFacts:
    collected: bool = False
    nodes: dict[str, DeviceNode] = field(default_factory=dict)
    uid: int | None = None

    def gpu_nodes(self) -> list[DeviceNode]:
        """/dev/nvidia0, /dev/nvidia1, ... (one per GPU)."""
        return [n for p, n in sorted(self.nodes.items()) if re.fullmatch(r"/dev/nvidia\d+", p)]


def parse_device_nodes(data: object) -> DeviceNodeFacts:
    if not isinstance(data, dict):
        return DeviceNodeFacts()
    uid = data.get("uid")
    nodes: dict[str, DeviceNode] = {}
    for path, record in json_dict(data.get("nodes")).items():
        if not isinstance(path, str) or not isinstance(record, dict):
            continue

        def flag(key: str) -> bool | None:
            value = record.get(key)  # noqa: B023 - called at once, inside the loop
            return value if isinstance(value, bool) else None

        nodes[path] = DeviceNode(
            path=path,
            char_device=flag("char_device"),
            mode=record.get("mode") if isinstance(record.get("mode"), str) else None,
            readable=flag("readable"),
            writable=flag("writable"),
        )
    return DeviceNodeFacts(
        collected=True, nodes=nodes, uid=uid if isinstance(uid, int) and not isinstance(uid, bool) else None
    )
