"""What a framework says while it is probed: fd 1/2, Python warnings and logging records, and its errors as text.

Runs inside the target Python (standard library only, Python 3.8).  Every list that ends in the JSON is
bounded here, whatever a framework does in a loop.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, BinaryIO, Callable, TextIO, TypeVar

if TYPE_CHECKING or __package__:
    from . import protocol
else:
    import protocol

if TYPE_CHECKING:
    import logging
    import warnings
    from collections.abc import Iterable

# logging, faulthandler, tempfile, traceback and warnings are imported where they are used: a probe that
# finds its framework absent never needs them (each import costs every probe a few milliseconds).

MAX_LINES = 400
MAX_LINE_CHARS = 2000
TRACEBACK_TAIL_LINES = 40

T = TypeVar("T")


def unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def bounded(lines: list[str]) -> list[str]:
    lines = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..." for line in lines]
    if len(lines) > MAX_LINES:
        half = MAX_LINES // 2
        lines = lines[:half] + ["... %d lines left out ..." % (len(lines) - MAX_LINES)] + lines[-half:]
    return lines


def error_text(exc: BaseException) -> str:
    """ "Type: message", the way a person would quote the error."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001
        message = repr(exc)
    name = type(exc).__name__
    return "%s: %s" % (name, message) if message else name


def error_record(exc: BaseException) -> dict[str, str]:
    import traceback

    try:
        tail = traceback.format_exception(type(exc), exc, exc.__traceback__)
        tail_text = "".join(tail).splitlines()[-TRACEBACK_TAIL_LINES:]
    except Exception:  # noqa: BLE001
        tail_text = []
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001
        message = repr(exc)
    return {"type": type(exc).__name__, "message": message, "traceback_tail": "\n".join(tail_text)}


def guarded(errors: dict[str, str], key: str, call: Callable[[], T], default: T | None = None) -> T | None:
    """Call one framework function; on any failure keep ``error_text`` under ``errors[key]``."""
    try:
        return call()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        errors[key] = error_text(exc)
        return default


def _record_handler(sink: list[str]) -> logging.Handler:
    import logging

    class _RecordHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                sink.append("%s:%s:%s" % (record.levelname, record.name, record.getMessage()))
            except Exception:  # noqa: BLE001 - a badly formatted record must not break the probe
                pass

    return _RecordHandler(logging.DEBUG)


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers into the capture file: a library's printf would otherwise be lost at os._exit."""
    if os.name != "posix":
        return
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except Exception:  # noqa: BLE001 - no libc symbols (a static build): nothing to flush then
        pass


class Capture:
    """Takes fd 1 and fd 2 (C++ logging of TensorFlow/XLA writes there), Python warnings and logging records.

    fd 1 is taken too so that nothing a framework prints can spoil the JSON on stdout.  A crash while
    captured still leaves a Python traceback on the real stderr: faulthandler writes to the saved fd.
    """

    def __init__(self, info_loggers: Iterable[str] = ()) -> None:
        self.info_loggers = tuple(info_loggers)
        self.records: list[str] = []
        self.warning_texts: list[str] = []
        self._warnings_cm: warnings.catch_warnings[list[warnings.WarningMessage]] | None = None
        self._warning_list: list[warnings.WarningMessage] = []
        self._handler: logging.Handler | None = None
        self._saved_levels: dict[str, int] = {}
        self._saved_fds: tuple[int, int] | None = None
        self._file: BinaryIO | None = None
        self._path: str | None = None
        self._fault_file: TextIO | None = None
        self.fd_text = ""

    def start(self) -> Capture:
        self._start_warnings()
        self._start_logging()
        self._start_fds()
        return self

    def _start_warnings(self) -> None:
        import warnings

        try:
            self._warnings_cm = warnings.catch_warnings(record=True)
            self._warning_list = self._warnings_cm.__enter__()
            warnings.simplefilter("default")  # once per location, whatever PYTHONWARNINGS says
        except Exception:  # noqa: BLE001
            self._warnings_cm = None

    def _start_logging(self) -> None:
        import logging

        try:
            self._handler = _record_handler(self.records)
            logging.getLogger().addHandler(self._handler)
            for name in self.info_loggers:
                logger = logging.getLogger(name)
                self._saved_levels[name] = logger.level
                if logger.getEffectiveLevel() > logging.INFO:
                    logger.setLevel(logging.INFO)
        except Exception:  # noqa: BLE001
            pass

    def _start_fds(self) -> None:
        import faulthandler
        import tempfile

        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        path = os.environ.get(protocol.CAPTURE_FILE_ENV)
        if path:
            try:
                self._file = open(path, "w+b")  # noqa: SIM115 - the file outlives this block on purpose
                self._path = path
            except OSError:
                self._file = None  # an anonymous file still keeps stdout clean
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 - the file outlives this block on purpose
            saved = (os.dup(1), os.dup(2))
            self._saved_fds = saved
            try:
                self._fault_file = os.fdopen(os.dup(saved[1]), "w")
                faulthandler.enable(file=self._fault_file, all_threads=True)
            except Exception:  # noqa: BLE001
                pass
            os.dup2(self._file.fileno(), 1)
            os.dup2(self._file.fileno(), 2)
        except Exception:  # noqa: BLE001 - no fds to take (an embedded interpreter): capture the rest
            self._restore_fds()

    def _restore_fds(self) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        if self._saved_fds is not None:
            _flush_c_stdio()
            out, err = self._saved_fds
            try:
                os.dup2(out, 1)
                os.dup2(err, 2)
            except OSError:
                pass
            for fd in (out, err):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._saved_fds = None
        if self._file is not None:
            try:
                self._file.flush()
                self._file.seek(0)
                self.fd_text = self._file.read().decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                pass
            try:
                self._file.close()
                if self._path:
                    os.unlink(self._path)  # read back: the caller needs it only after a crash
            except OSError:
                pass
            self._file = None

    def stop(self) -> None:
        import faulthandler
        import logging

        self._restore_fds()
        try:
            # file=None would mean sys.stderr, which is what an embedded interpreter without __stderr__ gets.
            faulthandler.enable(file=sys.__stderr__ or sys.stderr, all_threads=True)
        except Exception:  # noqa: BLE001
            pass
        if self._handler is not None:
            try:
                logging.getLogger().removeHandler(self._handler)
            except Exception:  # noqa: BLE001
                pass
        for name, level in self._saved_levels.items():
            try:
                logging.getLogger(name).setLevel(level)
            except Exception:  # noqa: BLE001
                pass
        if self._warnings_cm is not None:
            try:
                for item in self._warning_list:
                    self.warning_texts.append("%s: %s" % (getattr(item.category, "__name__", "Warning"), item.message))
            except Exception:  # noqa: BLE001
                pass
            try:
                self._warnings_cm.__exit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
            self._warnings_cm = None

    def log_lines(self) -> list[str]:
        lines = [line.rstrip() for line in self.fd_text.splitlines() if line.strip()]
        for record in self.records:
            lines.extend(line for line in record.splitlines() if line.strip())
        return bounded(lines)

    def warnings(self) -> list[str]:
        return bounded(unique(self.warning_texts))

    def warning_messages_so_far(self) -> list[str]:
        """The messages (without category) of the warnings recorded until now, while still capturing."""
        try:
            return [str(item.message) for item in self._warning_list]
        except Exception:  # noqa: BLE001
            return []
