"""Root causes: the one vocabulary that checks, error signatures, the accuracy corpus and docs name causes in.

A cause is what is really wrong ("the NVIDIA kernel module is not loaded"), as opposed to a symptom (an error
text, a failed check).  Each has the component (an area key) it lives in, the key of its fix (resolved by the
checks' fix registry) and the causes that follow from it (``leads_to``): a report shows those as consequences
under the root instead of as more problems.  The table is ``data/causes/*.json``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.catalogue_files import catalogue_entries, text_field, text_list
from gpudoctor.kb.errors import KnowledgeError

CAUSES_FOLDER = "causes"


@dataclass(frozen=True)
class Cause:
    """One root cause."""

    id: str
    title: str  # names the cause, for a person: "a CPU-only build of PyTorch is installed"
    component: str  # the area key it belongs to
    fix: str | None  # the fix registry key, or None where no single fix applies
    leads_to: tuple[str, ...]  # causes that follow from this one
    group: str  # the file it is defined in
    # Stands only on its own: folded under any other cause a report names (e.g. "the GPU stack is unverified").
    yields: bool = False
    # In a context this generic cause is that context's own: "cuDNN is not found" in a TensorFlow log is
    # "TensorFlow cannot load the CUDA/cuDNN it was built for"; "the driver is not loaded" under WSL is WSL's
    # setup (context -> cause id; contexts: tensorflow, torch, jax, cupy, wsl, container).
    in_context: tuple[tuple[str, str], ...] = ()


@functools.lru_cache(maxsize=1)
def all_causes() -> dict[str, Cause]:
    """Every cause by id, in file order."""
    causes: dict[str, Cause] = {}
    for filename, entry in catalogue_entries(CAUSES_FOLDER, "causes"):
        where = f"causes/{filename}"
        cause_id = text_field(entry, "id", where)
        if cause_id in causes:
            raise KnowledgeError(f"{where}: cause '{cause_id}' is defined twice")
        fix = entry.get("fix")
        causes[cause_id] = Cause(
            id=cause_id,
            title=text_field(entry, "title", f"{where} {cause_id}"),
            component=text_field(entry, "component", f"{where} {cause_id}"),
            fix=fix if isinstance(fix, str) and fix else None,
            leads_to=text_list(entry, "leads_to"),
            group=filename.removesuffix(".json"),
            yields=entry.get("yields") is True,
            in_context=tuple(
                (str(name), str(refined))
                for name, refined in (entry.get("in_context") or {}).items()
                if isinstance(refined, str)
            ),
        )
    return causes


def cause(cause_id: str) -> Cause | None:
    """The cause with this id, or None for an id the table does not know."""
    return all_causes().get(cause_id)


@functools.lru_cache(maxsize=None)
def consequences(cause_id: str) -> frozenset[str]:
    """Every cause that follows from ``cause_id``, directly or through others (never itself)."""
    table = all_causes()
    seen: set[str] = set()
    pending = list(table[cause_id].leads_to) if cause_id in table else []
    while pending:
        current = pending.pop()
        if current in seen or current == cause_id:
            continue
        seen.add(current)
        entry = table.get(current)
        if entry is not None:
            pending.extend(entry.leads_to)
    return frozenset(seen)


def in_context(cause_ids: tuple[str, ...], contexts: tuple[str, ...]) -> tuple[str, ...]:
    """The causes as they read in these contexts (most specific first): each generic one refined to the first
    context's own cause that it names (the generic one kept after it), duplicates dropped."""
    refined: list[str] = []
    for cause_id in cause_ids:
        entry = cause(cause_id)
        mapping = dict(entry.in_context) if entry else {}
        specific = next((mapping[c] for c in contexts if c in mapping), None)
        refined += [specific, cause_id] if specific else [cause_id]
    return tuple(dict.fromkeys(refined))


def cause_title(cause_id: str) -> str:
    """The cause's title, or the id itself for one the table does not know."""
    entry = cause(cause_id)
    return entry.title if entry else cause_id
