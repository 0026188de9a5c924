"""One guard for every parser's promise: whatever the input, a parser bug yields "nothing known", never a crash."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    # typing.ParamSpec is Python 3.10+; gpudoctor runs on 3.9, and it is only ever read in annotations.
    from typing import ParamSpec

    Params = ParamSpec("Params")
Result = TypeVar("Result")


def never_raises(
    fallback: Callable[[], Result],
) -> Callable[[Callable[Params, Result]], Callable[Params, Result]]:
    """Decorate a parser so that an exception inside it returns ``fallback()``.

    Name the fallback with its full type (``list[GpuState]``, not ``list``) so the decorated parser keeps its own.
    """

    def decorate(parser: Callable[Params, Result]) -> Callable[Params, Result]:
        @functools.wraps(parser)
        def guarded(*args: Params.args, **kwargs: Params.kwargs) -> Result:
            try:
                return parser(*args, **kwargs)
            except Exception:  # noqa: BLE001 - a parser bug must not become a crash of the doctor
                return fallback()

        return guarded

    return decorate
