"""Run the smoke workloads in the target Python, live, and keep their one JSON document as evidence.

The smoke probes (``gpudoctor/probes/smoke_<framework>.py``) run for seconds to minutes, so unlike the
framework probes they are watched while they run: their stderr is read line by line, progress lines
(``@@gpudoctor-progress {...}``, see ``gpudoctor/facts/smoke_model.py``) go to the caller's callback as they
arrive and everything else is kept as the item's stderr.  Whatever happens the result is the ``json``
evidence item ``smoke.json``, never an exception: a hard timeout (the budget plus a grace) kills the
probe's whole process group, and Ctrl-C in gpudoctor is passed on to the probe as SIGINT so that it
can stop cleanly and still print what finished.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import Any, Callable

from gpudoctor.evidence.framework_probes import _captured_section, probe_env
from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.evidence.run_command import MAX_OUTPUT_CHARS, decode_output, find_program, kill_group, start_in_own_group

# The smoke protocol's constants have their one home in gpudoctor.probes.protocol; the frameworks and
# the timeout grace keep their names here for the callers that read them from this module.
from gpudoctor.probes.protocol import CAPTURE_FILE_ENV, PROGRESS_PREFIX, SMOKE_FILE, smoke_budget_s, smoke_script_name
from gpudoctor.probes.protocol import SMOKE_FRAMEWORKS as SMOKE_FRAMEWORKS
from gpudoctor.probes.protocol import TIMEOUT_GRACE_S as TIMEOUT_GRACE_S

# After SIGINT, how long the probe gets to print the JSON of what finished before it is killed.
INTERRUPT_GRACE_S = 5.0
_POLL_S = 0.1

_PROBES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probes")

ProgressCallback = Callable[[dict[str, Any]], None]


def smoke_probe_path(framework: str) -> str:
    return os.path.join(_PROBES_DIR, smoke_script_name(framework))


def smoke_argv(
    python: str, framework: str = "torch", mode: str = "quick", budget: float | None = None, devices: str = "all"
) -> list[str]:
    budget = smoke_budget_s(mode) if budget is None else budget
    return [python, smoke_probe_path(framework), "--mode", mode, "--budget", f"{budget:g}", "--devices", devices]


def parse_progress_line(line: str) -> dict[str, Any] | None:
    """The event of one ``@@gpudoctor-progress {...}`` line, or None when the line is anything else."""
    if not line.startswith(PROGRESS_PREFIX):
        return None
    try:
        event = json.loads(line[len(PROGRESS_PREFIX) :])
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


class _Watched:
    """The probe's two pipes, each drained by its own thread: stdout kept whole, stderr split into events and log."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stdout: list[bytes] = []
        self.log: list[str] = []
        self._log_chars = 0
        self.threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _read_stdout(self) -> None:
        stream = self.proc.stdout
        if stream is None:
            return
        try:
            for chunk in iter(lambda: stream.read(65536), b""):
                self.stdout.append(chunk)
        except (OSError, ValueError):
            pass

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        if stream is None:
            return
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                event = parse_progress_line(line)
                if event is not None:
                    self.events.put(event)
                elif self._log_chars < MAX_OUTPUT_CHARS:
                    self.log.append(line)
                    self._log_chars += len(line) + 1
        except (OSError, ValueError):
            pass

    def finished(self) -> bool:
        return self.proc.poll() is not None and not any(thread.is_alive() for thread in self.threads)

    def join(self, timeout: float = 2.0) -> None:
        for thread in self.threads:
            thread.join(timeout)


def run_smoke(
    python: str,
    framework: str = "torch",
    mode: str = "quick",
    budget: float | None = None,
    timeout: float | None = None,
    on_progress: ProgressCallback | None = None,
    devices: str = "all",
    base_env: Mapping[str, str] | None = None,
) -> EvidenceItem:
    """Run ``framework``'s smoke probe in ``python``; the ``smoke.json`` item, whatever happens.

    ``budget``: seconds the probe may spend (default 25 quick, 180 full); ``timeout``: the hard limit
    after which its process group is killed (default budget + 20 s).  ``on_progress(event)`` is called
    in this thread, in order, for each progress line.  Ctrl-C here is forwarded to the probe as SIGINT;
    the item then holds what it printed and ``error`` says it was interrupted (nothing is re-raised).
    """
    budget = smoke_budget_s(mode) if budget is None else budget
    timeout = budget + TIMEOUT_GRACE_S if timeout is None else timeout
    argv = smoke_argv(python, framework, mode, budget, devices)
    item = EvidenceItem(name=SMOKE_FILE, kind="json", argv=argv)
    if framework not in SMOKE_FRAMEWORKS or not os.path.isfile(argv[1]):
        item.error = f"no smoke workloads for {framework!r} (known: {', '.join(SMOKE_FRAMEWORKS)})"
        return item
    program = find_program(python, None)
    if program is None:
        item.error = f"the target Python {python} was not found"
        return item
    env = probe_env("smoke", os.environ if base_env is None else base_env)
    workdir = tempfile.mkdtemp(prefix="gpudoctor-smoke-")
    capture = os.path.join(workdir, "output.txt")
    env[CAPTURE_FILE_ENV] = capture
    started = time.monotonic()
    try:
        try:
            proc = start_in_own_group([program, *argv[1:]], env)
            # Ctrl-C/SIGTERM wait (pending) until the watch is ready to answer them with the probe's report: a
            # signal raised between the start and the watch would leave the probe running and no report.
            held = _hold_signals()
        except OSError as exc:
            item.error = f"could not run {python}: {exc.strerror or exc}"
            return item
        interrupted, timed_out = _watch(proc, item, started + timeout, on_progress, held)
        item.duration_s = time.monotonic() - started
        item.exit_code = proc.returncode
        item.timed_out = timed_out
        item.error = _failure(framework, python, item, timeout, interrupted)
        if item.error is not None and not interrupted:
            # The probe removes the file after reading it back, so it is there only when the probe died.
            item.stderr = _captured_section(framework, capture) + item.stderr
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return item


def _hold_signals() -> bool:
    """Block SIGINT and SIGTERM in this thread (they stay pending); whether they were blocked here."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return False
    signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    return True


def _release_signals(held: bool) -> None:
    """Unblock what :func:`_hold_signals` blocked: a pending signal is handled now."""
    if held:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_SIGNALS)


def _watch(
    proc: subprocess.Popen[bytes],
    item: EvidenceItem,
    hard_deadline: float,
    on_progress: ProgressCallback | None,
    held: bool = False,
) -> tuple[bool, bool]:
    """Pump events until the probe ends; (interrupted, timed out).  Fills ``item.text`` and ``item.stderr``.

    ``held``: SIGINT/SIGTERM were blocked by :func:`_hold_signals` since the probe started; they are released
    once the pipes are read (their threads start with them blocked, so only this thread takes them).
    """
    watched = _Watched(proc)
    interrupted = timed_out = False
    stop_by = hard_deadline  # when the probe gets SIGKILL; earlier once asked to stop
    try:
        while True:
            try:
                _release_signals(held)  # inside the try: a signal that came since the start is answered here
                held = False
                _deliver(watched, on_progress)
                if watched.finished():
                    break
                now = time.monotonic()
                if now >= stop_by:
                    if not interrupted and not timed_out:
                        # Ask first: a probe that is only slow still prints what finished.
                        timed_out = True
                        _interrupt(proc)
                        stop_by = now + min(INTERRUPT_GRACE_S, 3.0)
                        continue
                    break
            except KeyboardInterrupt:
                if interrupted:
                    break  # a second Ctrl-C: no more waiting
                interrupted = True
                _interrupt(proc)
                stop_by = min(stop_by, time.monotonic() + INTERRUPT_GRACE_S)
    finally:
        _release_signals(held)
        # Whatever is left of the group (the probe, its rank processes) goes; then the pipes reach EOF.
        kill_group(proc)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        watched.join()
    try:
        _deliver(watched, on_progress)
    except KeyboardInterrupt:
        interrupted = True
    item.text = decode_output(b"".join(watched.stdout))
    item.stderr = "\n".join(watched.log) + ("\n" if watched.log else "")
    return interrupted, timed_out and not interrupted


_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _deliver(watched: _Watched, on_progress: ProgressCallback | None) -> None:
    """Hand the waiting progress events to the callback (waiting briefly for the first one)."""
    try:
        event = watched.events.get(timeout=_POLL_S)
    except queue.Empty:
        return
    while True:
        if on_progress is not None:
            try:
                on_progress(event)
            except Exception:  # noqa: BLE001 - a progress bar that fails must not cost the results
                pass
        try:
            event = watched.events.get_nowait()
        except queue.Empty:
            return


def _interrupt(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT to the probe alone: it stops its own rank processes and prints what finished."""
    try:
        os.kill(proc.pid, signal.SIGINT)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _failure(framework: str, python: str, item: EvidenceItem, timeout: float, interrupted: bool) -> str | None:
    """One sentence for a run that did not end with its result, or None when it did."""
    has_json = isinstance(item.json(), dict)
    if interrupted:
        tail = "; what finished is kept" if has_json else " before it printed a result"
        return f"interrupted: the {framework} smoke run was stopped by Ctrl-C{tail}"
    if item.timed_out:
        tail = " (it printed what finished when asked to stop)" if has_json else ""
        return f"the {framework} smoke probe did not finish within {timeout:g} s and was stopped{tail}"
    if has_json:
        return None
    code = item.exit_code
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the {framework} smoke probe crashed (signal {-code}, {name}) in {python}"
    if code:
        return f"the {framework} smoke probe exited with status {code} without a result ({python})"
    return f"the {framework} smoke probe printed no JSON result ({python})"
