"""A tiny YAML writer for generated manifests, so gpudoctor needs no YAML library at run time.

Every string (keys too) is written double-quoted, printable ASCII as itself and every other character as an
escape (``\\n``, ``\\u00e9``, ``\\U0001f600``: YAML 1.2 section 5.7, which YAML 1.1 readers share), so no value can
become a tag, an anchor, a number, a boolean, a comment, a line break or a new key.  Mappings and sequences are written in block style, in the order
given, which makes the output deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _quoted(value)
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _quoted(text: str) -> str:
    out = []
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _is_collection(value: object) -> bool:
    return isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, str))


def _lines(value: object, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        out: list[str] = []
        for key, item in value.items():
            head = f"{pad}{_scalar(str(key))}:"
            if _is_collection(item) and item:
                out.append(head)
                out.extend(_lines(item, indent + 2))
            else:
                out.append(f"{head} {_inline(item)}")
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            if _is_collection(item) and item:
                nested = _lines(item, indent + 2)
                out.append(f"{pad}- {nested[0].lstrip()}")
                out.extend(nested[1:])
            else:
                out.append(f"{pad}- {_inline(item)}")
        return out
    return [pad + _scalar(value)]


def _inline(value: object) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[]"
    return _scalar(value)


def to_yaml(document: Mapping[str, object]) -> str:
    """One YAML document (a mapping), newline-terminated."""
    return "\n".join(_lines(document, 0)) + "\n"


def to_yaml_stream(documents: Sequence[Mapping[str, object]]) -> str:
    """Several documents in one file, each opened by ``---``."""
    return "".join("---\n" + to_yaml(document) for document in documents)
