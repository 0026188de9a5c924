"""What every framework probe shares: the target Python's facts, install metadata, captured output, the JSON.

This file runs inside the *target* Python next to a framework, never inside gpudoctor, so it uses the
standard library only and Python 3.8 syntax.  Everything here is guarded: a probe reports what
happened, it does not die of it.  The JSON contract is in ``gpudoctor/facts/framework_model.py``.

A probe's life: :func:`start` (take the probes directory off ``sys.path`` and begin capturing),
``import_framework``, the framework-specific questions, then :func:`finish`, which restores fd 1/2,
prints exactly one JSON document on stdout and leaves through ``os._exit`` so that no framework
exit handler (some crash at interpreter shutdown) can add output or turn a good run into a crash.
"""

import json
import os
import re
import sys
import time

# logging, faulthandler, tempfile, traceback and warnings are imported where they are used: a probe that
# finds its framework absent never needs them, and on a machine with one framework the other probes are
# just that (each import here costs every probe a few milliseconds).

PROBE_VERSION = 1

# Lists in the JSON stay bounded whatever a framework does in a loop.
MAX_LINES = 400
MAX_LINE_CHARS = 2000
TRACEBACK_TAIL_LINES = 40

# The caller may name the file that takes fd 1/2 while the framework runs: if the probe then dies
# (a segfault in a CUDA library), what the framework logged up to that point is still on disk.
FD_CAPTURE_ENV = "GPUDOCTOR_PROBE_CAPTURE_FILE"

# CUDA / NVIDIA shared objects worth reporting when mapped into the process (matched on the file name).
_CUDA_LIBRARY = re.compile(
    r"^lib(?:cuda|cudart|cudnn\w*|cublas\w*|nvJitLink|nvrtc\w*|nccl|cusparse\w*|cufft\w*|curand|cusolver\w*"
    r"|cupti|nvToolsExt|nvtx\w*|cudadevrt|nvfatbin|nvjpeg|cufile\w*|nvperf\w*|nvidia-[\w-]+)"
    r"(?:[-.][\w.-]*)?\.so(?:\.[\w.]*)?$"
)

_PROBES_DIR = os.path.dirname(os.path.abspath(__file__))


def _same_dir(entry):
    try:
        return os.path.abspath(entry or os.curdir) == _PROBES_DIR
    except (TypeError, ValueError, OSError):
        return False


def drop_probes_dir_from_path():
    """Nothing of ours may shadow a module the framework imports (our files sit in a package beside others)."""
    sys.path[:] = [entry for entry in sys.path if not _same_dir(entry)]


# --- the target Python -------------------------------------------------------------------------------


def python_info():
    import platform

    info = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "implementation": None,
        "platform": sys.platform,
        "machine": None,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "virtualenv": sys.prefix != getattr(sys, "base_prefix", sys.prefix) or hasattr(sys, "real_prefix"),
        "conda_prefix": None,
    }
    try:
        info["implementation"] = platform.python_implementation()
    except Exception:  # noqa: BLE001 - a probe reports, it does not die
        pass
    try:
        info["machine"] = platform.machine() or None
    except Exception:  # noqa: BLE001
        pass
    # The conda environment this interpreter belongs to, judged by its own prefix (the activated
    # CONDA_PREFIX may name another environment than the Python being probed).
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        info["conda_prefix"] = sys.prefix
    return info


def module_installed(name):
    """Whether ``import name`` would find something, without importing it (nothing heavy is loaded)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        # ValueError: a module in sys.modules without __spec__; still "there".
        return name in sys.modules


# --- distributions, read from their metadata directories (fast, and no importlib.metadata needed) ----


def normalize_name(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _metadata_field(text, field):
    for line in (text or "").splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == field.lower():
            return value.strip()
    return None


def _metadata_dirs():
    """(normalised name, version from the dir name, metadata dir) for each dist on sys.path, first one wins."""
    seen = set()
    found = []
    for entry in sys.path:
        directory = entry or os.curdir
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in sorted(names):
            if name.endswith(".dist-info"):
                stem = name[: -len(".dist-info")]
            elif name.endswith(".egg-info"):
                stem = name[: -len(".egg-info")]
            else:
                continue
            dist, _, rest = stem.partition("-")
            version = rest.split("-", 1)[0] or None
            key = normalize_name(dist)
            if key in seen:
                continue
            seen.add(key)
            found.append((key, version, os.path.join(directory, name)))
    return found


_DIST_CACHE = []


def installed_distributions():
    if not _DIST_CACHE:
        try:
            _DIST_CACHE.append(_metadata_dirs())
        except Exception:  # noqa: BLE001
            _DIST_CACHE.append([])
    return _DIST_CACHE[0]


def _dist_name_version(path, fallback_name, fallback_version):
    meta_file = "METADATA" if path.endswith(".dist-info") else "PKG-INFO"
    text = _read_text(os.path.join(path, meta_file)) if os.path.isdir(path) else _read_text(path)
    name = _metadata_field(text, "Name") or fallback_name
    version = _metadata_field(text, "Version") or fallback_version
    return name, version


def distributions_matching(predicate):
    """{dist name: version} for the installed distributions whose normalised name satisfies ``predicate``."""
    result = {}
    for key, version, path in installed_distributions():
        try:
            if predicate(key):
                name, version = _dist_name_version(path, key, version)
                result[normalize_name(name)] = version
        except Exception:  # noqa: BLE001
            continue
    return result


def nvidia_packages():
    """The pip ``nvidia-*`` wheels (CUDA runtime, cuDNN, cuBLAS, NCCL...) in the target environment."""
    return distributions_matching(lambda key: key.startswith("nvidia-"))


def _conda_record(names):
    """The conda-meta record of the first of ``names`` installed by conda in this prefix, or None."""
    meta = os.path.join(sys.prefix, "conda-meta")
    try:
        files = os.listdir(meta)
    except OSError:
        return None
    for name in names:
        # <name>-<version>-<build>.json; version and build hold no "-", so "pytorch" never matches
        # "pytorch-cuda-12.1-...".
        pattern = re.compile(re.escape(name) + r"-[^-]+-[^-]+\.json$")
        for file_name in sorted(files):
            if not pattern.match(file_name):
                continue
            try:
                with open(os.path.join(meta, file_name), encoding="utf-8") as handle:
                    record = json.load(handle)
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and record.get("name", name) == name:
                return record
    return None


def distribution_info(candidates, conda_names=(), family=None):
    """Name, version and origin of the distribution that provides a framework.

    ``candidates``: distribution names in order of preference ("tensorflow", "tensorflow-cpu", ...);
    ``family``: a predicate on normalised names for other dists of the same framework, listed under
    ``also_installed`` (two TensorFlow wheels in one environment overwrite each other's files).
    """
    dists = {key: (version, path) for key, version, path in installed_distributions()}
    chosen = None
    for candidate in candidates:
        key = normalize_name(candidate)
        if key in dists:
            chosen = key
            break
    conda = None
    try:
        conda = _conda_record(conda_names or candidates)
    except Exception:  # noqa: BLE001
        conda = None
    if chosen is None and conda is None:
        return None
    info = {
        "name": None,
        "version": None,
        "installer": None,
        "direct_url": None,
        "conda_channel": None,
        "conda_build": None,
        "also_installed": {},
    }
    if chosen is not None:
        version, path = dists[chosen]
        name, info["version"] = _dist_name_version(path, chosen, version)
        info["name"] = normalize_name(name)  # PEP 503: "tensorflow-cpu", whatever its METADATA spells
        installer = _read_text(os.path.join(path, "INSTALLER"))
        info["installer"] = (installer.strip() or None) if installer is not None else None
        direct_url = _read_text(os.path.join(path, "direct_url.json"))
        if direct_url:
            try:
                info["direct_url"] = json.loads(direct_url)
            except ValueError:
                info["direct_url"] = direct_url.strip()
    if conda is not None:
        info["conda_channel"] = conda.get("channel") or conda.get("schannel")
        info["conda_build"] = conda.get("build")
        if info["name"] is None:
            info["name"], info["version"] = conda.get("name"), conda.get("version")
            info["installer"] = "conda"
    if family is not None:
        others = distributions_matching(lambda key: family(key) and key != chosen)
        info["also_installed"] = others
    return info


# --- what the process mapped ---------------------------------------------------------------------------


def loaded_libraries():
    """CUDA-related shared objects mapped into this process, in first-mapped order (Linux only)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    seen = []
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if not path.startswith("/") or path in seen:
            continue
        if _CUDA_LIBRARY.match(os.path.basename(path)):
            seen.append(path)
    return seen


# --- a framework that is not there ---------------------------------------------------------------------

# The distributions that can provide each framework's module: metadata without the module is a broken
# install, which the framework's own probe describes.
DISTRIBUTION_PREFIXES = {
    "torch": ("torch",),
    "tensorflow": ("tensorflow", "tf-nightly", "intel-tensorflow"),
    "jax": ("jax",),
    "cupy": ("cupy",),
}


def absent_record(framework):
    """The "not installed" record of ``framework`` when it is clearly absent from this interpreter, else None.

    The same record whether made by the locator (one process answering for several frameworks) or by
    gpudoctor in its own interpreter: nothing of the framework's is importable and no distribution of it
    is installed.
    """
    started = time.perf_counter()
    if module_installed(framework):
        return None
    prefixes = DISTRIBUTION_PREFIXES.get(framework, (framework,))
    if any(key.startswith(prefixes) for key, _, _ in installed_distributions()):
        return None
    return {
        "probe": framework,
        "probe_version": PROBE_VERSION,
        "python": python_info(),
        "installed": False,
        "distribution": None,
        "nvidia_packages": nvidia_packages(),
        "probe_errors": {},
        "probe_error": None,
        "probe_s": round(time.perf_counter() - started, 4),
    }


# --- capturing what the framework says -----------------------------------------------------------------


def _record_handler(sink):
    import logging

    class _RecordHandler(logging.Handler):
        def emit(self, record):
            try:
                sink.append("%s:%s:%s" % (record.levelname, record.name, record.getMessage()))
            except Exception:  # noqa: BLE001 - a badly formatted record must not break the probe
                pass

    return _RecordHandler(logging.DEBUG)


def _flush_c_stdio():
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

    def __init__(self, info_loggers=()):
        self.info_loggers = info_loggers
        self.records = []
        self.warning_texts = []
        self._warnings_cm = None
        self._warning_list = []
        self._handler = None
        self._saved_levels = {}
        self._saved_fds = None
        self._file = None
        self._path = None
        self._fault_file = None
        self.fd_text = ""

    def start(self):
        self._start_warnings()
        self._start_logging()
        self._start_fds()
        return self

    def _start_warnings(self):
        import warnings

        try:
            self._warnings_cm = warnings.catch_warnings(record=True)
            self._warning_list = self._warnings_cm.__enter__()
            warnings.simplefilter("default")  # once per location, whatever PYTHONWARNINGS says
        except Exception:  # noqa: BLE001
            self._warnings_cm = None

    def _start_logging(self):
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

    def _start_fds(self):
        import faulthandler
        import tempfile

        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        path = os.environ.get(FD_CAPTURE_ENV)
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

    def _restore_fds(self):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        if self._saved_fds is not None:
            _flush_c_stdio()
        if self._saved_fds is not None:
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

    def stop(self):
        import faulthandler
        import logging

        self._restore_fds()
        try:
            faulthandler.enable(file=sys.__stderr__, all_threads=True)
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

    def log_lines(self):
        lines = [line.rstrip() for line in self.fd_text.splitlines() if line.strip()]
        for record in self.records:
            lines.extend(line for line in record.splitlines() if line.strip())
        return bounded(lines)

    def warnings(self):
        return bounded(unique(self.warning_texts))

    def warning_messages_so_far(self):
        """The messages (without category) of the warnings recorded until now, while still capturing."""
        try:
            return [str(item.message) for item in self._warning_list]
        except Exception:  # noqa: BLE001
            return []


def unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def bounded(lines):
    lines = [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..." for line in lines]
    if len(lines) > MAX_LINES:
        half = MAX_LINES // 2
        lines = lines[:half] + ["... %d lines left out ..." % (len(lines) - MAX_LINES)] + lines[-half:]
    return lines


def error_text(exc):
    """ "Type: message", the way a person would quote the error."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001
        message = repr(exc)
    name = type(exc).__name__
    return "%s: %s" % (name, message) if message else name


def error_record(exc):
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


def guarded(errors, key, call, default=None):
    """Call one framework function; on any failure keep ``error_text`` under ``errors[key]``."""
    try:
        return call()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        errors[key] = error_text(exc)
        return default


# --- the probe's life ------------------------------------------------------------------------------------


class Probe:
    """One run: the common JSON keys, filled as the probe goes; the framework adds its own keys."""

    def __init__(self, framework, module, candidates, conda_names=(), family=None, info_loggers=()):
        self.started = time.perf_counter()
        self.module = module
        self.doc = {"probe": framework, "probe_version": PROBE_VERSION, "python": python_info()}
        self.candidates = candidates
        self.conda_names = conda_names
        self.family = family
        self.capture = Capture(info_loggers)
        self.errors = {}

    def installed(self):
        ok = module_installed(self.module)
        self.doc["installed"] = ok
        return ok

    def common_metadata(self):
        self.doc["distribution"] = guarded(
            self.errors, "distribution", lambda: distribution_info(self.candidates, self.conda_names, self.family)
        )
        self.doc["nvidia_packages"] = guarded(self.errors, "nvidia_packages", nvidia_packages, {})

    def import_framework(self):
        """Import the framework with everything captured; the module, or None (``import_error`` says why)."""
        import importlib

        self.doc.update({"import_ok": False, "import_error": None, "import_s": None, "module_file": None})
        self.capture.start()
        started = time.perf_counter()
        try:
            module = importlib.import_module(self.module)
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

    def finish(self, probe_error=None):
        """Stop capturing, print the one JSON document and leave at once (exit status 0)."""
        self.capture.stop()
        doc = self.doc
        if doc.get("installed"):
            doc["log_lines"] = self.capture.log_lines()
            doc["warnings"] = self.capture.warnings()
            doc["loaded_libraries"] = loaded_libraries()
        doc["probe_errors"] = self.errors
        doc["probe_error"] = probe_error
        doc["probe_s"] = round(time.perf_counter() - self.started, 4)
        emit(doc)


def emit(doc):
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


def _json_default(value):
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def run(probe, body):
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


# --- progress of long probes (smoke) ---------------------------------------------------------------------

PROGRESS_PREFIX = "@@gpudoctor-progress "


def progress(stage, detail="", done=None, total=None, stream=None):
    """One progress line for the parent to draw (``gpudoctor/facts/smoke_model.py`` describes it).

    Written to ``stream`` (default: the real stderr, even while fd 2 is being captured) and flushed
    at once; a failure to write is ignored: progress is a courtesy, the result is what counts.
    """
    line = PROGRESS_PREFIX + json.dumps({"stage": stage, "detail": detail, "done": done, "total": total}) + "\n"
    try:
        target = stream if stream is not None else sys.__stderr__
        target.write(line)
        target.flush()
    except Exception:  # noqa: BLE001
        pass
