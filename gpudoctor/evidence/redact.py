"""Strip identifiers from anything meant to be shared (snapshots, Markdown).

GPU and MIG UUIDs and board serial numbers identify a physical machine; like
PyTorch's collect_env, we keep them out of shareable reports unless the user
asks (``--no-redact``).
"""

from __future__ import annotations

import re

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_PATTERNS = (
    # GPU-…, MIG-… and MIG-GPU-…/x/y style identifiers.
    (re.compile(rf"\b(GPU|MIG)-{_UUID}"), r"\1-REDACTED"),
    (re.compile(r"(<serial>)(?!N/A<)[^<]*(</serial>)"), r"\1REDACTED\2"),
    (re.compile(r"(<chassis_serial_number>)[^<]*(</chassis_serial_number>)"), r"\1REDACTED\2"),
    (re.compile(r"(\"serial\"\s*:\s*)\"[^\"]*\""), r'\1"REDACTED"'),
    (re.compile(r"(Serial Number\s*:\s*)\S+"), r"\1REDACTED"),
)


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
