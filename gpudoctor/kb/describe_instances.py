"""``gpudoctor kb instances [TYPE]``: the clouds' GPU instance types, or one type in full.

``describe_instances(None)`` is the overview (each provider's rows, Google Cloud's GPU series, the family rules
and the GPU images); ``describe_instances("p4d.24xlarge")`` shows one type (``"azure/ND96asr_v4"`` picks the
provider).  An unknown type raises ``KnowledgeError`` (one line, exit code 2) naming the nearest known types.
Like the other ``describe_*`` views it returns the lines; the caller joins them.
"""

from __future__ import annotations

import difflib

from gpudoctor.kb import cloud_instances, loading
from gpudoctor.kb.cloud_instances import InstanceType
from gpudoctor.kb.describe_format import header, sources_block, table
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import as_dict, as_list

_NAMES = {"aws": "AWS", "gcp": "Google Cloud", "azure": "Azure", "oci": "Oracle Cloud", "lambda": "Lambda"}


def describe_instances(item: str | None = None) -> list[str]:
    """The overview (``item`` None or blank) or one instance type's lines."""
    if item is None or not str(item).strip():
        return instances_table()
    return instances_item(str(item))


def instances_table() -> list[str]:
    data = loading._load(cloud_instances.DATA_FILE)
    lines = header("Cloud GPU instance types: GPUs, memory, interconnect, network, GPU images", data)
    for provider in cloud_instances.PROVIDERS:
        rows = cloud_instances.instance_types(provider)
        lines.append(f"{_NAMES[provider]} ({len(rows)} type{'' if len(rows) == 1 else 's'})")
        if rows:
            lines += table(
                ["type", "GPUs", "interconnect", "network"],
                [[row.name, row.expected, row.gpu_interconnect, row.network] for row in rows],
            )
        note = cloud_instances.family_note(provider)
        if note:
            lines.append(f"  families: {note}")
        lines.append("")
    series = cloud_instances.series()
    if series:
        lines += ["GPU series without size rows (the GPU count is fixed per machine type)", ""]
        lines += table(
            ["provider", "series", "names", "GPU", "network"],
            [
                [s.get("provider"), s.get("label"), f"{s.get('prefix')}*", s.get("gpu_model"), s.get("network")]
                for s in series
            ],
        )
        lines.append("")
    images = [as_dict(raw) for raw in as_list(data.get("images"))]
    if images:
        lines += ["GPU images the providers ship", ""]
        lines += table(
            ["provider", "image", "for"],
            [
                [i.get("provider"), i.get("name"), ", ".join(str(p).rstrip(".") for p in as_list(i.get("applies_to")))]
                for i in images
            ],
        )
    lines.append("")
    lines.append("One type: gpudoctor kb instances TYPE (e.g. p4d.24xlarge, ND96asr_v4)")
    return lines + sources_block(data)


def _matches(item: str) -> list[InstanceType]:
    text = item.strip()
    wanted = None
    if "/" in text:
        head, _, rest = text.partition("/")
        if head.strip().lower() in cloud_instances.PROVIDERS:
            wanted, text = head.strip().lower(), rest
    providers = (wanted,) if wanted else cloud_instances.PROVIDERS
    found = (cloud_instances.instance_type(provider, text) for provider in providers)
    return [row for row in found if row is not None]


def _unknown(item: str) -> KnowledgeError:
    shown = item.strip()[:40]
    names = [row.name for row in cloud_instances.instance_types()]
    lowered = {name.lower(): name for name in names}
    lowered.update({name.lower().removeprefix("standard_"): name for name in names})
    near = difflib.get_close_matches(shown.lower(), list(lowered), n=3, cutoff=0.5)
    families = [_NAMES[p] for p in cloud_instances.PROVIDERS if cloud_instances.has_gpus(p, shown) is True]
    family = f" (a GPU family of {' or '.join(families)}, not in the table)" if families and len(families) < 3 else ""
    hint = f"; near: {', '.join(dict.fromkeys(lowered[n] for n in near))}" if near else ""
    return KnowledgeError(f"unknown instance type {shown!r}{family}{hint} (gpudoctor kb instances lists them)")


def instances_item(item: str) -> list[str]:
    rows = _matches(item)
    if not rows:
        raise _unknown(item)
    lines: list[str] = []
    for row in rows:
        lines += _row_lines(row) + [""]
    return lines[:-1]


def _row_lines(row: InstanceType) -> list[str]:
    lines = [f"{_NAMES.get(row.provider, row.provider)} {row.name}: {row.expected}"]
    fields = [
        ("GPU", f"{row.gpu_model} ({row.gpu_vendor})"),
        ("GPUs", f"{row.gpu_share} of one GPU (vGPU)" if row.gpu_share else f"{row.gpu_count:g}"),
        ("memory", f"{row.gpu_memory_gib:g} GB per GPU" if row.gpu_memory_gib else "not stated by the source"),
        ("interconnect", row.gpu_interconnect or "not documented by the sources read"),
        ("host link", cloud_instances.expected_host_link(row.provider, row.name) or "not stated by the provider"),
        ("network", row.network or "not stated by the source"),
        ("images", ", ".join(row.driver_images) or "none listed"),
        ("host CPU", row.host_arch),
        ("note", row.note),
        ("source", row.source),
    ]
    return lines + [f"  {label + ':':<13} {value}" for label, value in fields if value]
