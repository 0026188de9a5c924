"""The fixes for a GPU the driver did not initialise, as the kernel log names the cause (DRV005).

Three causes the driver states in its own ``NVRM:`` words: the GPU is older than the installed driver
branch supports (it names the legacy branch that does), the open kernel module met a GPU without the GSP
it needs, or the adapter failed to initialise (RmInitAdapter).  Each gets the commands that fix it for the
distribution at hand; the commands themselves live in the fix catalogue (gpudoctor.kb.fix_catalogue).
"""

from __future__ import annotations

from gpudoctor.api import Fix
from gpudoctor.facts.kernel_log import XidEvent
from gpudoctor.facts.model import OsRelease


def legacy_branch(required: str) -> str:
    """ "470.xx" -> "470": the branch number the kernel log names."""
    return required.split(".", 1)[0]


def legacy_driver_fix(required: str, os_release: OsRelease | None) -> Fix:
    """Install the legacy branch the driver named for this GPU (it replaces the current branch)."""
    from gpudoctor.kb import fix_catalogue as catalogue  # only when a fix is built

    branch = legacy_branch(required)
    os_id, id_like = (os_release.id, os_release.id_like) if os_release else (None, ())
    summary = (
        f"Install the NVIDIA {branch} legacy driver, the newest branch that supports this GPU; it replaces the "
        "installed branch, which dropped the GPU. Then reboot. A newer kernel or distribution release may no "
        f"longer build the {branch} branch: NVIDIA's archive lists which kernels it supports."
    )
    return Fix(
        summary,
        catalogue.legacy_branch_commands(os_id, id_like, branch),
        needs_root=True,
        url=catalogue.DRIVER_ARCHIVE_URL,
    )


def proprietary_module_fix(kernel_version: str | None, os_release: OsRelease | None) -> Fix:
    """Replace the open kernel module with the proprietary one of the same branch (a GPU without a GSP)."""
    from gpudoctor.kb import fix_catalogue as catalogue  # only when a fix is built

    branch = kernel_version.split(".", 1)[0] if kernel_version else None
    os_id, id_like = (os_release.id, os_release.id_like) if os_release else (None, ())
    summary = (
        "The open NVIDIA kernel module (nvidia-open) needs a GPU with a GSP (GPU System Processor: Turing or "
        "newer); this GPU has none. Install the proprietary kernel module of the same driver branch and reboot. "
        "(The other way round, when the proprietary module fails in the GSP firmware on a Turing or newer GPU, "
        "`options nvidia NVreg_EnableGpuFirmware=0` in /etc/modprobe.d turns the GSP firmware off.)"
    )
    return Fix(summary, catalogue.proprietary_module_commands(os_id, id_like, branch), needs_root=True)


def init_failure_fix(xids: list[XidEvent]) -> Fix:
    """A GPU whose adapter failed to initialise: read the lines around it, reset, then power and seating."""
    from gpudoctor.kb import fix_catalogue as catalogue  # only when a fix is built

    xid_note = (
        " The kernel log also has Xid " + ", ".join(sorted({str(e.code) for e in xids})) + ": `gpudoctor kb xid N` "
        "says what each means."
        if xids
        else ""
    )
    summary = (
        "Read the NVRM lines just before the failure (they name the cause: firmware, memory, power), reset the "
        "GPU or reboot; if it keeps failing, power the machine off, reseat the card and its power cables, and "
        "enable Above 4G decoding and Resizable BAR in the BIOS (new GPUs need them)." + xid_note
    )
    return Fix(summary, catalogue.INIT_FAILURE_COMMANDS, needs_root=True)
