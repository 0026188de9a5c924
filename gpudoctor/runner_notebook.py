"""Where the user has no root (a hosted notebook platform), no finding offers a driver install or anything else
that needs root: such a fix becomes the platform's own way to the same end.

General, not per check: any fix marked ``needs_root`` is replaced.  A fix about the GPU or its driver (told by the
finding's cause, or by the fix naming the driver) becomes the platform's way to a GPU runtime (the knowledge base's
``get_gpu``); anything else that needs root is said to be the platform image's to decide, with the platform's own
setting or a custom image where the platform takes one.  Off notebook platforms the findings pass unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.api import Finding, Fix
    from gpudoctor.facts.facts import Facts
    from gpudoctor.kb.notebook_platforms import NotebookPlatformInfo

# Causes (gpudoctor.kb.causes ids) whose fix is a GPU or a driver: on a notebook platform, the GPU runtime setting.
_GPU_OR_DRIVER_CAUSES = (
    "no-nvidia-gpu",
    "gpu-not-on-bus",
    "nouveau-bound",
    "secure-boot-unsigned-module",
    "open-module-unsupported-gpu",
    "container-no-gpu-flag",
    "container-toolkit-missing",
    "nvidia-uvm-not-loaded",
    "libcuda-missing",
    "gsp-firmware-",
    "driver-",
)


def _about_gpu_or_driver(finding: Finding, fix: Fix) -> bool:
    causes = (finding.cause, *finding.other_causes)
    if any(cause.startswith(_GPU_OR_DRIVER_CAUSES) for cause in causes if cause):
        return True
    return "driver" in fix.summary.lower()


def _platform_fix(finding: Finding, fix: Fix, info: NotebookPlatformInfo) -> Fix:
    from gpudoctor.api import Fix

    no_root = f"You have no root on {info.name}: the platform's image and machine decide this, not an install."
    if _about_gpu_or_driver(finding, fix):
        return Fix(
            f"{no_root} The GPU and its driver come with a GPU runtime: {info.get_gpu}.",
            needs_root=False,
            url=info.url,
        )
    own = f" or {info.custom_image}" if info.custom_image else ""
    return Fix(
        f"{no_root} What would fix it elsewhere needs root ({fix.summary.rstrip('.')}); here, use {info.name}'s "
        f"own settings{own}, or install what you need into your own Python environment (pip, no root).",
        needs_root=False,
        url=info.url,
    )


def without_root(findings: list[Finding], facts: Facts) -> list[Finding]:
    # Most findings need no root: nothing to look up, and facts.platform is never computed for them.
    if not any(f.fix is not None and f.fix.needs_root for f in findings):
        return findings
    notebook = facts.platform.notebook
    if notebook is None:
        return findings
    from gpudoctor.kb.notebook_platforms import notebook_platform

    info = notebook_platform(notebook.key)
    if info is None or info.root:
        return findings
    return [
        dataclasses.replace(f, fix=_platform_fix(f, f.fix, info)) if f.fix is not None and f.fix.needs_root else f
        for f in findings
    ]
