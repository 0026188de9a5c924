"""What every command shares: the guarded runner (exit codes for our errors) and writing files.

Errors a person can fix (an unreadable snapshot, a path we must not overwrite, an unknown
check code) become one line on stderr and exit code 2; gpudoctor unable to find its own
checks is one line and exit 3; anything else that breaks is our own bug: the traceback
and exit code 3.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import traceback
from typing import Callable, TextIO

from gpudoctor.errors import InputError
from gpudoctor.registry import RegistryError
from gpudoctor.results import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

Command = Callable[[argparse.Namespace], int]


def one_line(message: str) -> str:
    """Whatever a library's exception text looked like, one line, with its control and escape characters
    shown, not obeyed (error messages quote paths and values a user or a snapshot gave)."""
    from gpudoctor.render.common import printable

    return printable(" ".join(message.split()))


def guarded(command: Command) -> Command:
    """Run a command, turning what it raises into the documented exit codes."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except InputError as exc:
            sys.stderr.write(f"gpudoctor: error: {one_line(str(exc))}\n")
            return EXIT_USAGE
        except RegistryError as exc:
            sys.stderr.write(f"gpudoctor: internal error: {one_line(str(exc))}\n")
            return EXIT_INTERNAL
        except BrokenPipeError:
            return EXIT_OK
        except RecursionError:
            # Only hostile input nests past the interpreter's limit (evidence JSON is checked for depth on
            # reading; this is the net under every other parser): the input is at fault, not gpudoctor.
            sys.stderr.write("gpudoctor: error: the input nests too deeply to be read (not gpudoctor evidence)\n")
            return EXIT_USAGE
        except Exception:  # noqa: BLE001 - our own bug: say so plainly, keep the traceback
            sys.stderr.write("gpudoctor: internal error (please report it):\n" + traceback.format_exc())
            return EXIT_INTERNAL

    return run


def report_load_errors(errors: list[str]) -> None:
    for error in errors:
        sys.stderr.write(f"gpudoctor: error: {error}\n")


def use_color(stream: TextIO) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


def refuse_existing(path: str, force: bool) -> None:
    """Nothing a person has is overwritten without asking: an existing path (or any link) needs --force."""
    from gpudoctor.evidence.safe_write import refuse_to_replace

    refuse_to_replace(path, force)


def write_new_file(path: str, text: str, force: bool, executable: bool = False) -> None:
    """The one way commands write a user's path: atomically, never through a link (see ``safe_write``)."""
    from gpudoctor.evidence.safe_write import write_file

    write_file(path, text, force=force, executable=executable)
