"""The smoke engine: what the torch and TensorFlow smoke probes share, around their framework-specific workloads.

Runs inside the target Python (standard library only, Python 3.8).  It owns the command line
(``--mode``, ``--budget``, ``--devices``), the clock (the budget counts from this module's import, the
framework's import included), the interrupt flag set by SIGINT, progress lines on the real stderr, the
task loop that starts a workload only when its share of the budget is left and says why one did not run
("budget: ...", "interrupted"), and the one JSON document at the end (the contract of
``gpudoctor/facts/smoke_model.py``).  A framework module plans :class:`Task` s and measures; nothing else.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, NoReturn

if TYPE_CHECKING or __package__:
    from . import _probe_capture, _probe_common, _smoke_helpers, protocol
    from . import _smoke_measure as measuring
else:
    import _probe_capture
    import _probe_common
    import _smoke_helpers
    import _smoke_measure as measuring
    import protocol

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import TextIO

STARTED = time.perf_counter()

BUDGET_SKIP = "budget: the %g s time budget was spent"
INTERRUPTED = "interrupted"
STOPPED_EARLY = "not run (the probe stopped early)"


# --- the command line ------------------------------------------------------------------------------------


class ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # a usage error is reported in the JSON, not as a bare usage text
        raise ArgumentError(message)


def parse_args(
    argv: Sequence[str], prog: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    """``--mode``, ``--budget`` (default: the mode's) and ``--devices``, plus what ``extra`` adds."""
    parser = _Parser(prog=prog, add_help=False)
    parser.add_argument("--mode", choices=sorted(protocol.SMOKE_MODES), default=protocol.DEFAULT_SMOKE_MODE)
    parser.add_argument("--budget", type=float, default=None)
    parser.add_argument("--devices", choices=protocol.SMOKE_DEVICE_CHOICES, default="all")
    if extra is not None:
        extra(parser)
    args = parser.parse_args(list(argv))
    if args.budget is None:
        args.budget = protocol.smoke_budget_s(args.mode)
    if not (args.budget >= 0 and math.isfinite(args.budget)):
        raise ArgumentError("--budget must be a number of seconds >= 0, not %r" % args.budget)
    return args


def wants_cpu(devices: str) -> bool:
    return devices in ("all", "cpu")


def wants_gpus(devices: str) -> bool:
    return devices in ("all", "cuda")


# --- time: the budget and Ctrl-C -------------------------------------------------------------------------


class Stopped(Exception):
    """A workload could not go on: ``reason`` is "budget" or "interrupt"."""

    def __init__(self, reason: str) -> None:
        Exception.__init__(self, reason)
        self.reason = reason


class Clock:
    """The budget's deadline (host clock, ``perf_counter``), and whether an interrupt arrived."""

    def __init__(self, budget_s: float = float("inf")) -> None:
        self.started = STARTED
        self.deadline = STARTED + budget_s
        self.interrupted = False

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def check(self, needed_s: float = 0.0) -> None:
        """Raise :class:`Stopped` when interrupted, or when less than ``needed_s`` of the budget is left."""
        if self.interrupted:
            raise Stopped("interrupt")
        if self.left() < needed_s:
            raise Stopped("budget")


def set_signals(names: Iterable[str], handler: Any) -> None:
    """``handler`` for each signal named that this platform has (``Any``: a callable, SIG_IGN or SIG_DFL)."""
    for name in names:
        try:
            signal.signal(getattr(signal, name), handler)
        except (AttributeError, ValueError, OSError):  # not the main thread, or no such signal here
            pass


def install_interrupt_flag(clock: Clock, names: Iterable[str], raise_interrupt: bool) -> None:
    """The signals ``names`` set ``clock.interrupted``; with ``raise_interrupt`` they also raise KeyboardInterrupt.

    Set explicitly: a parent started without job control may hand us SIGINT ignored.  Without
    ``raise_interrupt`` the flag is only checked between repeats and steps, so that no exception raised at an
    arbitrary point (inside a framework's Python, the capture of fd 2) can escape before the JSON.
    """

    def handler(signum: int, frame: object) -> None:
        clock.interrupted = True
        if raise_interrupt:
            raise KeyboardInterrupt

    set_signals(names, handler)


def skip_text(reason: str, budget_s: float) -> str:
    return BUDGET_SKIP % budget_s if reason == "budget" else INTERRUPTED


# --- progress --------------------------------------------------------------------------------------------


class ProgressWriter:
    """Progress goes to the real stderr: a duplicate of fd 2 taken before fd 2 is captured."""

    def __init__(self) -> None:
        self.stream: TextIO | None
        try:
            self.stream = os.fdopen(os.dup(2), "w")
        except (OSError, ValueError):
            self.stream = None

    def __call__(self, stage: str, detail: str = "", done: int | None = None, total: int | None = None) -> None:
        if self.stream is not None:
            _probe_common.progress(stage, detail, done, total, stream=self.stream)

    def close(self) -> None:
        # Closed by us at the end: left to the garbage collector it would be a ResourceWarning in the report.
        if self.stream is not None:
            try:
                self.stream.close()
            except OSError:
                pass
            self.stream = None


# --- the task loop ---------------------------------------------------------------------------------------


class Task:
    """One workload: its stage and detail (for progress), the record it fills, and ``work(stop_at)``.

    ``stop_at``: the host-clock time the workload should be done by.  A record planned with ``skipped`` set
    (a dtype the device lacks) is listed in the JSON but never run.
    """

    def __init__(self, stage: str, detail: str, record: dict[str, Any], work: Callable[[float], None]) -> None:
        self.stage = stage
        self.detail = detail
        self.record = record
        self.work = work


# (the time the task must end by, the least time it needs to be worth starting)
Window = Callable[[Task], "tuple[float, float]"]


class TaskRunner:
    """Runs the plan in order and says why what did not run did not.

    "budget": a task whose window is too short is skipped, and later, cheaper tasks still get their chance;
    "interrupt": nothing more runs, and the task in progress keeps no half-measured number.
    """

    def __init__(
        self,
        clock: Clock,
        say: Callable[..., None],
        budget_s: float,
        measured_keys: Sequence[str],
        max_error_chars: int | None = None,
    ) -> None:
        self.clock = clock
        self.say = say
        self.budget_s = budget_s
        self.measured_keys = tuple(measured_keys)
        self.max_error_chars = max_error_chars
        self.budget_hit = False
        self.pending: list[dict[str, Any]] = []  # records of planned workloads not finished yet

    def run(self, tasks: Sequence[Task], window: Window, after: Callable[[Task], None] | None = None) -> None:
        clock = self.clock
        total = len(tasks)
        self.pending = [task.record for task in tasks if not task.record.get("skipped")]
        for index, task in enumerate(tasks):
            if task.record.get("skipped"):
                continue
            reason = "interrupt" if clock.interrupted else None
            if reason is None:
                stop_at, needed = window(task)
                if stop_at - time.perf_counter() < needed:
                    reason = "budget"
                else:
                    reason = self._run_one(task, index, total, stop_at, after)
            if reason is not None:
                self.budget_hit = self.budget_hit or reason == "budget"
                self._unfinished(task.record, skip_text(reason, self.budget_s))
            self.pending.remove(task.record)
        if not clock.interrupted:
            self.say("done", "", total, total)

    def _run_one(
        self, task: Task, index: int, total: int, stop_at: float, after: Callable[[Task], None] | None
    ) -> str | None:
        """Run one task; the reason it stopped short ("budget", "interrupt"), or None."""
        try:
            self.say(task.stage, task.detail, index, total)  # only for what starts
            task.work(stop_at)
        except Stopped as stop:
            return stop.reason
        except BaseException as exc:
            if self.clock.interrupted or isinstance(exc, KeyboardInterrupt):
                self.clock.interrupted = True
                return "interrupt"
            if isinstance(exc, (SystemExit, GeneratorExit)):
                raise
            # One workload's failure (an OOM, a CUDA error) is its result; some errors carry a whole graph.
            text = _probe_capture.error_text(exc)
            limit = self.max_error_chars
            task.record["error"] = text if limit is None or len(text) <= limit else text[:limit] + "..."
        finally:
            if after is not None:
                after(task)
        return None

    def _unfinished(self, record: dict[str, Any], reason: str) -> None:
        for key in self.measured_keys:
            if key in record:
                record[key] = None
        if not record.get("error"):
            record["skipped"] = reason

    def mark_unfinished(self) -> None:
        """Workloads that never finished (interrupted, or a bug of ours): skipped, their partial numbers dropped."""
        reason = INTERRUPTED if self.clock.interrupted else STOPPED_EARLY
        for record in self.pending:
            self._unfinished(record, reason)
        self.pending = []

    def stopped_by(self) -> str | None:
        if self.clock.interrupted:
            return "interrupt"
        return "budget" if self.budget_hit else None


# --- one run, from the command line to the JSON ----------------------------------------------------------


class SmokeRun:
    """One smoke run's shared state: the probe and its document, the clock, progress, the task runner."""

    def __init__(
        self,
        framework: str,
        probe: _probe_common.Probe,
        allreduce: dict[str, Any] | None,
        extra_keys: dict[str, Any] | None = None,
        interrupt_signals: Sequence[str] = ("SIGINT", "SIGTERM"),
        raise_interrupt: bool = False,
    ) -> None:
        self.clock = Clock()
        self.interrupt_signals = tuple(interrupt_signals)
        # First of all: a Ctrl-C at any point still gets its JSON answer.
        install_interrupt_flag(self.clock, self.interrupt_signals, raise_interrupt)
        self.framework = framework
        self.probe = probe
        self.errors: dict[str, str] = {}
        self.runner: TaskRunner | None = None
        self.mark_unfinished = False  # at the end, planned workloads never finished are marked (torch)
        self.on_finish: list[Callable[[], None]] = []
        self.on_interrupt: Callable[[], None] | None = None
        self.doc = probe.doc
        self.doc.update(
            {
                "framework": framework,
                "framework_version": None,
                "mode": None,
                "budget_s": None,
                "elapsed_s": None,
                "stopped_by": None,
                "devices": [],
                "matmul": [],
                "cnn": [],
                "bandwidth": [],
                "p2p": [],
                "allreduce": allreduce,
            }
        )
        self.doc.update(extra_keys or {})
        self.doc["probe_version"] = protocol.SMOKE_VERSION
        self.say = ProgressWriter()

    @property
    def budget_s(self) -> float:
        budget = self.doc["budget_s"]
        return float(budget) if budget is not None else float("inf")

    def new_runner(self, measured_keys: Sequence[str], max_error_chars: int | None = None) -> TaskRunner:
        self.runner = TaskRunner(self.clock, self.say, self.budget_s, measured_keys, max_error_chars)
        return self.runner

    def import_framework(self, before_import: Callable[[], None] | None = None) -> Any:
        """The framework module (``Any``: untyped at this boundary), or None with ``errors["import"]`` saying why."""
        self.say("import", self.framework)
        if not self.probe.installed():
            self.errors["import"] = "%s is not installed in %s" % (self.framework, sys.executable)
            return None
        self.doc.update(measuring.quiet_openmp(_smoke_helpers.cpu_threads()))
        if before_import is not None:
            before_import()
        module = self.probe.import_framework()  # fd 1/2 captured from here to the end
        if module is None:
            failure = self.doc.get("import_error") or {}
            self.errors["import"] = "import %s failed: %s: %s" % (
                self.framework,
                failure.get("type"),
                failure.get("message"),
            )
        return module

    def main(
        self,
        argv: Sequence[str],
        prog: str,
        body: Callable[[argparse.Namespace], None],
        extra_args: Callable[[argparse.ArgumentParser], None] | None = None,
    ) -> None:
        """Parse the command line, run ``body(args)`` within the budget, print the JSON (and leave)."""
        _probe_common.drop_probes_dir_from_path()
        probe_error = None
        try:
            try:
                try:
                    args: argparse.Namespace | None = parse_args(argv, prog, extra_args)
                except ArgumentError as exc:
                    args = None
                    probe_error = "bad arguments: %s" % exc
                if args is not None:
                    self.doc.update({"mode": args.mode, "budget_s": args.budget})
                    self.clock.deadline = self.clock.started + args.budget
                    body(args)
            except BaseException as exc:  # noqa: BLE001 - still one JSON document, whatever happened
                if self.clock.interrupted or isinstance(exc, KeyboardInterrupt):
                    self.clock.interrupted = True
                    if self.on_interrupt is not None:
                        self.on_interrupt()
                else:
                    probe_error = _probe_capture.error_record(exc)["traceback_tail"] or _probe_capture.error_text(exc)
            # A second Ctrl-C must not cost the report of what finished.
            set_signals(self.interrupt_signals, signal.SIG_IGN)
        except KeyboardInterrupt:  # it came while the first was being handled
            self.clock.interrupted = True
            set_signals(self.interrupt_signals, signal.SIG_IGN)
        self.finish(probe_error)

    def finish(self, probe_error: str | None) -> None:
        set_signals(self.interrupt_signals, signal.SIG_IGN)
        for cleanup in self.on_finish:
            cleanup()
        if self.runner is not None and self.mark_unfinished:
            self.runner.mark_unfinished()
        self.say.close()
        self.probe.capture.stop()
        doc = self.doc
        if self.runner is not None:
            doc["stopped_by"] = self.runner.stopped_by()
        if self.clock.interrupted:
            doc["stopped_by"] = "interrupt"
        if doc.get("installed"):
            doc["log_lines"] = self.probe.capture.log_lines()
            doc["warnings"] = self.probe.capture.warnings()
        doc["errors"] = self.errors
        doc["probe_error"] = probe_error
        doc["elapsed_s"] = round(time.perf_counter() - self.clock.started, 3)
        _probe_common.emit(doc)  # leaves through os._exit
