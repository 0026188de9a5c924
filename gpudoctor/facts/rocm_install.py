"""The ROCm user space installed under /opt (``rocm-install.json``): which version /opt/rocm is, and which others
sit beside it.

AMD's packages install each release to ``/opt/rocm-<version>`` with its version in ``.info/version`` (a line
that starts with the release, ``7.1.1``; anything after the release is not read), and ``/opt/rocm`` is the one in
use (a link to one of them, or the install itself).
"""

from __future__ import annotations

import re

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.facts.amd_model import RocmInstall
from gpudoctor.facts.json_values import json_dict, json_list, json_text
from gpudoctor.facts.sources_state import Missing, Why
from gpudoctor.facts.tolerant import never_raises

SOURCE = ".info/version"
_VERSION = re.compile(r"^\s*(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?)")
_DIR_VERSION = re.compile(r"/opt/rocm-(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?)$")


def release(text: object) -> str | None:
    """The release a ``.info/version`` file starts with: "7.1.1" -> "7.1.1"; None when it does not start with one."""
    match = _VERSION.match(text) if isinstance(text, str) else None
    return match.group(1) if match else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@never_raises(lambda: RocmInstall(missing=Missing(Why.FAILED, EvidenceKey.ROCM_INSTALL, "unreadable record")))
def parse_rocm_install(data: object) -> RocmInstall:
    """``rocm-install.json`` as the version /opt/rocm points at (else the only or newest one), every version
    found, and its path; ``missing`` says why the version is unknown."""
    if data is None:
        return RocmInstall(missing=Missing(Why.NOT_COLLECTED, EvidenceKey.ROCM_INSTALL))
    record = json_dict(data)
    if not record:
        return RocmInstall(missing=Missing(Why.FAILED, EvidenceKey.ROCM_INSTALL, "not a JSON object"))
    found: list[tuple[str, str, str]] = []  # (version, realpath, path)
    for item in json_list(record.get("installs")):
        install = json_dict(item)
        path = json_text(install.get("path"))
        real = json_text(install.get("realpath")) or path
        if path is None or real is None:
            continue
        version = release(json_dict(install.get("info")).get("version"))
        if version is None:  # no .info/version: the directory name still says which release it is
            named = _DIR_VERSION.search(real) or _DIR_VERSION.search(path)
            version = named.group(1) if named else None
        if version is not None:
            found.append((version, real, path))
    if not found:
        error = json_text(record.get("error"))
        if error:
            return RocmInstall(missing=Missing(Why.FAILED, EvidenceKey.ROCM_INSTALL, error))
        return RocmInstall(missing=Missing(Why.ABSENT, EvidenceKey.ROCM_INSTALL, "no /opt/rocm*/.info/version"))
    versions = tuple(sorted({version for version, _, _ in found}, key=_version_key))
    target = json_text(record.get("opt_rocm_link"))
    chosen = next((entry for entry in found if target is not None and entry[1] == target), None)
    chosen = chosen or next((entry for entry in found if entry[2] == "/opt/rocm"), None)
    chosen = chosen or max(found, key=lambda entry: _version_key(entry[0]))
    return RocmInstall(version=chosen[0], path=chosen[1], all_versions=versions, source=SOURCE)
