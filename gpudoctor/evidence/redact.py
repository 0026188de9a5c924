"""Strip identifiers and secrets from anything meant to be shared (snapshots, Markdown).

GPU and MIG UUIDs and board serial numbers identify a physical machine; home directories and user names
identify a person; like PyTorch's collect_env, we keep them out of shareable reports unless the user asks
(``--no-redact``).  Credentials in URLs (``https://user:token@host/...`` in a ``direct_url.json`` or an
index URL) are secrets, not identifiers: :func:`strip_url_credentials` removes them always, and
:func:`redact` does too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_PATTERNS = (
    # GPU-…, MIG-… and MIG-GPU-…/x/y style identifiers.
    (re.compile(rf"\b(GPU|MIG)-{_UUID}"), r"\1-REDACTED"),
    (re.compile(r"(<serial>)(?!N/A<)[^<]*(</serial>)"), r"\1REDACTED\2"),
    (re.compile(r"(<chassis_serial_number>)[^<]*(</chassis_serial_number>)"), r"\1REDACTED\2"),
    (re.compile(r"(\"serial\"\s*:\s*)\"[^\"]*\""), r'\1"REDACTED"'),
    (re.compile(r"(Serial Number\s*:\s*)\S+"), r"\1REDACTED"),
)

# The user-info part of a URL (``scheme://user:password@``), up to the last "@" before the host ends: a
# password holding a raw "@" is still removed whole.  Quotes, brackets and backslashes end it, so a URL
# inside JSON, XML or Markdown never swallows the text around it.
_URL_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\s\"'<>\\`]+@")
CREDENTIALS_MARKER = "REDACTED@"

HOME_MARKER = "~"
USER_MARKER = "REDACTED"
# What a path component (a home's last part, a user name) is made of: it stops at a path separator, at
# PATH's ":" / ";" and at whatever closes a quoted string in JSON, XML or Markdown.
_COMPONENT = r"[^/\\\s\"'<>:;|`,]+"
_AFTER_COMPONENT = r"(?![^/\\\s\"'<>:;|`,])"
# Homes of anyone, whichever machine wrote the text: /home/alice, /Users/alice, C:\Users\alice (also as
# JSON writes it, C:\\Users\\alice, and with forward slashes).  Preceded by nothing path-like, so
# /mnt/home/x is left to the current user's own home and name below.
_GENERIC_HOMES = re.compile(
    r"(?<![\w.~/\\-])(?:/home/|/Users/|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/))"
    rf"(?!(?:Shared|Public|Default|All Users){_AFTER_COMPONENT}){_COMPONENT}{_AFTER_COMPONENT}"
)
# User names that are also ordinary parts of system paths: replacing them would hide /usr/local/cuda.
_SYSTEM_WORDS = frozenset(
    {"root", "admin", "user", "users", "home", "nvidia", "cuda", "local", "lib", "lib64", "bin", "opt", "usr"}
    | {"share", "python", "conda", "data", "work", "tmp", "src", "app", "docker", "runner", "ubuntu", "debian"}
)


def strip_url_credentials(text: str) -> str:
    """``text`` with the user and password of every ``scheme://user:pass@host`` URL replaced by a marker."""
    if "://" not in text or "@" not in text:
        return text
    return _URL_CREDENTIALS.sub(lambda match: match.group(1) + CREDENTIALS_MARKER, text)


def _current_homes() -> list[str]:
    homes = {os.path.expanduser("~"), os.environ.get("HOME", ""), os.environ.get("USERPROFILE", "")}
    # "/" or "C:\" as a home would turn every absolute path into "~".
    return sorted((h.rstrip("/\\") for h in homes if len(h.rstrip("/\\")) > 3), key=len, reverse=True)


def _current_user() -> str | None:
    import getpass  # only when a text is redacted: the renderers' imports stay cheap

    try:
        name = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name known (no passwd entry in a container): nothing to hide
        return None
    return name if len(name) >= 3 and name.lower() not in _SYSTEM_WORDS else None


def redact_people(text: str, homes: Iterable[str] | None = None, user: str | None = None) -> str:
    """Home directories as ``~`` and the user's name, where it is a whole path component, as a marker.

    ``homes`` and ``user`` default to this process's own (the machine collecting or rendering); homes
    under /home, /Users and C:\\Users are recognised whoever they belong to.
    """
    homes = _current_homes() if homes is None else list(homes)
    user = _current_user() if user is None else user
    for home in homes:
        for spelled in {home, home.replace("\\", "\\\\")}:  # as written, and as JSON escapes it
            text = re.sub(re.escape(spelled) + _AFTER_COMPONENT, HOME_MARKER, text)
    text = _GENERIC_HOMES.sub(HOME_MARKER, text)
    if user:
        text = re.sub(r"(?<=[/\\])" + re.escape(user) + _AFTER_COMPONENT, USER_MARKER, text)
    return text


def redact(text: str) -> str:
    """Everything above: machine identifiers, credentials, homes and the user's name."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return redact_people(strip_url_credentials(text))
