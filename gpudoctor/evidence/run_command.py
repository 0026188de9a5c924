"""The one hardened runner: every external command gpudoctor starts goes through here.

Always an argument list (never a shell string), in a session and process group of its own, with stdin
closed, each output stream captured up to a cap, and a wall-clock limit.  Whatever happens (a missing
program, a hang, output without end, an exception, Ctrl-C, SIGTERM) the command and everything it
started are killed, and the outcome is an :class:`EvidenceItem` with ``error`` set, never an exception.

"Everything it started" is found three ways, because each misses something the others catch: the
process group (one atomic ``killpg``), the process tree as psutil sees it (children that left the group
with ``setsid`` while their parent lives), and a marker in the environment every process we start
inherits (daemons that double-forked away from both, keeping our pipes open).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.evidence.model import EvidenceItem

if TYPE_CHECKING:
    import psutil

# Bytes kept per stream (the name is older than the unit): a runaway command must not fill memory or a
# snapshot.  What it writes beyond this is read and dropped, so the command is not blocked on a full pipe;
# a line at the end of the item's stderr says how much was dropped.
MAX_OUTPUT_CHARS = 4_000_000
# The environment variable that marks every process started here (and everything they start).
MARKER_ENV = "GPUDOCTOR_COMMAND_ID"
# Once the command has exited, how long what it left behind may keep our pipes open before it is killed.
LEFTOVER_GRACE_S = 1.0
# After SIGKILL, how long to wait for the pipes to close and the command to be reaped.  A process stuck
# in the kernel (a hung GPU driver's D state) cannot die until its call returns: it must not hang us.
_REAP_WAIT_S = 2.0
_POLL_S = 0.05
_CHUNK = 65536
_MARKERS = itertools.count(1)


def run_command(
    name: str,
    argv: list[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
    nice: int = 0,
    max_output: int = MAX_OUTPUT_CHARS,
    max_file_bytes: int | None = None,
    cancel: threading.Event | None = None,
) -> EvidenceItem:
    """Run ``argv`` for at most ``timeout`` seconds; ``nice`` > 0 lowers its CPU priority (a scheduling hint).

    ``max_output``: bytes kept of stdout and of stderr each.  ``max_file_bytes``: the largest file the
    command may write (RLIMIT_FSIZE, Linux), for commands that send their output to a file of ours.
    ``cancel``: once set, the command is stopped as if its time were up.
    """
    item = EvidenceItem(name=name, kind="command", argv=list(argv))
    program = find_program(argv[0], env)
    if program is None:
        item.error = f"command not found: {argv[0]}"
        return item
    if _INTERRUPTION.reason is not None:
        item.error = f"not run: {_INTERRUPTION.reason}"
        return item
    started = time.monotonic()
    try:
        proc = start_in_own_group([program, *argv[1:]], env, stops_on_interrupt=True)
    except OSError as exc:
        item.error = f"could not run {argv[0]}: {exc.strerror or exc}"
        item.duration_s = time.monotonic() - started
        return item
    if _INTERRUPTION.reason is not None:  # the signal came while it was starting: the handler missed it
        stop_all_commands(_INTERRUPTION.reason)
    if nice > 0:
        _lower_priority(proc.pid, nice)
    if max_file_bytes is not None:
        _limit_file_size(proc.pid, max_file_bytes)
    output = _Output(proc, max_output)
    finished = False
    try:
        item.timed_out = not _wait_for_end(proc, output, started + timeout, cancel)
        finished = True
    finally:
        # ``finished`` is False only when an exception (KeyboardInterrupt in this thread) is on its way up.
        if finished and not item.timed_out and not output.open:
            _release(proc)  # it ended by itself: only its group may hold leftovers
        else:
            kill_group(proc)
            output.read_until(time.monotonic() + _REAP_WAIT_S)  # what it wrote before it died
        output.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_REAP_WAIT_S)
    item.duration_s = time.monotonic() - started
    item.exit_code = proc.returncode
    item.text = output.stdout.decode("utf-8", errors="replace")
    item.stderr = output.stderr.decode("utf-8", errors="replace") + output.dropped_note()
    stopped_by = _REGISTRY.stopped_by(proc)
    if item.timed_out:
        item.error = f"{argv[0]} did not answer within {timeout:g} s and was stopped"
    elif stopped_by is not None and finished:
        item.error = f"{argv[0]} was stopped: {stopped_by}"
    return item


def find_program(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The path of ``name`` on the PATH of ``env`` (else of this process), or None."""
    return shutil.which(name, path=(os.environ if env is None else env).get("PATH"))


def start_in_own_group(
    argv: list[str], env: Mapping[str, str] | None = None, *, stops_on_interrupt: bool = False
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with stdin closed and stdout/stderr piped, in a session of its own (OSError if it can't).

    The caller must end it with :func:`kill_group` on every path.  A session of its own means a terminal's
    Ctrl-C reaches only gpudoctor, which decides what the command gets: with ``stops_on_interrupt`` it is
    killed on Ctrl-C (inside :func:`stop_commands_on_signals`); without, the caller handles Ctrl-C itself
    (the smoke runner passes it on so the probe can print what finished).  SIGTERM kills every command.
    """
    marker = f"{os.getpid()}-{next(_MARKERS)}"
    child_env = dict(os.environ if env is None else env)
    child_env[MARKER_ENV] = marker
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env,
        start_new_session=True,
    )
    _REGISTRY.add(proc, marker, stops_on_interrupt)
    return proc


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command ``proc`` (from :func:`start_in_own_group`) and everything it started; never raises.

    Once the command is reaped its process id may belong to someone else: then only its group is
    signalled, which cannot be reused while any member is alive.
    """
    marker = _REGISTRY.remove(proc)
    if proc.returncode is not None:
        _signal_group(proc.pid, signal.SIGKILL)
        return
    import psutil  # only when something must be killed: most runs never pay its import

    # Stopped first, so that nothing forks while the tree is read; then read again and killed.
    victims = _tree(proc.pid)
    for victim in victims:
        with contextlib.suppress(psutil.Error):
            victim.suspend()
    _signal_group(proc.pid, signal.SIGSTOP)
    victims.update(_tree(proc.pid))
    if marker is not None:
        victims.update(_carrying(marker))
    _signal_group(proc.pid, signal.SIGKILL)
    for victim in victims:
        with contextlib.suppress(psutil.Error):
            victim.kill()


def _release(proc: subprocess.Popen[bytes]) -> None:
    """End what a command that exited by itself left in its group (it is not reaped yet: the group is its own)."""
    _REGISTRY.remove(proc)
    _signal_group(proc.pid, signal.SIGKILL)


def decode_output(data: bytes | None) -> str:
    """Bytes a command wrote, as text: cut at :data:`MAX_OUTPUT_CHARS`, undecodable bytes replaced."""
    if not data:
        return ""
    return data[:MAX_OUTPUT_CHARS].decode("utf-8", errors="replace")


def stop_all_commands(reason: str, interrupt_only: bool = False) -> None:
    """Kill every command running now (only those started with ``stops_on_interrupt`` if ``interrupt_only``)."""
    for proc in _REGISTRY.running(reason, interrupt_only):
        kill_group(proc)


class _Interruption:
    """Why gpudoctor stopped collecting (set once by a signal during :func:`interruptible`), else None."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.signal: signal.Signals | None = None


_INTERRUPTION = _Interruption()


class _Output:
    """The command's two pipes, read as data arrives, each kept up to ``limit`` bytes."""

    def __init__(self, proc: subprocess.Popen[bytes], limit: int) -> None:
        assert proc.stdout is not None and proc.stderr is not None  # both are PIPE in start_in_own_group
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._limit = limit
        self._selector = selectors.DefaultSelector()
        self._selector.register(proc.stdout, selectors.EVENT_READ, self.stdout)
        self._selector.register(proc.stderr, selectors.EVENT_READ, self.stderr)
        self._pipes = (proc.stdout, proc.stderr)
        self._dropped = {"stdout": 0, "stderr": 0}

    def dropped_note(self) -> str:
        """One line per stream that went past the cap, saying how much was dropped (empty when none was)."""
        return "".join(
            f"\n[gpudoctor: {stream} cut at {self._limit} bytes; at least {count} more bytes were dropped]\n"
            for stream, count in self._dropped.items()
            if count
        )

    @property
    def open(self) -> bool:
        return bool(self._selector.get_map())

    def read_for(self, seconds: float) -> None:
        """Read what arrives within ``seconds`` (less once both pipes are at their end)."""
        for key, _events in self._selector.select(max(seconds, 0.0)):
            data = os.read(key.fd, _CHUNK)
            if not data:
                self._selector.unregister(key.fileobj)
                continue
            kept: bytearray = key.data
            room = self._limit - len(kept)
            if room > 0:
                kept += data[:room]
            if len(data) > room:
                self._dropped["stdout" if kept is self.stdout else "stderr"] += len(data) - max(room, 0)

    def read_until(self, deadline: float) -> None:
        while self.open and time.monotonic() < deadline:
            self.read_for(min(deadline - time.monotonic(), _POLL_S))

    def close(self) -> None:
        self._selector.close()
        for pipe in self._pipes:
            pipe.close()


def _wait_for_end(
    proc: subprocess.Popen[bytes], output: _Output, deadline: float, cancel: threading.Event | None = None
) -> bool:
    """Read the output until the command has exited and closed its pipes; False when ``deadline`` came first
    (or ``cancel`` was set).

    Ending does not reap it (see :func:`_has_exited`), so :func:`kill_group` can still clear its group.
    """
    exited_at: float | None = None
    while output.open:
        now = time.monotonic()
        if now >= deadline or (cancel is not None and cancel.is_set()):
            return False
        if exited_at is None and _has_exited(proc):
            exited_at = now
        if exited_at is not None and now >= exited_at + LEFTOVER_GRACE_S:
            return True  # what it left behind holds our pipes: kill_group ends it, the command has answered
        output.read_for(min(deadline - now, _POLL_S))
    delay = 0.0005  # it usually exits as its pipes close: look again soon, then less often (as Popen.wait does)
    while not _has_exited(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, _POLL_S)
    return True


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the command has ended, leaving it unreaped: while it is a zombie its group id stays its own."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # macOS: reaped on the spot, the group is signalled by number
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped already
        return True


def _tree(pid: int) -> set[psutil.Process]:
    import psutil

    try:
        leader = psutil.Process(pid)
        return {leader, *leader.children(recursive=True)}
    except psutil.Error:
        return set()


def _carrying(marker: str) -> set[psutil.Process]:
    """Every process whose environment holds our marker (those of other users cannot be read, nor started by us)."""
    import psutil

    found = set()
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.pid != os.getpid() and process.environ().get(MARKER_ENV) == marker:
                found.add(process)
    return found


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _limit_file_size(pid: int, max_bytes: int) -> None:
    """Cap the files ``pid`` writes (set just after it started, before an interpreter gets to its first write).

    Python ignores SIGXFSZ, so a write past the cap fails with EFBIG instead of killing the process.
    """
    import resource

    with contextlib.suppress(AttributeError, OSError, ValueError):  # no prlimit here, or the process is gone
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


def _lower_priority(pid: int, nice: int) -> None:
    with contextlib.suppress(AttributeError, OSError):  # not on this platform, or the process is already gone
        os.setpriority(os.PRIO_PROCESS, pid, nice)


@dataclass
class _Running:
    proc: subprocess.Popen[bytes]
    marker: str
    stops_on_interrupt: bool
    stopped_by: str | None = None


class _Registry:
    """The commands running now, so that a signal handler can end them."""

    def __init__(self) -> None:
        # Re-entrant: a signal handler runs in the main thread, possibly while it holds the lock.
        self._lock = threading.RLock()
        self._running: dict[int, _Running] = {}
        self._stopped: dict[int, str] = {}

    def add(self, proc: subprocess.Popen[bytes], marker: str, stops_on_interrupt: bool) -> None:
        with self._lock:
            self._running[proc.pid] = _Running(proc, marker, stops_on_interrupt)

    def remove(self, proc: subprocess.Popen[bytes]) -> str | None:
        """Forget ``proc``; its marker, or None when it was not running here."""
        with self._lock:
            entry = self._running.pop(proc.pid, None)
            if entry is None or entry.proc is not proc:
                return None
            if entry.stopped_by is not None:
                self._stopped[proc.pid] = entry.stopped_by
            return entry.marker

    def running(self, reason: str, interrupt_only: bool) -> list[subprocess.Popen[bytes]]:
        """The commands to stop, each marked with ``reason``."""
        with self._lock:
            entries = [e for e in self._running.values() if e.stops_on_interrupt or not interrupt_only]
            for entry in entries:
                entry.stopped_by = reason
            return [entry.proc for entry in entries]

    def stopped_by(self, proc: subprocess.Popen[bytes]) -> str | None:
        """Why ``proc`` was stopped by a signal to gpudoctor (asked once, after :func:`kill_group`), or None."""
        with self._lock:
            return self._stopped.pop(proc.pid, None)


_REGISTRY = _Registry()
