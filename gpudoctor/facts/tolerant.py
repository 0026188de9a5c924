"""One guard for every parser's promise: whatever the input, a parser bug yields "nothing known", never a crash."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

Result = TypeVar("Result")


def never_raises(fallback: Callable[[], Result]) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorate a parser so that an exception inside it returns ``fallback()`` (``list``, ``dict``, ...)."""

    def decorate(parser: Callable[..., Result]) -> Callable[..., Result]:
        @functools.wraps(parser)
        def guarded(*args: Any, **kwargs: Any) -> Result:
            try:
                return parser(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
                return fallback()

        return guarded

    return decorate
