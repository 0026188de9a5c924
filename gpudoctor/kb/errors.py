"""The knowledge base's own errors: a lookup asked for something the tables cannot answer.

They derive from ``ValueError`` (a bad value was passed in) and from the shared ``InputError`` base, so a command
shows them as one line with exit code 2; a generator turns ``KnowledgeRefused`` into its own refusal.
"""

from __future__ import annotations

from gpudoctor.errors import InputError


class KnowledgeError(InputError, ValueError):
    """A topic, item or value the knowledge base has no answer for; the message is one line."""


class KnowledgeRefused(KnowledgeError):
    """No table row fits what was asked; ``reason`` says why and ``nearest`` what would (one line each)."""

    def __init__(self, reason: str, nearest: str | None = None) -> None:
        self.reason = reason
        self.nearest = nearest
        super().__init__(reason + (f"; nearest that works: {nearest}" if nearest else ""))
