"""The per-distro facts the install-script generator reads; their one home is ``gpudoctor.kb.distros``."""

from __future__ import annotations

from gpudoctor.kb.distros import (
    CTK_APT_LINE,
    CTK_FINGERPRINT,
    CTK_KEY_URL,
    CTK_RPM_REPO,
    CUDA_APT_FINGERPRINT,
    CUDA_REPO_BASE,
    CUDA_RPM_FINGERPRINT,
    CUDA_RPM_KEY_ID,
    DEBIAN12_DRIVER_BRANCH,
    DISTROS,
    SOURCES,
    Distro,
    distro_token,
    known_distros,
    lookup,
)

__all__ = [
    "CTK_APT_LINE",
    "CTK_FINGERPRINT",
    "CTK_KEY_URL",
    "CTK_RPM_REPO",
    "CUDA_APT_FINGERPRINT",
    "CUDA_REPO_BASE",
    "CUDA_RPM_FINGERPRINT",
    "CUDA_RPM_KEY_ID",
    "DEBIAN12_DRIVER_BRANCH",
    "DISTROS",
    "SOURCES",
    "Distro",
    "distro_token",
    "known_distros",
    "lookup",
]
