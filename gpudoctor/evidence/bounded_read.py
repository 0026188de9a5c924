"""Reading what a user hands us, with limits: a size cap, a wait cap for a pipe, and a nesting cap for JSON.

``--from`` takes a path a person typed: a regular file, a pipe (``<(...)``, a FIFO, ``-``), or by mistake a
device (``/dev/zero`` never ends) or a socket.  Files and pipes are read with a size limit, a pipe only while
its writer keeps writing; anything else is refused at once, in one line.  JSON from a snapshot is checked for
depth before anything parses it: a hostile file nested thousands deep must not reach a recursive parser.
"""

from __future__ import annotations

import os
import re
import select
import stat
import time

from gpudoctor.errors import UsageError

# No single evidence file is anywhere near this; a bigger input is not ours.
MAX_INPUT_BYTES = 64 * 1024 * 1024
# How long a pipe may stay silent (no writer yet, or a writer that stopped) before we give up on it.
PIPE_SILENCE_S = 5.0
# Real evidence nests a few levels (nvml.json, probe records); past this it is not ours.
MAX_JSON_DEPTH = 64

_CHUNK = 1024 * 1024
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_JSON_BRACKET = re.compile(r"[\[\]{}]")


class InputReadError(UsageError):
    """The input cannot be read within its limits; the message is one line for a person."""


def _too_large(where: str) -> InputReadError:
    return InputReadError(f"{where} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB: not gpudoctor evidence")


def describe_kind(mode: int) -> str | None:
    """What a non-readable kind of path is, in words; None for the kinds we read (file, directory, pipe)."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISFIFO(mode):
        return None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular_file(path: str) -> bytes:
    """The bytes of a regular file (symlinks followed), refusing devices, sockets and FIFOs without blocking."""
    try:
        # O_NONBLOCK: opening a FIFO planted in a snapshot directory must not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise InputReadError(f"{path} is {describe_kind(mode) or 'not a regular file'}, not an evidence file")
        os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(descriptor, _CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_INPUT_BYTES:
                raise _too_large(path)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise InputReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)


def read_pipe_descriptor(descriptor: int, where: str, silence_s: float = PIPE_SILENCE_S) -> bytes:
    """Everything a pipe's writers send until they close it, giving up after ``silence_s`` without a byte."""
    chunks: list[bytes] = []
    size = 0
    poller = select.poll()
    poller.register(descriptor, select.POLLIN | select.POLLHUP | select.POLLERR)
    deadline = time.monotonic() + silence_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            waited = f"{silence_s:g} s"
            raise InputReadError(f"{where} is a pipe that sent nothing for {waited}: is anything writing to it?")
        if not poller.poll(max(1, int(remaining * 1000))):
            continue
        try:
            chunk = os.read(descriptor, _CHUNK)
        except BlockingIOError:
            continue
        except OSError as exc:
            raise InputReadError(f"cannot read {where}: {exc.strerror or exc}") from None
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_INPUT_BYTES:
            raise _too_large(where)
        chunks.append(chunk)
        deadline = time.monotonic() + silence_s


def read_fifo(path: str, silence_s: float = PIPE_SILENCE_S) -> bytes:
    """A named pipe or ``<(...)``: opened without waiting for a writer, then read within the limits."""
    try:
        # Linux reports no hang-up on a FIFO until a writer has come, so poll waits for one (up to the limit).
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return read_pipe_descriptor(descriptor, path, silence_s)
    finally:
        os.close(descriptor)


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON text nests objects/arrays deeper than ``limit`` (strings skipped; no parsing, no recursion)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _JSON_BRACKET.finditer(_JSON_STRING.sub("", text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False
