"""Run one external command the safe way and turn whatever happens into evidence.

Always an argument list (never a shell string), always a timeout, output always
captured; a missing program, a hang or a crash becomes an :class:`EvidenceItem`
with ``error`` set instead of an exception.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

from gpudoctor.evidence.model import EvidenceItem

# Output beyond this is cut: a runaway command must not fill memory or a snapshot.
MAX_OUTPUT_CHARS = 4_000_000


def run_command(
    name: str, argv: list[str], timeout: float, env: dict[str, str] | None = None, nice: int = 0
) -> EvidenceItem:
    """Run ``argv``; ``nice`` > 0 lowers its CPU priority (a hint: the slowest source should not wait for it)."""
    item = EvidenceItem(name=name, kind="command", argv=list(argv))
    program = find_program(argv[0], env)
    if program is None:
        item.error = f"command not found: {argv[0]}"
        return item
    started = time.monotonic()
    try:
        proc = start_in_own_group([program, *argv[1:]], env)
    except OSError as exc:
        item.error = f"could not run {argv[0]}: {exc.strerror or exc}"
        item.duration_s = time.monotonic() - started
        return item
    if nice > 0:
        _lower_priority(proc.pid, nice)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        stdout, stderr = proc.communicate()
        item.timed_out = True
        item.error = f"{argv[0]} did not answer within {timeout:g} s and was stopped"
    item.duration_s = time.monotonic() - started
    item.exit_code = proc.returncode
    item.text = decode_output(stdout)
    item.stderr = decode_output(stderr)
    return item


def find_program(name: str, env: dict[str, str] | None = None) -> str | None:
    """The path of ``name`` on the PATH of ``env`` (else of this process), or None."""
    return shutil.which(name, path=(env or os.environ).get("PATH"))


def start_in_own_group(argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``argv`` with stdin closed and stdout/stderr piped, in a session of its own (OSError if it can't).

    A new session lets :func:`kill_group` end the whole process group, so a hung command cannot leave
    children behind that keep our pipes open (and a terminal's Ctrl-C reaches only gpudoctor, which
    decides what the child gets).
    """
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def _lower_priority(pid: int, nice: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    except (AttributeError, OSError):  # not on this platform, or the process is already gone
        pass


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group ``proc`` leads (started by :func:`start_in_own_group`), else ``proc`` alone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:  # already reaped
            pass


def decode_output(data: bytes | None) -> str:
    """Bytes a command wrote, as text: cut at :data:`MAX_OUTPUT_CHARS`, undecodable bytes replaced."""
    if not data:
        return ""
    return data[:MAX_OUTPUT_CHARS].decode("utf-8", errors="replace")
