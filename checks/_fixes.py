"""Fix-its shared by several checks: the exact commands, matched to the distribution.

The commands come from the fix catalogue (``gpudoctor.kb.fix_catalogue``), the same steps the install-script
generator runs; this module only wraps them in ``Fix`` values with the words a person reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.api import Fix
from gpudoctor.facts.model import OsRelease

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts

# The generator writes the same steps for this distro as a script: idempotent, with --dry-run and key checks.
INSTALL_SCRIPT_HINT = (
    "# or let gpudoctor write them for this distro: gpudoctor install-script -o install-gpu.sh "
    "&& bash install-gpu.sh --dry-run"
)
CONTAINER_TOOLKIT_HINT = (
    "# on the host: gpudoctor install-script --no-driver --framework none --container-toolkit "
    "-o install-ctk.sh && bash install-ctk.sh --dry-run"
)


def _ids(os_release: OsRelease | None) -> tuple[str | None, tuple[str, ...], str | None]:
    if os_release is None:
        return None, (), None
    return os_release.id, tuple(os_release.id_like), os_release.version_id


# The catalogue is imported where a fix is built: most runs find nothing to fix and never pay its import.


def gpu_capabilities(facts: Facts) -> tuple[str, ...]:
    """The compute capabilities of the NVIDIA GPUs present: what the driver reports, else (no driver yet, the usual
    case for this fix) the knowledge base's entry for the name on the PCI bus; unknown GPUs are left out."""
    from gpudoctor import kb

    found: set[str] = set()
    for accelerator in facts.accelerators:
        capability = accelerator.nvidia.compute_capability if accelerator.nvidia else None
        if capability is None and accelerator.name:
            known = kb.compute_capability_for_name(accelerator.name)
            capability = known.compute_capability if known else None
        if capability:
            found.add(capability)
    return tuple(sorted(found))


def install_driver(os_release: OsRelease | None, compute_capabilities: tuple[str, ...] = ()) -> Fix:
    """The driver for this distro and these GPUs: the branch and kernel-module flavour they need, pinned the way
    the install script pins them (a Pascal GPU gets R580 with the proprietary modules; none known: a Turing or
    newer GPU)."""
    from gpudoctor.kb import fix_catalogue

    route = fix_catalogue.driver_route_for_os(*_ids(os_release), compute_capabilities)
    return Fix(
        "Install the NVIDIA driver from your distribution, then reboot.",
        (*fix_catalogue.typed_commands(route), INSTALL_SCRIPT_HINT),
        needs_root=True,
        url=fix_catalogue.DRIVER_GUIDE_URL,
    )


def install_driver_for(facts: Facts) -> Fix:
    """``install_driver`` for the machine the facts describe: its distro and its GPUs."""
    return install_driver(facts.os_release, gpu_capabilities(facts))


def load_kernel_module() -> Fix:
    from gpudoctor.kb import fix_catalogue

    return Fix(
        "Load the NVIDIA kernel module. If that fails, rebuild it for the running kernel "
        "(a kernel upgrade without matching headers is the usual cause) and check Secure Boot.",
        fix_catalogue.load_module_commands(),
        needs_root=True,
    )


def reboot_for_mismatch() -> Fix:
    from gpudoctor.kb import fix_catalogue

    return Fix(
        "The driver was upgraded while the old kernel module stayed loaded. Reboot; or, with no GPU process "
        "running, reload the modules. Then hold the driver packages so unattended upgrades can't do it again.",
        fix_catalogue.mismatch_commands(),
        needs_root=True,
    )


def blacklist_nouveau(os_release: OsRelease | None) -> Fix:
    from gpudoctor.kb import fix_catalogue

    os_id, id_like, _ = _ids(os_release)
    return Fix(
        "Stop nouveau from claiming the GPU, then reboot so the NVIDIA driver can bind.",
        fix_catalogue.blacklist_nouveau_commands(os_id, id_like),
        needs_root=True,
    )
