"""Searching long texts fast: run a pattern only around the literals every match contains.

A 1 MiB log holds a needle ("cudnn", "nvidia-smi") in a few places; a regex run over the whole text for each of
hundreds of patterns is what makes a big paste slow.  Every repetition in gpudoctor's patterns is bounded, so
a match lies within a window around one of its needles; only those windows are searched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

# A match lies within this many characters of its needle (repetitions are bounded at 300, literals are short).
WINDOW = 1200
# Texts shorter than this are searched whole: windows would cover them anyway.
LONG_TEXT = 16 * WINDOW
# Callers want a few matches of a pattern, not thousands: a needle's later occurrences are not searched.
MAX_OCCURRENCES = 60


def windowed_finditer(
    pattern: Callable[[], re.Pattern[str]], text: str, lower: str, needles: tuple[str, ...]
) -> Iterator[re.Match[str]]:
    """``pattern().finditer(text)``, searching only around the needles' occurrences in ``lower`` (the text
    lower-cased); without needles, or for a short text, the whole text.  ``pattern`` is called only when there
    is something to search: a catalogue's patterns are compiled on first use, most never."""
    if not needles or len(text) < LONG_TEXT:
        yield from pattern().finditer(text)
        return
    windows: list[tuple[int, int]] = []
    for needle in needles:
        start = lower.find(needle)
        found = 0
        while start != -1 and found < MAX_OCCURRENCES:
            windows.append((max(0, start - WINDOW), min(len(text), start + len(needle) + WINDOW)))
            found += 1
            # The next occurrence outside this window: one inside it would search the same text again.
            start = lower.find(needle, start + len(needle) + WINDOW // 2)
    merged: list[tuple[int, int]] = []
    for low, high in sorted(windows):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    last_end = -1
    compiled = pattern() if merged else None
    for low, high in merged:
        assert compiled is not None
        for match in compiled.finditer(text, low, high):
            if match.start() >= last_end:  # windows do not overlap, but a match may run to a window's end
                last_end = match.end()
                yield match


def lines_with_any(text: str, words: tuple[str, ...]) -> list[str]:
    """The lines of ``text`` that contain one of ``words`` (lower-case), in order: a few fast substring scans
    instead of a case-insensitive regex on every line of a long log."""
    lower = text.lower()
    line_starts: set[int] = set()
    for word in words:
        position = lower.find(word)
        while position != -1:
            start = lower.rfind("\n", 0, position) + 1
            line_starts.add(start)
            end = lower.find("\n", position)
            position = lower.find(word, end if end != -1 else len(lower))
    found = []
    for start in sorted(line_starts):
        end = text.find("\n", start)
        found.append(text[start : end if end != -1 else len(text)])
    return found


class LazyPattern:
    """A regular expression compiled on first use: a module of many patterns costs nothing to import, and a
    run compiles only those whose literals its texts contain."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled().search(text)
