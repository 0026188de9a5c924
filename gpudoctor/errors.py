"""Errors a person can fix: shown as one line on stderr with exit code 2, never as a traceback.

``InputError`` is the small shared base: the CLI's ``UsageError`` and the knowledge base's ``KnowledgeError``
(``gpudoctor.kb.errors``) both derive from it, so the command layer catches one class while the knowledge base
imports nothing from the CLI.
"""


class InputError(Exception):
    """Something a person asked for or gave us cannot be used; the message is one line."""


class UsageError(InputError):
    """A problem with what the user asked for or gave us; the message is one line."""
