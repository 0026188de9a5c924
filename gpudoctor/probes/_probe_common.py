"""A framework probe's life: the common JSON keys, the framework's import under capture, the one JSON document.

This file runs inside the *target* Python next to a framework, never inside gpudoctor, so it uses the
standard library only and Python 3.8 syntax.  Everything here is guarded: a probe reports what
happened, it does not die of it.  The JSON contract is in ``gpudoctor/facts/framework_model.py``; the
constants both sides share are in ``protocol.py``; what the target Python holds is read by
``_probe_target.py`` and what the framework says is captured by ``_probe_capture.py``.

A probe's life: :func:`run` takes the probes directory off ``sys.path``, then ``import_framework``
(capturing from there on), the framework-specific questions, then :meth:`Probe.finish`, which restores
fd 1/2, prints exactly one JSON document on stdout and leaves through ``os._exit`` so that no framework
exit handler (some crash at interpreter shutdown) can add output or turn a good run into a crash.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, TextIO

if TYPE_CHECKING or __package__:
    from . import _probe_capture, _probe_target, protocol
else:
    import _probe_capture
    import _probe_target
    import protocol

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import ModuleType


PROBE_VERSION = protocol.PROBE_VERSION
FD_CAPTURE_ENV = protocol.CAPTURE_FILE_ENV
PROGRESS_PREFIX = protocol.PROGRESS_PREFIX

# What the probe scripts call through this module.
guarded = _probe_capture.guarded
error_text = _probe_capture.error_text
error_record = _probe_capture.error_record
unique = _probe_capture.unique
distributions_matching = _probe_target.distributions_matching
read_text = _probe_target.read_text

_PROBES_DIR = os.path.dirname(os.path.abspath(__file__))


def _same_dir(entry: str) -> bool:
    try:
        return os.path.abspath(entry or os.curdir) == _PROBES_DIR
    except (TypeError, ValueError, OSError):
        return False


def drop_probes_dir_from_path() -> None:
    """Nothing of ours may shadow a module the framework imports (our files sit in a package beside others).

    Every module of ours is imported at the top of the script, before this runs.
    """
    sys.path[:] = [entry for entry in sys.path if not _same_dir(entry)]


# --- the interpreter, with what only macOS has -----------------------------------------------------------------


def _rosetta_translated() -> bool | None:
    """Whether this process runs translated by Rosetta 2: sysctl ``sysctl.proc_translated`` (1 translated, 0 native).

    The name does not exist on Intel Macs (no Rosetta): the process is native there.  None when libc cannot be asked.
    """
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib", use_errno=True)
        value = ctypes.c_int(0)
        size = ctypes.c_size_t(ctypes.sizeof(value))
        if libc.sysctlbyname(b"sysctl.proc_translated", ctypes.byref(value), ctypes.byref(size), None, 0) == 0:
            return value.value == 1
        return False if ctypes.get_errno() == 2 else None  # ENOENT: the name is unknown, so no Rosetta
    except Exception:  # noqa: BLE001 - a probe reports, it does not die
        return None


def python_info() -> dict[str, Any]:
    """The common ``python`` record; on macOS also ``mac_version`` (platform.mac_ver()) and ``translated`` (Rosetta).

    An x86_64 Python on Apple Silicon runs under Rosetta, where MPS is unavailable and ``mac_version`` may read
    "10.16" (an interpreter built with an old SDK): both keys let gpudoctor say so.  Absent off macOS.
    """
    info = _probe_target.python_info()
    if sys.platform == "darwin":
        try:
            import platform

            info["mac_version"] = platform.mac_ver()[0] or None
        except Exception:  # noqa: BLE001
            info["mac_version"] = None
        info["translated"] = _rosetta_translated()
    return info


# --- a framework that is not there -------------------------------------------------------------------------

# The distributions that can provide each framework's module: metadata without the module is a broken
# install, which the framework's own probe describes.
DISTRIBUTION_PREFIXES = {
    "torch": ("torch",),
    "tensorflow": ("tensorflow", "tf-nightly", "intel-tensorflow"),
    "jax": ("jax",),
    "cupy": ("cupy",),
}


def absent_record(framework: str) -> dict[str, Any] | None:
    """The "not installed" record of ``framework`` when it is clearly absent from this interpreter, else None.

    The same record whether made by the locator (one process answering for several frameworks) or by
    gpudoctor in its own interpreter: nothing of the framework's is importable and no distribution of it
    is installed.
    """
    started = time.perf_counter()
    if _probe_target.module_installed(framework):
        return None
    prefixes = DISTRIBUTION_PREFIXES.get(framework, (framework,))
    if any(key.startswith(prefixes) for key, _, _ in _probe_target.installed_distributions()):
        return None
    return {
        "probe": framework,
        "probe_version": PROBE_VERSION,
        "python": python_info(),
        "installed": False,
        "distribution": None,
        "nvidia_packages": _probe_target.nvidia_packages(),
        "probe_errors": {},
        "probe_error": None,
        "probe_s": round(time.perf_counter() - started, 4),
    }


# --- the probe's life ----------------------------------------------------------------------------------------


class Probe:
    """One run: the common JSON keys, filled as the probe goes; the framework adds its own keys."""

    def __init__(
        self,
        framework: str,
        module: str,
        candidates: Iterable[str],
        conda_names: Iterable[str] = (),
        family: Callable[[str], bool] | None = None,
        info_loggers: Iterable[str] = (),
    ) -> None:
        self.started = time.perf_counter()
        self.module = module
        self.doc: dict[str, Any] = {
            "probe": framework,
            "probe_version": PROBE_VERSION,
            "python": python_info(),
        }
        self.candidates = tuple(candidates)
        self.conda_names = tuple(conda_names)
        self.family = family
        self.capture = _probe_capture.Capture(info_loggers)
        self.errors: dict[str, str] = {}

    def installed(self) -> bool:
        ok = _probe_target.module_installed(self.module)
        self.doc["installed"] = ok
        return ok

    def common_metadata(self) -> None:
        self.doc["distribution"] = guarded(
            self.errors,
            "distribution",
            lambda: _probe_target.distribution_info(self.candidates, self.conda_names, self.family),
        )
        self.doc["nvidia_packages"] = guarded(self.errors, "nvidia_packages", _probe_target.nvidia_packages, {})

    def import_framework(self) -> Any:
        """Import the framework with everything captured; the module, or None (``import_error`` says why).

        ``Any``: the framework is untyped at this boundary (torch, tensorflow... are not gpudoctor's).
        """
        import importlib

        self.doc.update({"import_ok": False, "import_error": None, "import_s": None, "module_file": None})
        self.capture.start()
        started = time.perf_counter()
        try:
            module: ModuleType = importlib.import_module(self.module)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.doc["import_s"] = round(time.perf_counter() - started, 4)
            self.doc["import_error"] = error_record(exc)
            return None
        self.doc["import_s"] = round(time.perf_counter() - started, 4)
        self.doc["import_ok"] = True
        # Which files were imported: None for a namespace package (a directory left behind by an uninstall).
        self.doc["module_file"] = getattr(module, "__file__", None)
        return module

    def finish(self, probe_error: str | None = None) -> None:
        """Stop capturing, print the one JSON document and leave at once (exit status 0)."""
        self.capture.stop()
        doc = self.doc
        if doc.get("installed"):
            doc["log_lines"] = self.capture.log_lines()
            doc["warnings"] = self.capture.warnings()
            doc["loaded_libraries"] = _probe_target.loaded_libraries()
        doc["probe_errors"] = self.errors
        doc["probe_error"] = probe_error
        doc["probe_s"] = round(time.perf_counter() - self.started, 4)
        emit(doc)


def emit(doc: dict[str, Any]) -> None:
    try:
        text = json.dumps(doc, default=_json_default, sort_keys=False)
    except Exception as exc:  # noqa: BLE001 - NaN, cycles: say so rather than print nothing
        text = json.dumps(
            {
                "probe": doc.get("probe"),
                "probe_version": PROBE_VERSION,
                "python": doc.get("python"),
                "installed": doc.get("installed"),
                "probe_error": "could not encode JSON: %s" % error_text(exc),
            },
            default=str,
        )
    try:
        # Straight to fd 1: a framework may have replaced or closed sys.stdout.
        data = (text + "\n").encode("utf-8")
        while data:
            data = data[os.write(1, data) :]
    finally:
        # Frameworks' exit handlers (and C++ destructors) may crash or print at shutdown: skip them.
        os._exit(0)


def _json_default(value: object) -> object:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def run(probe: Probe, body: Callable[[Any, Probe], None]) -> None:
    """The standard flow: not installed → say so quickly; else import, then ``body(module, probe)`` asks."""
    drop_probes_dir_from_path()
    try:
        if not probe.installed():
            probe.common_metadata()
            probe.finish()
            return
        probe.common_metadata()
        module = probe.import_framework()
        if module is not None:
            body(module, probe)
    except BaseException as exc:  # noqa: BLE001 - our own bug: still one JSON document, with the traceback
        probe.finish(probe_error=error_record(exc)["traceback_tail"] or error_text(exc))
        return
    probe.finish()


# --- progress of long probes (smoke) -------------------------------------------------------------------------


def progress(
    stage: str, detail: str = "", done: int | None = None, total: int | None = None, stream: TextIO | None = None
) -> None:
    """One progress line for the parent to draw (``protocol.PROGRESS_PREFIX``, then a JSON object).

    Written to ``stream`` (default: the real stderr, even while fd 2 is being captured) and flushed
    at once; a failure to write is ignored: progress is a courtesy, the result is what counts.
    """
    line = PROGRESS_PREFIX + json.dumps({"stage": stage, "detail": detail, "done": done, "total": total}) + "\n"
    try:
        target = stream if stream is not None else sys.__stderr__
        if target is not None:
            target.write(line)
            target.flush()
    except Exception:  # noqa: BLE001
        pass
