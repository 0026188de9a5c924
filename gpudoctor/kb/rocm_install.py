"""Installing ROCm on a host: AMD's repositories, their signing key, and the ``amdgpu-install`` packages.

The data is ``data/rocm_install.json``, read from AMD's install docs (ROCm/rocm-install-on-linux ``docs/conf.py``
and the templates under ``docs/install``) for ROCm 6.2, 6.2.1 and 6.2.2 [ROCM_INST_CONF; ROCM_NATIVE;
ROCM_AMDGPU_INSTALL].  The key fingerprint is not in AMD's docs: it is the one gpg printed for
``rocm.gpg.key`` in a ROCm issue thread, whose long key id a 2025 thread still shows [ROCM_KEY_854; ROCM_KEY_5268].
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.rocm_wheels import rocm_key

DATA_FILE = "rocm_install.json"


@dataclass(frozen=True)
class RocmRelease:
    rocm: str  # "6.2.2"
    repo_version: str  # the folder on repo.radeon.com: "6.2.2"
    amdgpu_install_version: str  # "6.2.60202-1"
    ubuntu: dict[str, str]  # "24.04" -> "noble"
    rhel: tuple[str, ...]  # "9.4", "9.3", "8.10", ...
    sles: tuple[str, ...]
    sources: tuple[str, ...]


def _data() -> dict[str, object]:
    return _load(DATA_FILE)


@functools.lru_cache(maxsize=1)
def rocm_releases() -> tuple[RocmRelease, ...]:
    """The releases the data covers, newest first."""
    rows = []
    for raw in as_list(_data().get("releases")):
        row = as_dict(raw)
        rocm, repo, package = row.get("rocm"), row.get("repo_version"), row.get("amdgpu_install_version")
        if not (isinstance(rocm, str) and isinstance(repo, str) and isinstance(package, str)) or not rocm_key(rocm):
            continue
        ubuntu = {str(k): str(v) for k, v in as_dict(row.get("ubuntu")).items()}
        rhel = tuple(str(v) for v in as_list(row.get("rhel")))
        sles = tuple(str(v) for v in as_list(row.get("sles")))
        sources = tuple(str(v) for v in as_list(row.get("sources")))
        rows.append(RocmRelease(rocm, repo, package, ubuntu, rhel, sles, sources))
    return tuple(sorted(rows, key=lambda r: rocm_key(r.rocm) or (0, 0, 0), reverse=True))


def rocm_release(version: str | None) -> RocmRelease | None:
    """The row of ``version`` ("6.2.2"; "6.2" is its own row), or the newest when ``version`` is None."""
    releases = rocm_releases()
    if version is None:
        return releases[0] if releases else None
    wanted = rocm_key(version)
    return next((r for r in releases if rocm_key(r.rocm) == wanted), None)


def signing_key() -> tuple[str, str]:
    """(URL, full fingerprint) of repo.radeon.com's signing key."""
    key = as_dict(_data().get("signing_key"))
    return str(key.get("url", "")), str(key.get("fingerprint", ""))


def template(name: str) -> str:
    return str(as_dict(_data().get("url_templates")).get(name, ""))


def amdgpu_install_url(release: RocmRelease, family: str, os_version: str) -> str | None:
    """AMD's ``amdgpu-install`` package for ``family`` ("ubuntu", "rhel", "sles") and the OS release ("24.04",
    "9.4", "15.6"); None when AMD's docs for this ROCm do not list that OS release."""
    fields = {"repo_version": release.repo_version, "amdgpu_install_version": release.amdgpu_install_version}
    if family == "ubuntu" and os_version in release.ubuntu:
        return template("amdgpu_install_ubuntu").format(codename=release.ubuntu[os_version], **fields)
    if family == "rhel" and os_version in release.rhel:
        major = os_version.split(".", 1)[0]
        return template("amdgpu_install_rhel").format(os_version=os_version, os_major=major, **fields)
    if family == "sles" and os_version in release.sles:
        return template("amdgpu_install_sles").format(os_version=os_version, **fields)
    return None


def sources() -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_data().get("sources")).items()}


def as_of() -> str:
    return str(_data().get("as_of") or "unknown")
