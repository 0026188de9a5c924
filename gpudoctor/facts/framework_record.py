"""What every framework probe's JSON (``framework-<name>.json``) has, read into typed values.

The shared readers behind the per-framework parsers of :mod:`gpudoctor.facts.framework_probe`: typed
value helpers, the target Python, how the probe run went, the shared objects the framework mapped,
where its distribution came from, and the devices it listed.  Every value is checked for its type,
and a value of the wrong type is unknown (``None``) or skipped, never an error.
"""

from __future__ import annotations

import json
import re

from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.evidence.redact import strip_url_credentials
from gpudoctor.facts.collect_env import torch_index_hint
from gpudoctor.facts.framework_model import (
    FrameworkDevice,
    InstallOrigin,
    LoadedLibrary,
    ProbeRun,
    PythonTarget,
)
from gpudoctor.facts.json_values import json_dict, json_int
from gpudoctor.facts.nvml import cuda_version_from_int

TAIL_LINES = 20
MAX_ITEMS = 500  # lists in a probe record (log lines, libraries): a runaway log must not become a huge fact
MAX_TEXT = 4000

_NO_RESULT = "the probe printed no result"
_INCOMPLETE = "the probe printed an incomplete result"
# Installers that fetch from a package index (the dist-info INSTALLER file's word).
_INDEX_INSTALLERS = {"pip", "uv", "poetry", "pdm", "pipenv", "hatch", "rye"}


# --- typed value helpers ---------------------------------------------------------------------------------------
def _str(value: object) -> str | None:
    return value.strip()[:MAX_TEXT] if isinstance(value, str) and value.strip() else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value and abs(value) != float("inf") else None


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item[:MAX_TEXT] for item in value[:MAX_ITEMS] if isinstance(item, str) and item.strip()]


def _str_map(value: object) -> dict[str, str]:
    return {k: v for k, v in json_dict(value).items() if isinstance(k, str) and isinstance(v, str) and k and v}


def _nonzero_cuda(value: object) -> str | None:
    """12040 -> "12.4"; 0 (no driver) and anything else -> None.  Also takes "12.4" as it is."""
    if isinstance(value, str):
        return value.strip() if re.fullmatch(r"\s*\d+\.\d+\s*", value) else None
    return cuda_version_from_int(value)


def dotted_version(value: object) -> str | None:
    """cuDNN / NCCL integer versions: 90100 -> "9.1.0", 8902 -> "8.9.2", 7605 -> "7.6.5".

    Five digits and more are major*10000 + minor*100 + patch (cuDNN 9, NCCL >= 2.9); fewer are
    major*1000 + minor*100 + patch.  A [2, 21, 5] list or a "9.1.0" string is taken as it is.
    """
    if isinstance(value, list) and value and all(json_int(v) is not None and v >= 0 for v in value):
        return ".".join(str(v) for v in value)
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(?:\.\d+)+", text):
            return text
        value = int(text) if text.isdecimal() else None
    number = json_int(value)
    if number is None or number <= 0:
        return None
    if number >= 10000:
        return f"{number // 10000}.{(number % 10000) // 100}.{number % 100}"
    return f"{number // 1000}.{(number % 1000) // 100}.{number % 100}"


def capability(value: object) -> str | None:
    """A compute capability as "8.6": from [8, 6], "8.6", or CuPy's "86" / 86."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(json_int(v) is not None and v >= 0 for v in value):
        return f"{value[0]}.{value[1]}"
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+\.\d+", text):
            return text
        value = int(text) if text.isdecimal() else None
    number = json_int(value)
    if number is None or number < 10:
        return None
    return f"{number // 10}.{number % 10}"


def _mib(value: object) -> int | None:
    number = json_int(value)
    return number // (1024 * 1024) if number is not None and number >= 0 else None


# --- shared helpers --------------------------------------------------------------------------------------------
def parse_python_target(data: object) -> PythonTarget | None:
    """The target interpreter from a probe's ``"python"`` record (or from the whole probe record)."""
    record = data.get("python") if isinstance(data, dict) and isinstance(data.get("python"), dict) else data
    if not isinstance(record, dict) or (record is data and "probe" in record):
        return None
    target = PythonTarget(
        executable=_str(record.get("executable")),
        version=_str(record.get("version")),
        implementation=_str(record.get("implementation")),
        platform=_str(record.get("platform")),
        machine=_str(record.get("machine")),
        prefix=_str(record.get("prefix")),
        virtualenv=_bool(record.get("virtualenv")),
        conda_prefix=_str(record.get("conda_prefix")),
        mac_version=_str(record.get("mac_version")),  # macOS only, as every probe's common part records it
        translated=_bool(record.get("translated")),  # Rosetta 2 (macOS only)
    )
    if all(value is None for value in vars(target).values()):
        return None
    return target


def _tail(*texts: object) -> str | None:
    lines: list[str] = []
    for text in texts:
        if isinstance(text, str) and text.strip():
            lines.extend(text.rstrip().splitlines())
    tail = [line[:MAX_TEXT] for line in lines[-TAIL_LINES:]]
    return "\n".join(tail) if tail else None


def _probe_failure(traceback_text: str) -> str:
    lines = [line.strip() for line in traceback_text.splitlines() if line.strip()]
    return f"the probe failed: {lines[-1][:MAX_TEXT]}"


def probe_run(item: EvidenceItem | None, data: object) -> ProbeRun:
    """How the probe run went (see :class:`ProbeRun` for the statuses)."""
    if item is None:
        return ProbeRun(status="not_collected")
    # Every status below keeps how the process ended.
    exit_code, duration_s = json_int(item.exit_code), _float(item.duration_s)
    if item.timed_out:
        return ProbeRun(
            status="timed_out",
            error=_str(item.error),
            output_tail=_tail(item.stderr, item.text),
            exit_code=exit_code,
            duration_s=duration_s,
        )
    if not isinstance(data, dict):
        return ProbeRun(
            status="crashed",
            error=_str(item.error) or _NO_RESULT,
            output_tail=_tail(item.stderr, item.text),
            exit_code=exit_code,
            duration_s=duration_s,
        )
    if data.get("installed") is False:
        return ProbeRun(status="not_installed", exit_code=exit_code, duration_s=duration_s)
    import_ok = data.get("import_ok")
    if import_ok is False:
        error = json_dict(data.get("import_error"))
        kind, message = _str(error.get("type")), _str(error.get("message"))
        traceback_tail = error.get("traceback_tail")
        return ProbeRun(
            status="import_error",
            error=f"{kind}: {message}" if kind and message else kind or message,
            # Its end says most: keep the last characters when it is long, never the first.
            output_tail=(
                traceback_tail.strip()[-2 * MAX_TEXT :]
                if isinstance(traceback_tail, str) and traceback_tail.strip()
                else _tail(item.stderr)
            ),
            exit_code=exit_code,
            duration_s=duration_s,
        )
    # The probe's own failure after (or instead of) the framework's answers: its traceback.
    probe_error = data.get("probe_error") if isinstance(data.get("probe_error"), str) else None
    probe_error = probe_error if probe_error and probe_error.strip() else None
    if import_ok is True:
        # Imported, but some answers may be missing: say why, keep "ok".
        return ProbeRun(
            status="ok",
            error=_probe_failure(probe_error) if probe_error else None,
            output_tail=_tail(probe_error) if probe_error else None,
            exit_code=exit_code,
            duration_s=duration_s,
        )
    # A dict without the probe's own answer: something else printed JSON, the record was cut, or the
    # probe could only say that it failed.
    if probe_error:
        return ProbeRun(
            status="crashed",
            error=_probe_failure(probe_error),
            output_tail=_tail(probe_error),
            exit_code=exit_code,
            duration_s=duration_s,
        )
    return ProbeRun(
        status="crashed",
        error=_str(item.error) or _INCOMPLETE,
        output_tail=_tail(item.stderr, item.text),
        exit_code=exit_code,
        duration_s=duration_s,
    )


# "libcudnn_graph.so.9", "libcuda.so.535.183.01", "libtorch_cuda.so"; Windows names ("cudart64_12.dll") keep the stem.
_SHARED_OBJECT = re.compile(r"^(?P<stem>.+?)\.so(?:\.(?P<version>[0-9][0-9A-Za-z.]*))?$")


def _library(path: str) -> LoadedLibrary | None:
    base = re.split(r"[/\\]", path.strip())[-1]
    match = _SHARED_OBJECT.match(base)
    if match:
        stem, version = match.group("stem"), match.group("version")
    elif base.lower().endswith(".dll"):
        stem, version = base[:-4], None
    else:
        return None  # not a shared object at all
    # torch's bundled copies carry a hash: "libcudart-d0da41ae.so.11.0", "libnvrtc-672ee683.so.11.2".
    stem = re.sub(r"-[0-9a-f]{8}$", "", stem)
    if not stem:
        return None
    normalized = path.replace("\\", "/")
    return LoadedLibrary(
        path=path.strip(),
        name=stem,
        version=version or None,
        from_pip="/site-packages/nvidia/" in normalized or "/dist-packages/nvidia/" in normalized,
    )


def parse_loaded_libraries(paths: object) -> list[LoadedLibrary]:
    """The shared objects a probe saw mapped, once each, in the probe's order."""
    libraries: list[LoadedLibrary] = []
    seen: set[str] = set()
    for path in _strings(paths):
        path = path.strip()
        if path in seen:
            continue
        seen.add(path)
        library = _library(path)
        if library is not None:
            libraries.append(library)
    return libraries


def parse_install_origin(
    distribution: object, version: str | None, framework: str, python: PythonTarget | None = None
) -> InstallOrigin:
    """Where a distribution came from: what the environment records, plus a derived ``index_hint``.

    ``index_hint`` is "conda:<channel>" for a conda install, the direct URL when there is one (a local file
    or folder, a VCS checkout), "download.pytorch.org/whl/<tag>" for a torch "+cu126"/"+cpu"/"+rocm6.2"
    wheel otherwise (only that index builds them: the build, not proof of where this copy was fetched), and
    "pypi" for an index installer's plain version: always for TensorFlow, for torch only on Linux, where
    download.pytorch.org's plain-version wheels (aarch64, macOS) cannot be told apart from PyPI's otherwise.
    """
    record = json_dict(distribution)
    installer_word, conda_channel = _str(record.get("installer")), _str(record.get("conda_channel"))
    direct = record.get("direct_url")
    url = _str(direct) or (_str(direct.get("url")) if isinstance(direct, dict) else None)
    # A snapshot written before probes dropped them may still hold a URL's credentials: never shown on.
    url = strip_url_credentials(url) if url else url
    installer = (installer_word or "").lower()
    version = _str(version) or _str(record.get("version"))
    index_hint: str | None = None
    if conda_channel or installer == "conda":
        index_hint = f"conda:{conda_channel}" if conda_channel else "conda"
    elif url:
        # Where it really came from (a local wheel or folder, a VCS checkout) beats what its version tag implies:
        # a "+cpu" wheel copied into /opt/wheels was not downloaded from download.pytorch.org by this install.
        index_hint = url
    elif framework == "torch" and torch_index_hint(version):
        index_hint = torch_index_hint(version)
    elif installer in _INDEX_INSTALLERS and version and "+" not in version:
        if framework != "torch" or (python is not None and python.os == "linux"):
            index_hint = "pypi"
    return InstallOrigin(installer=installer_word, url=url, conda_channel=conda_channel, index_hint=index_hint)


class _Probe:
    """What every probe record has, read once."""

    def __init__(self, item: EvidenceItem | None) -> None:
        self.item = item
        self.data = _probe_json(item)
        self.run = probe_run(item, self.data)
        self.record = self.data if isinstance(self.data, dict) else {}
        self.python = parse_python_target(self.record)
        self.distribution = json_dict(self.record.get("distribution"))
        # The distribution's version is known even when the import failed.
        self.version = _str(self.record.get("version")) or _str(self.distribution.get("version"))
        self.loaded_libraries = parse_loaded_libraries(self.record.get("loaded_libraries"))
        self.nvidia_packages = _str_map(self.record.get("nvidia_packages"))
        self.log_lines = _strings(self.record.get("log_lines"))
        self.warnings = _strings(self.record.get("warnings"))

    @property
    def probed(self) -> bool:
        return self.run.status == "ok"


def _probe_json(item: EvidenceItem | None) -> dict[str, object] | None:
    if item is None or item.timed_out:
        return None
    data = item.json()
    if isinstance(data, dict):
        return data
    if not isinstance(item.text, str):
        return None
    # Something printed to stdout before the record (a library's banner): the record is the last JSON line.
    for line in reversed(item.text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return None


def _devices(records: object, platform: str | None) -> list[FrameworkDevice]:
    devices = []
    for record in records[:MAX_ITEMS] if isinstance(records, list) else []:
        if isinstance(record, dict):
            devices.append(
                FrameworkDevice(
                    index=json_int(record.get("index")),
                    name=_str(record.get("name")),
                    compute_capability=capability(record.get("capability")),
                    memory_total_mib=_mib(record.get("total_memory")),
                    platform=platform,
                )
            )
    return devices
