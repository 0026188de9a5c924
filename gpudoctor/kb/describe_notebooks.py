"""``gpudoctor kb notebooks [KEY]``: the hosted notebook platforms, how each is recognised and its own way to a GPU."""

from __future__ import annotations

from gpudoctor.kb import loading, notebook_platforms
from gpudoctor.kb.describe_format import header, sources_block, table
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.loading import as_dict, as_list


def _markers(row: notebook_platforms.NotebookPlatformInfo) -> str:
    found = [*row.env_set, *(f"{name}={value}" for name, value in row.env_equals), *row.files]
    return ", ".join(found) or "-"


def notebooks_table() -> list[str]:
    data = loading._load(notebook_platforms.DATA_FILE)
    lines = header("Hosted notebook platforms: how each is recognised, and its own way to a GPU", data)
    rows = [
        [row.key, row.name, _markers(row), "yes" if row.root else "no", ",".join(row.sources) or "-"]
        for row in notebook_platforms.notebook_platforms()
    ]
    lines += table(["key", "platform", "recognised by (any of)", "root", "sources"], rows)
    lines += ["", "How to get a GPU there (`gpudoctor kb notebooks KEY` for one platform):", ""]
    for row in notebook_platforms.notebook_platforms():
        lines.append(f"  {row.key}: {row.get_gpu}")
    return lines + sources_block(data)


def notebook_item(key: str) -> list[str]:
    """One platform: its markers, what says the accelerator asked for, its way to a GPU and its sources."""
    wanted = key.strip().lower()
    row = notebook_platforms.notebook_platform(wanted)
    if row is None:
        known = ", ".join(r.key for r in notebook_platforms.notebook_platforms())
        raise KnowledgeError(f"no notebook platform {key[:40]!r} in the knowledge base; known: {known}")
    data = loading._load(notebook_platforms.DATA_FILE)
    raw = next((as_dict(r) for r in as_list(data.get("platforms")) if as_dict(r).get("key") == row.key), {})
    lines = [f"{row.name} ({row.key})", f"as of {data.get('as_of') or '?'}", ""]
    lines.append(f"recognised by (any of): {_markers(row)}")
    if row.accelerator:
        rules = "; ".join(
            f"{rule.env}{'=' + rule.equals if rule.equals is not None else ' set'} -> {rule.means}"
            for rule in row.accelerator
        )
        lines.append(f"accelerator asked for:   {rules}")
    if row.env_presence:
        lines.append(f"read by presence only:   {', '.join(row.env_presence)}")
    lines.append(f"root:                    {'yes' if row.root else 'no: the platform decides the GPU and driver'}")
    lines.append(f"get a GPU:               {row.get_gpu}")
    lines.append(f"documentation:           {row.url}")
    if row.custom_image:
        lines.append(f"own image:               {row.custom_image}")
    lines.append(f"detected as in:          {row.source}")
    return lines + sources_block(data, only=[raw])
