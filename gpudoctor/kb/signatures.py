"""The error-signature catalogue: known error texts and what they mean.

Each signature is a pattern tolerant to version numbers, paths and wrapping, with what the text means, the
likely causes in order (ids of :mod:`gpudoctor.kb.causes`), the component it points at, a severity, real
examples and the public sources it was seen in.  The table is ``data/signatures/*.json``, one file per topic;
within the catalogue, earlier signatures win over later ones on the same line (specific before generic;
framework groups before the generic CUDA runtime group, see ``GROUP_ORDER``).

Patterns are matched case-insensitively against a *flattened* text: every whitespace run is one space, so a
message wrapped over lines by a terminal, an issue tracker or a log collector matches as printed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpudoctor.kb.catalogue_files import catalogue_entries, text_field, text_list
from gpudoctor.kb.errors import KnowledgeError

SIGNATURES_FOLDER = "signatures"
# The order groups are tried in: a framework's own wording of an error ("failed call to cuInit:
# CUDA_ERROR_NO_DEVICE" from TensorFlow) is more telling than the generic CUDA one inside it, so framework
# groups claim their lines first and the generic CUDA runtime group comes last.  Unlisted groups go before it.
GROUP_ORDER = ("tools_and_installers", "tensorflow", "jax_cupy", "pytorch", "nccl", "containers_wsl", "driver_nvml")
GENERIC_GROUPS = ("cuda_runtime",)
SEVERITIES = ("problem", "warning", "info")


@dataclass(frozen=True)
class Signature:
    """One known error text."""

    id: str
    source: str  # the pattern as written in the catalogue
    meaning: str
    causes: tuple[str, ...]  # likeliest first
    component: str  # an area key
    severity: str  # one of SEVERITIES
    examples: tuple[str, ...]
    sources: tuple[str, ...]
    group: str  # the file it is defined in

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (repetitions bounded), compiled on first use: most runs need few of them."""
        return _compiled(self.source)

    def compiled(self) -> re.Pattern[str]:
        """:attr:`pattern`, as a call (for searches that compile only when there is something to search)."""
        return _compiled(self.source)

    # Lower-case literals of which every match contains at least one (one per top-level alternative): a cheap
    # test that skips the regex on texts without any.  Empty: no such literal, the regex always runs.
    needles: tuple[str, ...]


# The longest literal run of a pattern that any match must contain.  Conservative: only a pattern with no
# top-level alternation gives one, and only runs of plain characters outside groups and classes count.
_META = set(".^$*+?{}[]\\|()")


def literal_needles(pattern: str) -> tuple[str, ...]:
    """Lower-case literals of which every match of ``pattern`` contains one, or () when there are none."""
    return _needles(pattern)


def _needles(pattern: str) -> tuple[str, ...]:
    """One needle per top-level alternative, or () when any alternative has none."""
    pattern = _unwrapped(pattern)
    branches = _top_level_branches(pattern)
    needles = tuple(_literal_run(branch) for branch in branches)
    return needles if all(needles) else ()


def _needle(pattern: str) -> str:
    """The needle of a pattern without top-level alternatives, else ""."""
    return "" if _top_level_alternation(pattern) else _literal_run(pattern)


def _literal_run(pattern: str) -> str:
    """The longest literal run (4+ characters) outside groups and classes of a pattern without top-level ``|``."""
    runs: list[str] = []
    current, depth, i = "", 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            following = pattern[i + 1]
            if depth == 0 and not following.isalnum():
                current += following  # an escaped punctuation character is that character
            else:
                runs.append(current)  # \d, \s, \S ...: a class, not a literal
                current = ""
            i += 2
            continue
        if char in "*?{":
            runs.append(current[:-1])  # the character before is optional or counted: not certain
            current = ""
        elif char in _META or depth > 0:
            runs.append(current)
            current = ""
            if char in "([":
                depth += 1
            elif char in ")]":
                depth = max(0, depth - 1)
        else:
            current += char
        i += 1
    runs.append(current)
    needle = max(runs, key=len).lower().strip()
    return needle if len(needle) >= 4 else ""


# Every repetition is bounded: over a flattened log, "NVRM: Xid \\([^)]*" with no ")" after it would otherwise
# run to the end of the text from each start, and a 1 MiB log would take minutes.  No real message is longer.
_MAX_REPEAT = 300


def bounded(pattern: str) -> str:
    """``pattern`` with each ``*`` / ``+`` repetition capped at :data:`_MAX_REPEAT` (same matches on real text)."""
    quantifiers = {index for index, char, _ in _syntax(pattern) if char in "*+"}
    out: list[str] = []
    for index, char in enumerate(pattern):
        # Not after another quantifier ("*?", a possessive "*+") nor where none can stand ("(*", "|+").
        if index in quantifiers and out and out[-1][-1] not in "*+?}(|":
            out.append("{0,%d}" % _MAX_REPEAT if char == "*" else "{1,%d}" % _MAX_REPEAT)
        else:
            out.append(char)
    return "".join(out)


def _unwrapped(pattern: str) -> str:
    """A pattern that is one group as a whole ("(?:a|b)", "(a|b)") without that group: its alternatives are
    then the top-level ones."""
    for prefix in ("(?:", "("):
        if pattern.startswith(prefix) and pattern.endswith(")") and not pattern.endswith("\\)"):
            inner = pattern[len(prefix) : -1]
            if _balanced(inner):
                return _unwrapped(inner)
    return pattern


def _syntax(pattern: str) -> Iterator[tuple[int, str, int]]:
    """Each character of ``pattern`` outside escapes and ``[...]`` classes, with its index and the group depth
    it stands at (a ``(`` at the depth it opens from, a ``)`` at the depth it closes to)."""
    depth, escaped, in_class = 0, False, False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        else:
            depth -= char == ")"
            yield index, char, depth
            depth += char == "("


def _balanced(pattern: str) -> bool:
    """Whether every group opened in ``pattern`` closes in it, and none closes that was not opened there."""
    depth = 0
    for _, char, depth in _syntax(pattern):
        if depth < 0:
            return False
        depth += char == "("
    return depth == 0


def _top_level_branches(pattern: str) -> list[str]:
    """The pattern split at its top-level ``|`` (outside groups and classes)."""
    cuts = [index for index, char, depth in _syntax(pattern) if char == "|" and depth == 0]
    starts = [0, *(cut + 1 for cut in cuts)]
    ends = [*cuts, len(pattern)]
    return [pattern[start:end] for start, end in zip(starts, ends)]


def _top_level_alternation(pattern: str) -> bool:
    return len(_top_level_branches(pattern)) > 1


@functools.lru_cache(maxsize=1)
def all_signatures() -> tuple[Signature, ...]:
    """Every signature, in catalogue order (files by name, entries in file order)."""
    signatures: list[Signature] = []
    seen: set[str] = set()
    for filename, entry in catalogue_entries(SIGNATURES_FOLDER, "signatures"):
        where = f"signatures/{filename}"
        signature_id = text_field(entry, "id", where)
        if signature_id in seen:
            raise KnowledgeError(f"{where}: signature '{signature_id}' is defined twice")
        seen.add(signature_id)
        source = text_field(entry, "pattern", f"{where} {signature_id}")
        severity = text_field(entry, "severity", f"{where} {signature_id}")
        if severity not in SEVERITIES:
            raise KnowledgeError(f"{where} {signature_id}: severity must be one of {', '.join(SEVERITIES)}")
        signatures.append(
            Signature(
                id=signature_id,
                source=source,
                meaning=text_field(entry, "meaning", f"{where} {signature_id}"),
                causes=text_list(entry, "causes"),
                component=text_field(entry, "component", f"{where} {signature_id}"),
                severity=severity,
                examples=text_list(entry, "examples"),
                sources=text_list(entry, "sources"),
                group=filename.removesuffix(".json"),
                # Stored beside the pattern by `python -m gpudoctor.kb.signatures --write-needles` (deriving them
                # costs a run ~25 ms); a test holds the stored ones equal to what the pattern gives.
                needles=text_list(entry, "needles") if "needles" in entry else _needles(source),
            )
        )

    def rank(entry: Signature) -> int:
        if entry.group in GROUP_ORDER:
            return GROUP_ORDER.index(entry.group)
        return len(GROUP_ORDER) + (1 if entry.group in GENERIC_GROUPS else 0)

    return tuple(sorted(signatures, key=rank))  # stable: file order within a group


@functools.lru_cache(maxsize=None)
def _compiled(source: str) -> re.Pattern[str]:
    try:
        return re.compile(bounded(source), re.IGNORECASE)
    except re.error as exc:
        raise KnowledgeError(f"signature pattern {source[:60]!r} does not compile ({exc})") from None


def signature(signature_id: str) -> Signature | None:
    """The signature with this id, or None."""
    return next((s for s in all_signatures() if s.id == signature_id), None)


def derived_needles(source: str) -> tuple[str, ...]:
    """The needles a pattern gives (what ``--write-needles`` stores)."""
    return _needles(source)


def _write_needles() -> int:
    """Store each signature's needles in its catalogue file (sources are edited by hand; needles follow)."""
    import json
    from importlib import resources

    folder = resources.files("gpudoctor.kb").joinpath("data").joinpath(SIGNATURES_FOLDER)
    for item in sorted(folder.iterdir(), key=lambda f: f.name):
        if not item.name.endswith(".json"):
            continue
        path = str(item)
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        for entry in document.get("signatures", []):
            entry["needles"] = list(_needles(entry["pattern"]))
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write-needles"]:
        sys.exit("usage: python -m gpudoctor.kb.signatures --write-needles")
    sys.exit(_write_needles())
