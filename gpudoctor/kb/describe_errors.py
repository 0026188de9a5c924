"""``gpudoctor kb signatures`` and ``gpudoctor kb causes``: the error-signature catalogue and the causes."""

from __future__ import annotations

from gpudoctor.kb.causes import all_causes, cause_title
from gpudoctor.kb.errors import KnowledgeError
from gpudoctor.kb.signatures import all_signatures, signature


def signatures_table() -> list[str]:
    """One line per signature, grouped by file: id, severity, likeliest cause."""
    lines = ["Error signatures (gpudoctor kb signatures ID for one, with its pattern, examples and sources)", ""]
    group = None
    for entry in all_signatures():
        if entry.group != group:
            group = entry.group
            count = sum(1 for s in all_signatures() if s.group == group)
            lines += [f"{group} ({count})"]
        first = entry.causes[0] if entry.causes else "-"
        lines.append(f"  {entry.id:<48} {entry.severity:<8} {entry.component:<12} {first}")
        if entry is all_signatures()[-1] or all_signatures()[all_signatures().index(entry) + 1].group != group:
            lines.append("")
    lines += ["", f"{len(all_signatures())} signatures"]
    return lines


def signature_item(signature_id: str) -> list[str]:
    entry = signature(signature_id)
    if entry is None:
        raise KnowledgeError(f"no error signature {signature_id[:60]!r} (see 'gpudoctor kb signatures')")
    lines = [
        f"{entry.id}  [{entry.severity}, {entry.component}]",
        f"  means:    {entry.meaning}",
        "  causes:   " + "; ".join(f"{c} ({cause_title(c)})" for c in entry.causes),
        f"  pattern:  {entry.source}",
    ]
    lines += [f"  example:  {example}" for example in entry.examples]
    lines += [f"  source:   {source}" for source in entry.sources]
    return lines


def causes_table() -> list[str]:
    lines = ["Root causes (ids findings and the corpus name; gpudoctor kb causes ID for one)", ""]
    for entry in all_causes().values():
        lines.append(f"  {entry.id:<32} {entry.component:<12} {entry.title}")
    lines += ["", f"{len(all_causes())} causes"]
    return lines


def cause_item(cause_id: str) -> list[str]:
    entry = all_causes().get(cause_id)
    if entry is None:
        raise KnowledgeError(f"no cause {cause_id[:60]!r} (see 'gpudoctor kb causes')")
    pointing = [s.id for s in all_signatures() if cause_id in s.causes]
    return [
        f"{entry.id}  [{entry.component}]",
        f"  cause:      {entry.title}",
        f"  fix key:    {entry.fix or '-'}",
        f"  leads to:   {', '.join(entry.leads_to) or '-'}",
        f"  signatures: {', '.join(pointing) or '-'}",
    ]
