"""A pasted text made readable: bytes to text, and the marks of where it was pasted taken off.

People paste through issue trackers, chats, terminals and mail: Markdown code fences and ``>`` quote markers,
CRLF line ends, ANSI colours, HTML entities from a scraped page, fullwidth punctuation from a CJK input method
(``GPU 0：Tesla``), ``<details>`` wrappers.  :func:`normalise_paste` takes those off and keeps every line of
content; nothing is reworded.  :func:`decode_paste` refuses only what cannot be a paste at all: nothing, or
binary data.
"""

from __future__ import annotations

import html
import re
import unicodedata

from gpudoctor.errors import UsageError

# CSI sequences (colours, cursor moves), OSC sequences (titles, hyperlinks) and lone escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# A Markdown fence line (``` or ~~~, with or without a language) or an HTML wrapper line a tracker adds.
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+.-]*\s*$")
_WRAPPER = re.compile(r"^\s*(?:</?(?:details|summary|pre|code|br)\b[^>]*>|<summary>.*?</summary>)\s*$", re.IGNORECASE)
# Quote markers ("> ", ">> ", "> > "), but not a Python prompt (">>> ") or a shell redirect.
_QUOTE = re.compile(r"^[ \t]{0,3}>(?!>>)[ \t]?")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'})
_ENTITY = re.compile(r"&(?:gt|lt|amp|quot|apos|nbsp|#\d{1,6}|#x[0-9a-fA-F]{1,6});")
# A text with more than this share of control characters (other than tab/newline) is not a paste.
_BINARY_SHARE = 0.05
_SAMPLE = 65536


class PasteError(UsageError):
    """The input cannot be read as a paste; the message is one line for a person."""


def decode_paste(data: bytes, where: str) -> str:
    """The text of a pasted file or of standard input; empty or binary input is refused in one line."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")  # PowerShell's "> file" writes UTF-16
    else:
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if not text.strip():
        raise PasteError(f"{where} is empty: nothing to diagnose")
    sample_text = text[:_SAMPLE]
    controls = sum(1 for char in sample_text if unicodedata.category(char) == "Cc" and char not in "\t\n\r\x1b\x0c")
    replaced = sample_text.count("\ufffd")
    if (controls + replaced) > _BINARY_SHARE * len(sample_text):
        raise PasteError(f"{where} holds binary data, not text; paste the output of the command instead")
    return text


def _unquote(line: str) -> str:
    for _ in range(4):  # nested quotes ("> > ") of a reply to a reply
        stripped = _QUOTE.sub("", line, count=1)
        if stripped == line:
            break
        line = stripped
    return line


def normalise_paste(text: str) -> str:
    """The paste's content lines with the pasting marks removed (fences, quotes, CRLF, ANSI, entities, width)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    if _ENTITY.search(text):
        text = html.unescape(text)
    # NFKC folds fullwidth forms ("：", "（", "＝", U+3000) into their ASCII twins, and no-break spaces into spaces.
    text = unicodedata.normalize("NFKC", text)
    # Curly quotes from word processors and chat apps ('libcusolver.so.10', "name"): the tools print straight ones.
    if any(quote in text for quote in "\u2018\u2019\u201a\u201c\u201d\u201e"):
        text = text.translate(_QUOTES)
    lines = []
    quoted = sum(1 for line in text.split("\n") if _QUOTE.match(line))
    for line in text.split("\n"):
        if quoted:
            line = _unquote(line)
        if _FENCE.match(line) or _WRAPPER.match(line):
            continue
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n") + "\n"
