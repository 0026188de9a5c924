"""Run one framework probe in the target Python and keep what happened as evidence.

The probes (``gpudoctor/probes/*_probe.py``) are stdlib-only scripts run by file path in the
interpreter the user works with; their one JSON document on stdout becomes the ``json`` evidence item
``framework-<name>.json``.  Importing a framework can hang, raise or kill the process (a segfault in a
CUDA library): each of those ends here as an item with an exit code, the output and a clear ``error``,
never as an exception in gpudoctor.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Mapping
from typing import Any

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.evidence.run_command import run_command

# The probe writes what the framework prints to fd 1/2 into the file CAPTURE_FILE_ENV names (see
# probes/_probe_capture.py), so that after a crash or a hang the framework's last words are still there to read.
from gpudoctor.probes.protocol import CAPTURE_FILE_ENV as CAPTURE_FILE_ENV
from gpudoctor.probes.protocol import FRAMEWORKS, LOCATE_SCRIPT, probe_file_name, probe_script_name

DEFAULT_PROBE_TIMEOUT_S = 60.0
# The largest capture file a probe may write: a framework that prints without end must not fill TMPDIR.
# Only the first MB is read back (``_captured_section``); past the cap the framework's writes fail (EFBIG).
MAX_CAPTURE_BYTES = 8_000_000

_PROBES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probes")


def probe_path(framework: str) -> str:
    """The probe script for ``framework`` (one of :data:`FRAMEWORKS`), as a file path."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"no probe for {framework!r} (known: {', '.join(FRAMEWORKS)})")
    return os.path.join(_PROBES_DIR, probe_script_name(framework))


def probe_argv(framework: str, python: str) -> list[str]:
    # No -I/-E/-s: PYTHONPATH, user site-packages and the like are part of the environment being diagnosed.
    return [python, probe_path(framework)]


def probe_env(framework: str, base_env: Mapping[str, str]) -> dict[str, str]:
    """The user's environment (LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES... are evidence), plus what the probe needs."""
    env = dict(base_env)
    # gpudoctor's own directory may be read-only, and the framework's caches are not ours to write.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # macOS: a venv launcher's variable leaks into children and makes another interpreter take the venv's prefix.
    env.pop("__PYVENV_LAUNCHER__", None)
    if framework == "tensorflow":
        # TensorFlow's C++ side says why it skips a GPU ("Could not load dynamic library ...") only at level 0.
        env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    return env


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _captured_section(framework: str, path: str) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(1_000_000)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace").rstrip()
    if not text:
        return ""
    return f"--- output of {framework} before the probe ended (captured by the probe) ---\n{text}\n--- stderr ---\n"


def _failure(framework: str, python: str, item: EvidenceItem, timeout: float) -> str | None:
    """One sentence for a probe that gave no result, or None when it did."""
    if item.timed_out:
        return (
            f"the {framework} probe did not finish within {timeout:g} s and was stopped "
            f"(importing or initialising {framework} hung in {python})"
        )
    if item.exit_code is None:  # it never ran: run_command's error says why
        return f"the {framework} probe could not run {python}: {item.error}"
    if item.exit_code < 0:
        number = -item.exit_code
        return (
            f"the {framework} probe crashed (signal {number}, {_signal_name(number)}) "
            f"while importing or probing {framework} in {python}"
        )
    if item.json() is None and not _has_json_line(item.text):
        if item.exit_code != 0:
            return f"the {framework} probe exited with status {item.exit_code} without a result ({python})"
        return f"the {framework} probe printed no JSON result ({python})"
    return None


def _has_json_line(text: str | None) -> bool:
    import json

    for line in (text or "").splitlines():
        if line.startswith("{"):
            try:
                if isinstance(json.loads(line), dict):
                    return True
            except ValueError:
                continue
    return False


def absent_here(framework: str, python: str) -> EvidenceItem | None:
    """The probe's "not installed" record, made without a process, when the target is gpudoctor's own Python.

    Starting an interpreter per framework only to learn it is absent costs ~70 ms of CPU each; in the
    interpreter we run in, the import system can say so directly (``find_spec`` locates a module
    without importing it).  Anything less than clearly absent returns None: the real probe runs.
    """
    if os.path.abspath(python) != os.path.abspath(sys.executable):
        return None
    import time

    from gpudoctor.probes import _probe_common as common

    started = time.perf_counter()
    try:
        record = common.absent_record(framework)
    except Exception:  # noqa: BLE001 - unsure: the real probe answers
        return None
    if record is None:
        return None
    return _absent_item(framework, python, record, time.perf_counter() - started)


def locate_absent(frameworks: list[str], python: str, timeout: float) -> dict[str, EvidenceItem]:
    """One process in ``python`` answers for every framework in ``frameworks`` that is clearly absent.

    Returns the "not installed" items it made; a framework missing from the answer (present, or the
    locator failed) must be probed for real.  When the locator, which imports nothing, hangs, the
    interpreter itself does: every framework gets an item saying so, and no probe is run.
    """
    if not frameworks:
        return {}
    import json

    argv = [python, os.path.join(_PROBES_DIR, LOCATE_SCRIPT), *frameworks]
    item = run_command("locate", argv, timeout=timeout, env=probe_env("locate", os.environ))
    if item.timed_out:
        return {name: interpreter_hung(name, python, timeout) for name in frameworks}
    try:
        answers = json.loads(item.text or "")
    except ValueError:
        return {}
    if not isinstance(answers, dict):
        return {}
    return {
        name: _absent_item(name, python, record, item.duration_s)
        for name, record in answers.items()
        if name in frameworks and isinstance(record, dict)
    }


def interpreter_hung(framework: str, python: str, timeout: float) -> EvidenceItem:
    """The probe's item when ``python`` did not even start: no framework import is to blame."""
    return EvidenceItem(
        name=probe_file_name(framework),
        kind="json",
        argv=probe_argv(framework, python),
        timed_out=True,
        duration_s=timeout,
        error=f"{python} did not start within {timeout:g} s and was stopped (the interpreter's start-up hangs: "
        f"a site-packages .pth file, sitecustomize, or the interpreter itself); {framework} was not probed",
    )


def _absent_item(framework: str, python: str, record: dict[str, Any], duration_s: float | None) -> EvidenceItem:
    import json

    return EvidenceItem(
        name=probe_file_name(framework),
        kind="json",
        text=json.dumps(record) + "\n",
        argv=probe_argv(framework, python),
        exit_code=0,
        duration_s=duration_s,
    )


def likely_installed(framework: str, python: str) -> bool:
    """A scheduling hint only: does the target's own site-packages hold the framework's package directory?

    Used to give the probes that will import something heavy the CPU first; a framework found some other
    way (PYTHONPATH, a .pth file) is still probed, just at a lower priority.
    """
    import glob

    prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    patterns = (
        os.path.join(prefix, "lib", "python*", "site-packages", framework),
        os.path.join(prefix, "Lib", "site-packages", framework),
        os.path.join(os.path.dirname(os.path.abspath(python)), "Lib", "site-packages", framework),
    )
    return any(glob.glob(pattern) for pattern in patterns)


def run_probe(
    framework: str,
    python: str,
    timeout: float = DEFAULT_PROBE_TIMEOUT_S,
    base_env: Mapping[str, str] | None = None,
    nice: int = 0,
    cancel: threading.Event | None = None,
) -> EvidenceItem:
    """Run ``framework``'s probe in ``python``; the item is ``framework-<name>.json`` whatever happens.

    ``cancel``: once set, the probe is stopped (the caller knows why and replaces the item).
    """
    name = probe_file_name(framework)
    env = probe_env(framework, os.environ if base_env is None else base_env)
    workdir = tempfile.mkdtemp(prefix="gpudoctor-probe-")
    capture = os.path.join(workdir, "output.txt")
    env[CAPTURE_FILE_ENV] = capture
    try:
        item = run_command(
            name,
            probe_argv(framework, python),
            timeout=timeout,
            env=env,
            nice=nice,
            max_file_bytes=MAX_CAPTURE_BYTES,
            cancel=cancel,
        )
        item.kind = "json"
        error = _failure(framework, python, item, timeout)
        if error is not None:
            item.error = error
            # The probe removes the file after reading it back, so it is there only when the probe died.
            item.stderr = _captured_section(framework, capture) + item.stderr
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return item
