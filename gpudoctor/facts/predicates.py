"""Named rules about the machine that more than one check, renderer or generator applies.

A rule used in two places lives here once, under a name that says what it decides, so a check and
a drawing (or a generator) that speak about the same thing cannot disagree: "this PCIe link runs on
fewer lanes than it can", "this driver is older than that one", "this driver runs CUDA X.Y".
Pure functions of parsed facts and the knowledge base; nothing here reads evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor import kb
from gpudoctor.facts.topology_model import PcieLink

if TYPE_CHECKING:
    from gpudoctor.kb.driver_cuda import DriverCudaVerdict

# --------------------------------------------------------------------------- PCIe links


def lanes_below_best(width_now: int | None, width_max: int | None) -> bool:
    """A link running on fewer lanes than both ends support (x8 of x16): a card not seated fully, a riser or
    a slot wired narrower.  Unlike the generation, a GPU never narrows its link to save power when idle."""
    return bool(width_now and width_max and width_now < width_max)


def gen_below_best(gen_now: int | None, gen_max: int | None) -> bool:
    """A link below its best PCIe generation: normal while the GPU idles (links downclock), suspect under load."""
    return bool(gen_now and gen_max and gen_now < gen_max)


def narrow_lanes(link: PcieLink | None) -> tuple[int, int] | None:
    """(lanes now, lanes at best) when the link runs on fewer lanes than it supports, else None."""
    if link is None:
        return None
    now, best = link.width_current, link.width_max
    return (now, best) if now is not None and best is not None and lanes_below_best(now, best) else None


def pcie_narrow(link: PcieLink | None) -> bool:
    """The link runs on fewer lanes than it supports (see :func:`lanes_below_best`)."""
    return link is not None and lanes_below_best(link.width_current, link.width_max)


def pcie_slow(link: PcieLink | None) -> bool:
    """The link runs below its best generation (see :func:`gen_below_best`)."""
    return link is not None and gen_below_best(link.gen_current, link.gen_max)


# --------------------------------------------------------------------------- the driver and CUDA


# NVIDIA display-driver releases have numbered from 100 up for two decades; anything below is another number
# printed where a driver version goes: macOS's CUDA driver ("1.1.0", collect_env on a Mac), Jetson's L4T
# release ("35.3.1").  Such a number cannot be compared with a CUDA release's driver floor.
_FIRST_DRIVER_BRANCH = 100


def comparable_driver(version: str | None) -> bool:
    """``version`` is an NVIDIA display-driver release that CUDA's driver floors can be compared with."""
    parsed = kb.parse_driver_version(version)
    return parsed is not None and parsed[0] >= _FIRST_DRIVER_BRANCH


def driver_older(version: str | None, than: str | None) -> bool:
    """``version`` is a driver release older than ``than``; False when either is not a driver version."""
    a, b = kb.parse_driver_version(version), kb.parse_driver_version(than)
    return a is not None and b is not None and a < b


def cuda_major_minor(version: str | None) -> str | None:
    """ "12.2.2" -> "12.2", "12" -> "12": the CUDA runtime checks major.minor against the driver, so an
    update release runs wherever its GA release does."""
    if not version:
        return None
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else parts[0]


def driver_runs_cuda_release(driver_version: str, cuda: str) -> DriverCudaVerdict:
    """Whether this driver runs programs built with CUDA ``cuda`` ("12.4", "12.4.1"): natively, through
    minor-version compatibility, or not at all, judged on the release's major.minor."""
    return kb.driver_runs_cuda(driver_version, cuda_major_minor(cuda) or cuda)
