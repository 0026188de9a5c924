"""Signals while gpudoctor runs commands: Ctrl-C and SIGTERM end every command it started.

Commands wait in worker threads, where a KeyboardInterrupt never arrives, and run in their own sessions,
where the terminal's signals never reach them: without these handlers they would run on to their timeouts
after Ctrl-C and outlive gpudoctor after SIGTERM.  :func:`stop_commands_on_signals` wraps every command of
the CLI; :func:`interruptible` is for collection, which stops and lets its caller report what finished.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from gpudoctor.evidence.run_command import _INTERRUPTION, _Interruption, stop_all_commands


@contextlib.contextmanager
def stop_commands_on_signals() -> Iterator[None]:
    """While inside, Ctrl-C and SIGTERM end the commands too (a no-op outside the main thread).

    Commands wait in worker threads, where a KeyboardInterrupt never arrives; without this they would
    run on to their timeouts after Ctrl-C, and outlive gpudoctor after SIGTERM (their own sessions do
    not get the terminal's signals).  Ctrl-C then raises KeyboardInterrupt as before; SIGTERM then ends
    gpudoctor as SIGTERM would have.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.getsignal(signal.SIGTERM)

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        stop_all_commands("gpudoctor was interrupted", interrupt_only=True)
        if callable(previous_int):
            previous_int(signum, frame)
        elif previous_int != signal.SIG_IGN:
            raise KeyboardInterrupt

    def on_terminate(signum: int, frame: FrameType | None) -> None:
        if previous_term == signal.SIG_IGN:
            return
        stop_all_commands("gpudoctor was terminated")
        if callable(previous_term):
            previous_term(signum, frame)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGINT, on_interrupt)
    signal.signal(signal.SIGTERM, on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous_int)
        signal.signal(signal.SIGTERM, previous_term)


_SIGNAL_REASONS = {signal.SIGINT: "gpudoctor was interrupted (Ctrl-C)", signal.SIGTERM: "gpudoctor was terminated"}


@contextlib.contextmanager
def interruptible() -> Iterator[_Interruption]:
    """While inside, Ctrl-C and SIGTERM stop collecting instead of gpudoctor: every command is killed at once
    (ending as an item whose ``error`` says so), none starts any more, and the caller goes on to report what
    finished.  The yielded object's ``signal`` says which signal came (None if none); a no-op outside the
    main thread.  A second signal after the first behaves as it would have outside.
    """
    _INTERRUPTION.reason = None
    _INTERRUPTION.signal = None
    if threading.current_thread() is not threading.main_thread():
        yield _INTERRUPTION
        return
    previous = {signum: signal.getsignal(signum) for signum in _SIGNAL_REASONS}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if _INTERRUPTION.signal is not None:  # asked twice: stop waiting for the collection to wind up
            signal.signal(signum, previous[signal.Signals(signum)])
            os.kill(os.getpid(), signum)
            return
        _INTERRUPTION.signal = signal.Signals(signum)
        _INTERRUPTION.reason = _SIGNAL_REASONS[_INTERRUPTION.signal]
        stop_all_commands(_INTERRUPTION.reason)

    for signum in _SIGNAL_REASONS:
        signal.signal(signum, on_signal)
    try:
        yield _INTERRUPTION
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _INTERRUPTION.reason = None
