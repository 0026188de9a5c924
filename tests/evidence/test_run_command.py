"""The hardened runner against real processes: hangs, floods of output, escapees, Ctrl-C and SIGTERM.

Every command here is a real interpreter doing the nasty thing for real; each test asserts what the
runner returned and that every process the command started is gone afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from gpudoctor.evidence.interrupts import stop_commands_on_signals
from gpudoctor.evidence.run_command import LEFTOVER_GRACE_S, run_command

PYTHON = [sys.executable, "-S", "-c"]

# Writes its pid to argv[1] (when given) and on stdout, then sleeps; ignores SIGTERM as stubborn tools do.
SLEEPER = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if len(sys.argv) > 1:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("sleeper", os.getpid(), os.getpgid(0), flush=True)
    time.sleep(60)
    """
)


def spawner(then: str) -> str:
    """A command that starts SLEEPER in a session of its own (it leaves our group), prints its own pid, then ``then``."""
    return textwrap.dedent(
        f"""
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-S", "-c", {SLEEPER!r}], start_new_session=True)
        print("spawner", os.getpid(), os.getpgid(0), flush=True)
        {then}
        """
    )


def pids(text: str, role: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith(role + " ")]


def wait_for_lines(path: Path, within: float = 5.0) -> int:
    deadline = time.monotonic() + within
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)
    return int(path.read_text())


def gone(pid: int, within: float = 2.0) -> bool:
    """The process no longer runs (a zombie waiting for a parent that does not reap counts as gone)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.01)
    return False


def test_output_exit_code_and_stderr_are_kept_apart():
    item = run_command("x", [*PYTHON, "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"], timeout=10)
    assert (item.text, item.stderr, item.exit_code) == ("out\n", "err", 3)
    assert item.error is None and item.timed_out is False and item.duration_s is not None


def test_a_missing_program_is_evidence_not_an_exception():
    item = run_command("x", ["gpudoctor-no-such-program"], timeout=1)
    assert item.error == "command not found: gpudoctor-no-such-program"
    assert item.text is None and item.exit_code is None


def test_output_over_the_cap_is_cut_per_stream_and_the_command_still_finishes():
    flood = "import sys\nfor _ in range(50): sys.stdout.write('o' * 65536); sys.stderr.write('e' * 65536)\nprint('end')"
    item = run_command("x", [*PYTHON, flood], timeout=10, max_output=1000)
    # 3 MiB per stream went through pipes of 64 KiB: it exited by itself only because we kept reading.
    assert item.exit_code == 0 and not item.timed_out and item.error is None
    # The cut is said, not silent: a note closes the item's stderr.
    assert item.text == "o" * 1000 and item.stderr.startswith("e" * 1000)
    assert "stdout cut at 1000 bytes" in item.stderr and "stderr cut at 1000 bytes" in item.stderr


def test_endless_output_is_bounded_by_the_cap_and_the_timeout():
    started = time.monotonic()
    item = run_command("x", [*PYTHON, "import sys\nwhile True: sys.stdout.write('y' * 65536)"], 0.5, max_output=5000)
    assert item.timed_out and item.exit_code == -signal.SIGKILL
    assert item.text == "y" * 5000
    assert time.monotonic() - started < 0.5 + 2


def test_a_hang_that_ignores_sigterm_is_killed_at_the_timeout():
    item = run_command("x", [*PYTHON, SLEEPER], timeout=0.5)
    assert item.timed_out and item.exit_code == -signal.SIGKILL
    assert item.error == f"{sys.executable} did not answer within 0.5 s and was stopped"
    (sleeper,) = pids(item.text or "", "sleeper")  # what it wrote before the timeout is kept
    assert gone(sleeper)


def test_a_grandchild_that_left_the_group_with_setsid_is_killed_too():
    item = run_command("x", [*PYTHON, spawner("time.sleep(60)")], timeout=0.7)
    assert item.timed_out
    text = item.text or ""
    (child,), (grandchild,) = pids(text, "spawner"), pids(text, "sleeper")
    # the grandchild runs in a process group of its own: killing the command's group cannot reach it
    groups = {line.split()[0]: line.split()[2] for line in text.splitlines()}
    assert groups["sleeper"] != groups["spawner"]
    assert gone(child) and gone(grandchild)


def test_a_daemon_left_holding_the_pipes_after_the_command_exited_is_killed():
    """The spawner exits at once; its setsid grandchild, orphaned, keeps our stdout open."""
    started = time.monotonic()
    item = run_command("x", [*PYTHON, spawner("sys.exit(0)")], timeout=30)
    elapsed = time.monotonic() - started
    # the command answered (not a timeout: the 30 s limit was never reached), after the grace the leftovers got
    assert item.exit_code == 0 and not item.timed_out and item.error is None
    assert elapsed >= LEFTOVER_GRACE_S
    (grandchild,) = pids(item.text or "", "sleeper")
    assert gone(grandchild)


def test_ctrl_c_in_the_calling_thread_kills_the_command_and_goes_on_up(tmp_path):
    pid_file = tmp_path / "pid"
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_command("x", [*PYTHON, SLEEPER, str(pid_file)], timeout=30)
    finally:
        timer.cancel()
    assert gone(wait_for_lines(pid_file))


def test_ctrl_c_stops_the_commands_waiting_in_worker_threads(tmp_path):
    pid_file = tmp_path / "pid"
    results = []
    worker = threading.Thread(
        target=lambda: results.append(run_command("x", [*PYTHON, SLEEPER, str(pid_file)], timeout=30))
    )
    with pytest.raises(KeyboardInterrupt), stop_commands_on_signals():
        worker.start()
        pid = wait_for_lines(pid_file)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises here
    worker.join(5)
    (item,) = results
    assert item.error == f"{sys.executable} was stopped: gpudoctor was interrupted"
    assert not item.timed_out and item.exit_code == -signal.SIGKILL
    assert gone(pid)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back on the way out


def test_sigterm_kills_every_running_command_then_ends_gpudoctor_as_sigterm_does(tmp_path):
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import sys, threading
        from gpudoctor.evidence.interrupts import stop_commands_on_signals
        from gpudoctor.evidence.run_command import run_command
        with stop_commands_on_signals():
            argv = [sys.executable, "-S", "-c", {SLEEPER!r}, {str(pid_file)!r}]
            worker = threading.Thread(target=run_command, args=("x", argv, 60))
            worker.start()
            worker.join()
        print("not reached")
        """
    )
    gpudoctor = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        pid = wait_for_lines(pid_file)
        gpudoctor.send_signal(signal.SIGTERM)
        out, _ = gpudoctor.communicate(timeout=10)
    finally:
        gpudoctor.kill()
    assert gpudoctor.returncode == -signal.SIGTERM and out == b""
    assert gone(pid)
