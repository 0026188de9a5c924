"""Errors a person can fix: shown as one line on stderr with exit code 2, never as a traceback."""


class UsageError(Exception):
    """A problem with what the user asked for or gave us; the message is one line."""
