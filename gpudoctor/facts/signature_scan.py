"""Every free text in the evidence, scanned for the known error signatures.

Pasted reports, logs, ``nvidia-smi`` stdout and stderr, the kernel log, probe stderr and tracebacks: the
parsers read the shapes they know and drop the rest, so this scan is what keeps a clue in an unparsed line
from being lost.  A match keeps the evidence line(s) it was found on, verbatim (renderers escape them).

Texts are flattened (each whitespace run one space) so a wrapped message still matches; an offset table maps a
match back to its lines.  An earlier signature in the catalogue claims its lines: a later, more generic one
does not match them again.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import PASTE_SECTION_KIND, Evidence, EvidenceItem
from gpudoctor.facts.text_search import LONG_TEXT, windowed_finditer
from gpudoctor.kb.signatures import Signature, all_signatures

# Section files cut out of a paste are also scanned as the whole paste: once is enough.
_MAX_QUOTE = 400
_MAX_MATCHES_PER_SIGNATURE = 50
_MAX_JSON_STRINGS = 2000
_CONTEXT_LINES = 25
_CJK_EDGE = re.compile(
    r"(?<=[\u3000-\u9fff\uff00-\uffef])(?=[A-Za-z0-9/`'\"])|(?<=[A-Za-z0-9.`'\"])(?=[\u3000-\u9fff\uff00-\uffef])"
)
# What names each framework in a log or traceback: its import, its package path, its own log prefixes.
_FRAMEWORK_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tensorflow", re.compile(r"\btensorflow\b|\btf\.(?:config|test|keras)\b|\bkeras\b", re.IGNORECASE)),
    ("jax", re.compile(r"\bjax(?:lib)?\b|\bxla_bridge\b", re.IGNORECASE)),
    ("cupy", re.compile(r"\bcupy(?:_backends)?\b", re.IGNORECASE)),
    ("torch", re.compile(r"\btorch\b|\bpytorch\b", re.IGNORECASE)),
)
# Environments a whole text shows (mentioned once is enough: "I run this under WSL 2").
_ENVIRONMENT_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("wsl", re.compile(r"\bWSL ?2?\b|microsoft-standard|/usr/lib/wsl/|Windows Subsystem for Linux", re.IGNORECASE)),
    (
        "container",
        re.compile(
            r"\b(?:docker|podman|nerdctl|nvidia-docker|kubectl|kubernetes|k8s|containerd|daemonset)\b|/\.dockerenv",
            re.IGNORECASE,
        ),
    ),
)


@dataclass(frozen=True)
class SignatureMatch:
    """One known error text found in the evidence."""

    signature: Signature
    source: str  # the evidence file it was found in
    line: int  # 1-based line of the (first) match in that text
    quote: str  # the line(s) it was found on, as written
    count: int  # how many times it occurs there
    # What the message is said in: the framework the lines around it are about ("tensorflow", "torch", "jax",
    # "cupy") and the environment the whole text shows ("wsl", "container").  A generic message means a
    # context's own cause there: "cannot open libcudnn.so.8" in a TensorFlow log, "couldn't communicate with
    # the NVIDIA driver" under WSL.
    contexts: tuple[str, ...] = ()


class _FlatText:
    """A text with whitespace runs collapsed, and the way back to its lines."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        parts: list[str] = []
        self.starts: list[int] = []  # offset in ``flat`` where each kept line starts
        self.line_numbers: list[int] = []  # the index in ``lines`` of each kept line
        offset = 0
        for index, line in enumerate(self.lines):
            # A message run into CJK prose ("报错nvcc fatal") gets the word boundary its pattern expects.
            flat_line = " ".join((line if line.isascii() else _CJK_EDGE.sub(" ", line)).split())
            if not flat_line:
                continue
            self.starts.append(offset)
            self.line_numbers.append(index)
            parts.append(flat_line)
            offset += len(flat_line) + 1
        self.flat = " ".join(parts)
        self.lower = self.flat.lower()
        self.environments = tuple(name for name, marker in _ENVIRONMENT_MARKERS if marker.search(self.flat))

    def line_span(self, start: int, end: int) -> tuple[int, int]:
        """The indices (into ``lines``) of the first and last line a flat span covers."""
        first = max(0, bisect.bisect_right(self.starts, start) - 1)
        last = max(first, bisect.bisect_right(self.starts, max(start, end - 1)) - 1)
        return self.line_numbers[first], self.line_numbers[last]

    def framework_near(self, first: int, last: int) -> str | None:
        """The framework the lines around a match name most (its own lines first), or None."""
        for low, high in ((first, last), (first - _CONTEXT_LINES, last + _CONTEXT_LINES)):
            window = "\n".join(self.lines[max(0, low) : high + 1])
            counts = [(len(marker.findall(window)), name) for name, marker in _FRAMEWORK_MARKERS]
            best = max(counts)
            if best[0]:
                return best[1]
        return None

    def quote(self, first: int, last: int) -> str:
        text = "\n".join(line.strip() for line in self.lines[first : last + 1])
        return text if len(text) <= _MAX_QUOTE else text[: _MAX_QUOTE - 1] + "…"


def scan_text(text: str, source: str, signatures: tuple[Signature, ...] | None = None) -> list[SignatureMatch]:
    """The signatures found in one text, in catalogue order."""
    catalogue = all_signatures() if signatures is None else signatures
    flat = _FlatText(text)
    if not flat.flat:
        return []
    claimed: set[int] = set()
    found: list[SignatureMatch] = []
    for signature in catalogue:
        # A long text's needles are looked for once, by the windowed search itself.
        short = len(flat.flat) < LONG_TEXT
        if short and signature.needles and not any(needle in flat.lower for needle in signature.needles):
            continue
        first_match: tuple[int, int] | None = None
        count = 0
        spans: list[tuple[int, int]] = []
        for match in windowed_finditer(signature.compiled, flat.flat, flat.lower, signature.needles):
            if match.end() == match.start():
                continue
            span = flat.line_span(match.start(), match.end())
            spans.append(span)
            if not claimed.intersection(range(span[0], span[1] + 1)):
                count += 1
                first_match = first_match or span
            if len(spans) >= _MAX_MATCHES_PER_SIGNATURE:
                break
        if first_match is None:
            continue
        for span in spans:
            claimed.update(range(span[0], span[1] + 1))
        found.append(
            SignatureMatch(
                signature,
                source,
                first_match[0] + 1,
                flat.quote(*first_match),
                count,
                tuple(c for c in (flat.framework_near(*first_match), *flat.environments) if c),
            )
        )
    return found


def _json_strings(value: object, budget: list[int]) -> Iterator[str]:
    """The string values of a JSON document (probe stderr, tracebacks, error messages), depth first."""
    if budget[0] <= 0:
        return
    if isinstance(value, str):
        budget[0] -= 1
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _json_strings(item, budget)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item, budget)


def _texts(item: EvidenceItem) -> Iterator[str]:
    if item.kind == PASTE_SECTION_KIND:
        return
    if item.text and item.name.endswith(".json"):
        try:
            document: object = json.loads(item.text)
        except (ValueError, RecursionError):
            yield item.text
        else:
            yield "\n".join(_json_strings(document, [_MAX_JSON_STRINGS]))
    elif item.text:
        yield item.text
    if item.stderr and item.stderr != item.text:
        yield item.stderr


def evidence_texts(evidence: Evidence) -> Iterator[tuple[str, str]]:
    """(source name, text) for every free text of the evidence: outputs, stderr, the string values of JSON records;
    env.json left out (variable values, not messages: a path holding "cuda" is not an error text) and a paste's
    sections too (they are read as the whole paste)."""
    for name, item in evidence.items.items():
        if name == EvidenceKey.ENV:
            continue
        for text in _texts(item):
            yield name, text


def scan_texts(texts: Iterable[tuple[str, str]]) -> tuple[SignatureMatch, ...]:
    """Every signature found in these (source name, text) pairs (:func:`evidence_texts`)."""
    found: list[SignatureMatch] = []
    for name, text in texts:
        found.extend(scan_text(text, name))
    return tuple(found)


def scan_evidence(evidence: Evidence) -> tuple[SignatureMatch, ...]:
    """Every signature found in every text of the evidence; the same signature once per source."""
    return scan_texts(evidence_texts(evidence))
