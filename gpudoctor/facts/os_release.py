"""``/etc/os-release``: which distribution this is.

A pure parser of the freedesktop format (``KEY=value`` lines, values optionally
single- or double-quoted, ``#`` comments).  Shell expansion is not performed,
as the specification asks.
"""

from __future__ import annotations

import re

from gpudoctor.facts.model import OsRelease

_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
# Inside double quotes the specification allows these backslash escapes.
_ESCAPE = re.compile(r"\\([\\\"$`])")


def _unquote(raw: str) -> str:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        inner = value[1:-1]
        return _ESCAPE.sub(r"\1", inner) if value[0] == '"' else inner
    # An unterminated quote: keep what follows it rather than nothing.
    if value[:1] in ('"', "'"):
        return value[1:]
    return value


def parse_os_release_fields(text: object) -> dict[str, str]:
    """Every ``KEY=value`` of the file, unquoted; a later duplicate wins, as when the shell sources it."""
    fields: dict[str, str] = {}
    if not isinstance(text, str):
        return fields
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _ASSIGNMENT.match(line)
        if match:
            fields[match.group(1)] = _unquote(match.group(2))
    return fields


def parse_os_release(text: object) -> OsRelease:
    """Parse ``/etc/os-release`` into :class:`OsRelease`; empty values count as unknown."""
    fields = parse_os_release_fields(text)
    return OsRelease(
        id=fields.get("ID") or None,
        version_id=fields.get("VERSION_ID") or None,
        pretty_name=fields.get("PRETTY_NAME") or None,
        id_like=tuple(fields.get("ID_LIKE", "").split()),
    )
