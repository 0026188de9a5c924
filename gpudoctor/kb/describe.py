"""Plain-text views of the knowledge base for ``gpudoctor kb [topic]``.

``render_kb_text()`` gives the overview (each data file: what it holds, as of when, row
counts, sources); ``render_kb_text(topic="torch")`` and the other topics print one table
each.  ``render_kb_text(topic="xid", item="79")`` (or ``topic="xid:79"``) prints one Xid code.
No colour, no rich: the output is meant to be pasted into an issue.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpudoctor.kb import loading
from gpudoctor.kb.describe_errors import cause_item, causes_table, signature_item, signatures_table
from gpudoctor.kb.describe_hardware import (
    gpus_table,
    health_table,
    pcie_table,
    specs_table,
    xid_item,
    xid_table,
)
from gpudoctor.kb.describe_instances import instances_item, instances_table
from gpudoctor.kb.describe_ngc import ngc_item, ngc_table
from gpudoctor.kb.describe_notebooks import notebook_item, notebooks_table
from gpudoctor.kb.describe_rocm import rocm_table
from gpudoctor.kb.describe_software import (
    cudnn_table,
    cupy_table,
    docker_table,
    driver_table,
    jax_table,
    tensorflow_table,
    torch_table,
)
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import as_dict

TOPICS = (
    "driver",
    "torch",
    "tensorflow",
    "cudnn",
    "gpus",
    "jax",
    "cupy",
    "specs",
    "pcie",
    "xid",
    "health",
    "docker",
    "signatures",
    "causes",
    "rocm",
    "instances",
    "ngc",
    "notebooks",
)
_ALIASES = {
    "amd": "rocm",
    "gfx": "rocm",
    "pytorch": "torch",
    "tf": "tensorflow",
    "cuda": "driver",
    "gpu": "gpus",
    "drivers": "driver",
    "spec": "specs",
    "gpu-specs": "specs",
    "gpu_specs": "specs",
    "nvlink": "specs",
    "xids": "xid",
    "health_limits": "health",
    "health-limits": "health",
    "limits": "health",
    "images": "docker",
    "docker_cuda": "docker",
    "nvidia-cuda": "docker",
    "containers": "docker",
    "signature": "signatures",
    "errors": "signatures",
    "cause": "causes",
}
# Topics that take one item after them (``gpudoctor kb xid 79``).
_ITEM_TOPICS = ("xid", "signatures", "causes", "instances", "ngc", "notebooks")


# --------------------------------------------------------------------------- overview


def _overview(info: dict[str, Any]) -> list[str]:
    lines = ["gpudoctor knowledge base", ""]
    for stem, entry in info.items():
        if not isinstance(entry, dict):
            continue
        rows = as_dict(entry.get("rows"))
        counts = ", ".join(f"{name} {count}" for name, count in rows.items()) or "no rows"
        lines.append(f"{entry.get('file') or stem + '.json'}")
        if entry.get("holds"):
            lines.append(f"  holds:    {entry['holds']}")
        lines.append(f"  as of:    {entry.get('as_of') or '?'}")
        lines.append(f"  rows:     {counts}")
        lines.append(f"  sources:  {entry.get('sources', 0)}")
        if entry.get("coverage"):
            lines.append(f"  coverage: {entry['coverage']}")
        lines.append("")
    lines.append(f"Topics: gpudoctor kb {{{'|'.join(TOPICS)}}}")
    return lines


_RENDERERS: dict[str, Callable[[], list[str]]] = {
    "driver": driver_table,
    "torch": torch_table,
    "tensorflow": tensorflow_table,
    "cudnn": cudnn_table,
    "gpus": gpus_table,
    "jax": jax_table,
    "cupy": cupy_table,
    "specs": specs_table,
    "rocm": rocm_table,
    "pcie": pcie_table,
    "xid": xid_table,
    "health": health_table,
    "docker": docker_table,
    "signatures": signatures_table,
    "causes": causes_table,
    "instances": instances_table,
    "ngc": ngc_table,
    "notebooks": notebooks_table,
}


def render_kb_text(info: dict[str, Any] | None = None, topic: str | None = None, item: str | None = None) -> str:
    """The overview of the knowledge base (``info`` defaults to ``kb_info()``), or one topic's table.

    ``item`` picks one entry of a topic that has entries (``topic="xid", item="79"``); ``"xid:79"``
    as the topic says the same.  Raises ``KnowledgeError`` for a topic that is not one of ``TOPICS``,
    or an item the topic does not take.
    """
    if topic is not None:
        name = str(topic).strip().lower()
        if item is None and ":" in name:
            name, item = (part.strip() for part in name.split(":", 1))
        name = _ALIASES.get(name, name)
        renderer = _RENDERERS.get(name)
        if renderer is None:
            raise KnowledgeError(f"unknown knowledge-base topic {str(topic)[:40]!r}; topics: {', '.join(TOPICS)}")
        if item is not None and str(item).strip():
            if name not in _ITEM_TOPICS:
                raise KnowledgeError(
                    f"knowledge-base topic {name!r} takes no argument (only: {', '.join(_ITEM_TOPICS)})"
                )
            item_renderer = {
                "xid": xid_item,
                "signatures": signature_item,
                "causes": cause_item,
                "instances": instances_item,
                "ngc": ngc_item,
                "notebooks": notebook_item,
            }[name]
            return "\n".join(item_renderer(str(item).strip())).rstrip() + "\n"
        return "\n".join(renderer()).rstrip() + "\n"
    return "\n".join(_overview(info if isinstance(info, dict) else loading.kb_info())).rstrip() + "\n"
