"""NVIDIA's NGC framework containers (``data/ngc_containers.json``, a source on every row): each monthly release's
CUDA, the driver it was built for, and its framework versions; which older release fits a host driver.

A release's driver requirement is what its notes say ("requires NVIDIA Driver release 525 or later": the branch
525, or an exact "440.33.01"); where the notes only point at the compatibility pages, the CUDA Table 3 minimum of
the release's CUDA stands in (``driver_derived``).  A row's ``confidence`` says how directly it was read: on the
product's own notes ("primary"), through a verbatim quote or translation ("secondary"), or from the same monthly
release's notes of a component shipped in that container ("sibling").  Everything here is pure and never raises on
junk.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.versions import parse_cuda_version, release_tuple

DATA_FILE = "ngc_containers.json"
REGISTRY = "nvcr.io/nvidia"
# An image tag as Docker spells one; the tag ends up in a `docker pull` line, so nothing else gets through.
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class NgcRelease:
    product: str  # "pytorch", "tensorflow", "jax", ... (the nvcr.io/nvidia/<product> repository)
    release: str  # "24.01"
    cuda: str  # "12.3.2"
    driver: str  # "545" / "545.23.08": the driver release the container was built for
    frameworks: tuple[tuple[str, str], ...] = ()  # (("torch", "2.2.0a0+81ea7a4"),)
    source: str = ""
    # Older branches its forward-compatibility package runs it on, data-center GPUs only: ("470.57", "525.85").
    datacenter_drivers: tuple[str, ...] = ()
    driver_derived: bool = False  # True: ``driver`` is CUDA Table 3's minimum, the notes name none
    # The tag when it is not "<release>-py3": TensorFlow from 20.06 on is "<release>-tf2-py3" (and -tf1-py3).
    tag: str = ""
    confidence: str = ""  # "primary", "secondary" or "sibling" (see the data file's _meta notes)

    @property
    def image(self) -> str:
        """'nvcr.io/nvidia/pytorch:24.01-py3', 'nvcr.io/nvidia/tensorflow:23.01-tf2-py3'."""
        return f"{REGISTRY}/{self.product}:{self.tag or self.release + '-py3'}"

    @property
    def driver_key(self) -> tuple[int, int, int]:
        """The required driver as a comparable triple: "525" -> (525, 0, 0)."""
        key = release_tuple(self.driver, 3)
        return (key[0], key[1], key[2]) if key else (0, 0, 0)


def _release_key(release: str) -> tuple[int, ...]:
    return release_tuple(release) or (0,)


def _row(raw: object) -> NgcRelease | None:
    row = as_dict(raw)
    product, release, cuda = row.get("product"), row.get("release"), row.get("cuda")
    if not (isinstance(product, str) and isinstance(release, str) and isinstance(cuda, str)):
        return None
    if parse_cuda_version(".".join(cuda.split(".")[:3])) is None or not release_tuple(release):
        return None
    driver = row.get("driver")
    derived = False
    if not (isinstance(driver, str) and release_tuple(driver)):
        from gpudoctor.kb.driver_cuda import min_driver_for_cuda

        driver = min_driver_for_cuda(".".join(cuda.split(".")[:3]))
        derived = True
        if driver is None:
            return None
    frameworks = tuple(
        (str(name), str(version))
        for name, version in as_dict(row.get("frameworks")).items()
        if isinstance(version, str)
    )
    dc = tuple(str(d) for d in as_list(row.get("datacenter_drivers")) if isinstance(d, str) and release_tuple(d))
    tag = _tag(row.get("tag"), release.strip())
    return NgcRelease(
        product=product.strip().lower(),
        release=release.strip(),
        cuda=cuda.strip(),
        driver=driver,
        frameworks=frameworks,
        source=str(row.get("source") or ""),
        datacenter_drivers=dc,
        driver_derived=derived,
        tag=tag,
        confidence=str(row.get("confidence") or ""),
    )


def _tag(raw: object, release: str) -> str:
    """The row's own tag when it is a plain Docker tag of this release ("23.01-tf2-py3"); "" (the default
    "<release>-py3") for anything else."""
    if isinstance(raw, str) and _TAG.fullmatch(raw) and raw.startswith(release + "-"):
        return raw
    return ""


@functools.lru_cache(maxsize=1)
def ngc_releases() -> tuple[NgcRelease, ...]:
    """Every release in the table, by product, newest first; rows that do not parse are skipped."""
    rows = [r for r in (_row(raw) for raw in as_list(_load(DATA_FILE).get("releases"))) if r is not None]
    rows.sort(key=lambda r: _release_key(r.release), reverse=True)
    return tuple(sorted(rows, key=lambda r: r.product))  # stable: newest first within each product


def ngc_release(product: str, release: str) -> NgcRelease | None:
    """The row of ``product`` ("pytorch") and ``release`` ("24.06"); None for one the table lacks or junk."""
    if not isinstance(product, str) or not isinstance(release, str):
        return None
    wanted = (product.strip().lower(), release.strip())
    return next((r for r in ngc_releases() if (r.product, r.release) == wanted), None)


def newest_release_for_driver(product: str, driver_version: str) -> NgcRelease | None:
    """The newest release of ``product`` built for this driver's branch or an older one (runs without forward
    compatibility); None when none in the table does."""
    host = release_tuple(driver_version, 3) if isinstance(driver_version, str) else ()
    if not host or not isinstance(product, str):
        return None
    name = product.strip().lower()
    for row in ngc_releases():  # newest first
        if row.product == name and row.driver_key <= host:
            return row
    return None


def forward_compat_branch(release: NgcRelease, driver_version: str) -> str | None:
    """The data-center driver entry of ``release`` ("535.86") that covers ``driver_version`` (same branch, at least
    that release), i.e. the release runs there in forward-compatibility mode on a data-center GPU; None otherwise."""
    host = release_tuple(driver_version, 3) if isinstance(driver_version, str) else ()
    if not host:
        return None
    for entry in release.datacenter_drivers:
        floor = release_tuple(entry, 3)
        if floor and floor[0] == host[0] and host >= floor:
            return entry
    return None


def forward_compat_rule() -> str:
    """One sentence: who may run a newer CUDA on an older driver through the compat package (with its source)."""
    block = as_dict(_load(DATA_FILE).get("forward_compat"))
    return str(block.get("rule") or "")


def sources() -> dict[str, str]:
    return {str(k): str(as_dict(v).get("url")) for k, v in as_dict(_load(DATA_FILE).get("sources")).items()}


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
