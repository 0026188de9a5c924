"""The smoke engine both smoke probes share: its command line, its task loop's budget and interrupt texts.

Imported from the probe module itself (stdlib only), so what is tested here is what runs in the target Python.
The probes themselves run for real in ``tests/integration/test_smoke_*_live.py``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

from gpudoctor.probes import _smoke_engine as engine
from gpudoctor.probes import protocol

PROBES_DIR = pathlib.Path(protocol.__file__).parent


def _fresh_clock(budget_s: float) -> engine.Clock:
    """A clock whose budget starts now: the probe's own counts from its process start (the module import),
    which in a long test session is minutes ago."""
    clock = engine.Clock(budget_s)
    clock.started = time.perf_counter()
    clock.deadline = clock.started + budget_s
    return clock


def test_arguments_default_to_the_protocols_mode_and_budget():
    args = engine.parse_args([], "smoke_x.py")
    assert (args.mode, args.budget, args.devices) == ("quick", protocol.SMOKE_BUDGET_S["quick"], "all")
    assert engine.parse_args(["--mode", "full"], "smoke_x.py").budget == protocol.SMOKE_BUDGET_S["full"]
    assert engine.parse_args(["--budget", "7.5", "--devices", "cpu"], "smoke_x.py").budget == 7.5


@pytest.mark.parametrize(
    "argv", [["--mode", "slow"], ["--budget", "-1"], ["--budget", "nan"], ["--devices", "tpu"], ["--help"]]
)
def test_bad_arguments_raise_for_the_json_not_a_usage_text(argv):
    with pytest.raises(engine.ArgumentError):
        engine.parse_args(argv, "smoke_x.py")


def _tasks(log, count=3, fail_at=None, interrupt_at=None, clock=None):
    def work(index):
        def run(stop_at):
            log.append(index)
            if index == fail_at:
                raise RuntimeError("x" * 50)
            if index == interrupt_at:
                clock.interrupted = True
                raise engine.Stopped("interrupt")
            records[index].update(seconds=1.0, n=8)

        return run

    records = [{"n": None, "seconds": None, "error": None, "skipped": None} for _ in range(count)]
    return [engine.Task("matmul", str(i), records[i], work(i)) for i in range(count)], records


def test_a_task_without_its_share_of_the_budget_is_skipped_and_later_ones_still_run():
    clock = _fresh_clock(60.0)
    said, log = [], []
    tasks, records = _tasks(log)
    runner = engine.TaskRunner(clock, lambda *event: said.append(event), 12.5, ("seconds",), max_error_chars=10)
    # The middle task needs more time than its window gives it.
    runner.run(tasks, lambda task: (clock.deadline, 1e9 if task.detail == "1" else 0.0))
    assert log == [0, 2]
    assert records[1]["skipped"] == "budget: the 12.5 s time budget was spent"
    assert records[2]["seconds"] == 1.0 and records[2]["skipped"] is None
    assert runner.stopped_by() == "budget"
    assert said[-1] == ("done", "", 3, 3) and ("matmul", "2", 2, 3) in said


def test_an_error_is_the_tasks_result_cut_to_length():
    clock = _fresh_clock(60.0)
    tasks, records = _tasks([], fail_at=0)
    runner = engine.TaskRunner(clock, lambda *event: None, 60.0, ("seconds",), max_error_chars=10)
    runner.run(tasks, lambda task: (clock.deadline, 0.0))
    assert records[0]["error"] == "RuntimeErr..." and records[0]["skipped"] is None
    assert runner.stopped_by() is None


def test_an_interrupt_stops_the_run_and_keeps_no_half_measured_number():
    clock = _fresh_clock(60.0)
    said, log = [], []
    tasks, records = _tasks(log, interrupt_at=1, clock=clock)
    records[1]["n"] = 4096  # set before it was interrupted: "n" is not a measured key here, "seconds" is
    records[1]["seconds"] = 0.5
    engine.TaskRunner(clock, lambda *event: said.append(event), 60.0, ("seconds",)).run(
        tasks, lambda task: (clock.deadline, 0.0)
    )
    assert log == [0, 1]
    assert records[0]["skipped"] is None and records[0]["seconds"] == 1.0
    assert [r["skipped"] for r in records[1:]] == ["interrupted", "interrupted"]
    assert records[1]["seconds"] is None and records[1]["n"] == 4096
    assert not any(event[0] == "done" for event in said)


def test_the_clock_counts_from_the_engines_import():
    clock = engine.Clock(5.0)
    assert clock.deadline == engine.STARTED + 5.0 and clock.left() <= 5.0
    clock.deadline = time.perf_counter() - 1
    with pytest.raises(engine.Stopped, match="budget"):
        clock.check()
    clock.interrupted = True
    with pytest.raises(engine.Stopped, match="interrupt"):
        clock.check()


def test_every_probe_module_imports_as_a_script_module_beside_the_others():
    """Run by file path, the probes import their neighbours by plain name: every module must allow it."""
    names = sorted(path.stem for path in PROBES_DIR.glob("*.py") if path.stem != "__init__")
    code = (
        "import importlib, json, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "mods = [importlib.import_module(name) for name in sys.argv[2:]]\n"
        "print(json.dumps(sorted(m.__name__ for m in mods)))\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(PROBES_DIR), *names],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd="/",
        check=True,
    )
    assert json.loads(out.stdout) == names
