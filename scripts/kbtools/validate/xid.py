"""xid.json: codes unique and ascending, severity and category from the allowed sets, every command a named
argument list whose only placeholder is ``{gpu}``."""

from __future__ import annotations

import re
from typing import Any

from kbtools.common import nonempty
from kbtools.sources import check_header, check_sources
from kbtools.validate.common import table_rows

XID_FILE = "xid.json"
XID_SEVERITIES = ("problem", "warning", "info")
XID_CATEGORIES = ("hardware", "driver", "application", "memory", "nvlink", "thermal", "power", "unknown")
# The one placeholder gpudoctor.kb.xid fills in; any other "{...}" or "<...>" would reach the user unfilled.
PLACEHOLDER_RE = re.compile(r"\{[^}]*\}|<[^>]*>")


def check_xid_commands(name: str, data: dict[str, Any], sources: dict[str, Any], errors: list[str]) -> set[str]:
    commands = data.get("commands")
    if not isinstance(commands, dict) or not commands:
        errors.append(f"{name}: 'commands' missing or empty")
        return set()
    for key, entry in commands.items():
        where = f"{name}: command {key!r}"
        if not isinstance(entry, dict):
            errors.append(f"{where}: not an object")
            continue
        check_sources(where, entry, sources, errors)
        argv = entry.get("argv")
        if not isinstance(argv, list) or not argv or not all(nonempty(arg) for arg in argv):
            errors.append(f"{where}: argv is not a list of non-empty strings")
            continue
        for arg in argv:
            rest = arg.replace("{gpu}", "")
            if PLACEHOLDER_RE.search(rest) or "{" in rest or "}" in rest:
                errors.append(f"{where}: argument {arg!r} has a placeholder other than {{gpu}}")
        if not nonempty(entry.get("why")):
            errors.append(f"{where}: no 'why'")
    return {key for key, entry in commands.items() if isinstance(entry, dict)}


def check_xid_file(data: dict[str, Any], errors: list[str]) -> dict[str, int]:
    name = XID_FILE
    sources = check_header(name, data, errors)
    command_names = check_xid_commands(name, data, sources, errors)
    rows = table_rows(name, data, "xids", errors)
    previous: int | None = None
    for row in rows:
        code = row.get("code")
        where = f"{name}: Xid {code!r}"
        check_sources(where, row, sources, errors)
        if not isinstance(code, int) or isinstance(code, bool) or code < 1:
            errors.append(f"{where}: code is not a positive integer")
            continue
        if previous is not None and code <= previous:
            errors.append(f"{where}: codes are not unique and ascending")
        previous = code
        if row.get("severity") not in XID_SEVERITIES:
            errors.append(f"{where}: severity {row.get('severity')!r} is not one of {XID_SEVERITIES}")
        if row.get("category") not in XID_CATEGORIES:
            errors.append(f"{where}: category {row.get('category')!r} is not one of {XID_CATEGORIES}")
        for field in ("meaning", "action"):
            if not nonempty(row.get(field)):
                errors.append(f"{where}: no {field}")
        used = row.get("commands")
        if not isinstance(used, list):
            errors.append(f"{where}: commands is not a list")
        else:
            for key in used:
                if key not in command_names:
                    errors.append(f"{where}: unknown command {key!r}")
        if row.get("note") is not None and not nonempty(row.get("note")):
            errors.append(f"{where}: note is neither text nor null")
        actions = row.get("recovery_actions")
        if actions is not None and (
            not isinstance(actions, dict) or not actions or any(v not in XID_SEVERITIES for v in actions.values())
        ):
            errors.append(f"{where}: recovery_actions is not a map of action -> severity")
    return {"xids": len(rows), "commands": len(command_names)}
