"""Evidence: what the machine said, kept raw.

An :class:`EvidenceItem` is one source (a command's output, a file's text, a JSON
record).  Its ``name`` is the file name it has in a snapshot, which is a public
contract documented in the README.  Nothing after this stage knows whether the
evidence was collected live or read back from a snapshot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gpudoctor.evidence.bounded_read import json_too_deep

# The kind of an item cut out of a paste (one tool's output found in a pasted text): its one home.
PASTE_SECTION_KIND = "paste-section"


@dataclass
class EvidenceItem:
    """One raw piece of evidence.

    ``text`` is None when the source produced nothing (a missing command, an
    unreadable file).  ``error`` then says why, in words.
    """

    name: str
    kind: str  # "command", "file" or "json"
    text: str | None = None
    argv: list[str] | None = None
    exit_code: int | None = None
    stderr: str = ""
    duration_s: float | None = None
    timed_out: bool = False
    error: str | None = None

    @property
    def output(self) -> str:
        """stdout and stderr together: tools like nvidia-smi put their errors on either."""
        parts = [p for p in (self.text, self.stderr) if p]
        return "\n".join(parts)

    def json(self) -> object:
        """The parsed JSON payload of a ``json`` item, or None when absent or corrupt (narrow it with isinstance)."""
        if not self.text or json_too_deep(self.text):  # nested past any real evidence: a hostile file
            return None
        try:
            return json.loads(self.text)
        except (ValueError, RecursionError):
            return None

    def manifest_entry(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "stderr": self.stderr,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 4),
            "timed_out": self.timed_out,
            "error": self.error,
            "present": self.text is not None,
        }


@dataclass
class Evidence:
    """All the evidence of one run, keyed by snapshot file name."""

    items: dict[str, EvidenceItem] = field(default_factory=dict)
    origin: dict[str, object] = field(default_factory=dict)  # {"kind": "live"} or {"kind": "snapshot", "path": ...}

    def get(self, name: str) -> EvidenceItem | None:
        """The item, or None when this source was not collected at all."""
        return self.items.get(name)

    def text(self, name: str) -> str | None:
        item = self.items.get(name)
        return item.text if item else None

    def output(self, name: str) -> str | None:
        item = self.items.get(name)
        return item.output if item else None

    def json(self, name: str) -> object:
        item = self.items.get(name)
        return item.json() if item else None

    def collected(self, name: str) -> bool:
        return name in self.items

    def add(self, item: EvidenceItem) -> None:
        self.items[item.name] = item
