"""The generators' one input boundary: every value that came from evidence or a person is checked here before a
generator reads it, so nothing else in ``gpudoctor.generate`` has to be careful field by field.

- A value with a shape (a driver version, a compute capability, an os-release ID, a Python version, a CUDA
  release, a framework version) must have exactly that shape.  From evidence (a snapshot someone else wrote),
  anything else is dropped: the generator then works as if the value were unknown.  From a flag, anything else
  is refused (GenerationRefused: one line, exit 2).
- Free text (GPU names, where the machine was read from) lands only in comments; every character that could end
  a comment line or fool a reader (control characters, line and paragraph separators, bidi and other format
  characters) is written as a visible escape instead, and the length is capped.
- A venv path is quoted by the generator for its context; here it must be a path with no control characters.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import TypeVar

from gpudoctor.generate.model import DockerfileRequest, GenerationRefused, InstallScriptRequest, MachineTarget

_DRIVER_RE = re.compile(r"\d{2,4}\.\d{1,3}(?:\.\d{1,3})?")
_CAPABILITY_RE = re.compile(r"\d{1,2}\.\d{1,2}")
_OS_ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")  # os-release(5): ID is lower-case a-z, 0-9, ".", "_", "-"
_OS_VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~-]{0,39}")
_PYTHON_RE = re.compile(r"3\.\d{1,2}")
_RELEASE_RE = re.compile(r"\d{1,3}(?:\.\d{1,4}){0,2}")
_ROCM_RE = re.compile(r"\d{1,2}\.\d{1,3}(?:\.\d{1,5})?")  # "6.2.2"; /opt/rocm/.info/version's "-116" is cut first
_GFX_RE = re.compile(r"gfx[0-9a-f]{3,5}")
_VENDORS = ("amd", "nvidia")
_CONTAINER_RE = re.compile(r"[a-z][a-z0-9-]{0,19}")  # a runtime's short name: "docker", "podman", "kubernetes"
_TEXT_LIMIT = 120
_NAMES_LIMIT = 16
_PATH_LIMIT = 1024

# Characters that end a line in some reader or hide text: Cc (controls, NEL U+0085), Cf (bidi overrides,
# zero-width), Zl / Zp (U+2028, U+2029), Cs / Co / Cn (no business in a name).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})

_R = TypeVar("_R", InstallScriptRequest, DockerfileRequest)


def _unsafe(char: str) -> bool:
    return unicodedata.category(char) in _UNSAFE_CATEGORIES


def comment_safe(text: object, limit: int = _TEXT_LIMIT) -> str:
    """Free text for one comment line: unsafe characters as visible escapes (``\\n``, ``\\u2028``), capped."""
    out = []
    for char in str(text):
        if char == "\t":
            out.append(" ")
        elif _unsafe(char):
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    joined = "".join(out)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def _shaped(value: object, pattern: re.Pattern[str]) -> str | None:
    """The value when the whole of it (stripped of spaces only) has the shape; else None."""
    if not isinstance(value, str):
        return None
    text = value.strip(" ")
    return text if pattern.fullmatch(text) else None


def _container(runtime: object) -> str | None:
    """The container runtime, a short lower-case word; anything else that is set is a container of an unknown
    kind ("unknown"), never dropped: inside any container the host owns the driver."""
    if not runtime:
        return None
    return _shaped(runtime, _CONTAINER_RE) or "unknown"


def safe_target(target: MachineTarget) -> MachineTarget:
    """The target with every evidence value checked: shaped values kept or dropped, free text neutralised."""
    capabilities = tuple(sorted({cc for cc in (_shaped(c, _CAPABILITY_RE) for c in target.compute_capabilities) if cc}))
    names = tuple(comment_safe(name, 80) for name in target.gpu_names[:_NAMES_LIMIT] if isinstance(name, str))
    return MachineTarget(
        driver_version=_shaped(target.driver_version, _DRIVER_RE),
        compute_capabilities=capabilities,
        gpu_names=tuple(name for name in names if name.strip()),
        distro_id=_shaped(target.distro_id, _OS_ID_RE),
        distro_version=_shaped(target.distro_version, _OS_VERSION_RE),
        wsl=target.wsl is True,
        secure_boot=target.secure_boot if isinstance(target.secure_boot, bool) else None,
        source=comment_safe(target.source, 200),
        container=_container(target.container),
        amd_gpu_names=tuple(
            name
            for name in (comment_safe(n, 80) for n in target.amd_gpu_names[:_NAMES_LIMIT] if isinstance(n, str))
            if name.strip()
        ),
        gfx_targets=tuple(sorted({g for g in (_shaped(t, _GFX_RE) for t in target.gfx_targets) if g})),
        rocm_version=_shaped(target.rocm_version.split("-", 1)[0], _ROCM_RE)
        if isinstance(target.rocm_version, str)
        else None,
        gpu_vendor=target.gpu_vendor if target.gpu_vendor in _VENDORS else None,
    )


def _refuse_unshaped(flag: str, value: str | None, pattern: re.Pattern[str], example: str) -> str | None:
    if value is None:
        return None
    shaped = _shaped(value, pattern)
    if shaped is None:
        raise GenerationRefused(f"{flag} '{comment_safe(value, 40)}' must look like {example}", f"{flag} {example}")
    return shaped


def checked_venv(path: str) -> str:
    """A venv path a person gave: non-empty, not absurdly long, no control or line-breaking characters."""
    if not isinstance(path, str) or not path.strip() or len(path) > _PATH_LIMIT or any(_unsafe(c) for c in path):
        raise GenerationRefused(
            f"--venv '{comment_safe(path, 40)}' must be a path with no control or line-breaking characters",
            "--venv ~/.venvs/gpu",
        )
    return path


def safe_request(request: _R) -> _R:
    """The request with its target made safe and, for the install script, every flag value it writes into the
    script checked (the Dockerfile generator checks its own flags against fixed lists); GenerationRefused when
    one is bad.  The distro token is looked up in a fixed table and never written as given."""
    changes: dict[str, object] = {"target": safe_target(request.target)}
    changes["rocm"] = _refuse_unshaped("--rocm", request.rocm, _ROCM_RE, "6.2.2")
    if request.vendor is not None and request.vendor not in _VENDORS:
        raise GenerationRefused(f"--vendor '{comment_safe(request.vendor, 20)}': choose amd or nvidia", "--vendor amd")
    if isinstance(request, InstallScriptRequest):
        changes["python"] = _refuse_unshaped("--python", request.python, _PYTHON_RE, "3.12")
        changes["framework_version"] = _refuse_unshaped(
            "--framework NAME==", request.framework_version, _RELEASE_RE, "2.7 or 2.7.1"
        )
        changes["venv"] = checked_venv(request.venv)
        changes["cuda_toolkit"] = _refuse_unshaped("--cuda-toolkit", request.cuda_toolkit, _RELEASE_RE, "12.8")
    return dataclasses.replace(request, **changes)  # type: ignore[arg-type]


__all__ = ["checked_venv", "comment_safe", "safe_request", "safe_target"]
