"""NVIDIA's NGC framework containers (``data/ngc_containers.json``, a source on every row): each monthly release's
CUDA, the driver it was built for, and its framework versions; which older release fits a host driver."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NgcRelease:
    product: str  # "pytorch", "tensorflow", "jax", ... (the nvcr.io/nvidia/<product> repository)
    release: str  # "24.01"
    cuda: str  # "12.3.2"
    driver: str  # "545" / "545.23.08": the driver release the container was built for
    frameworks: tuple[tuple[str, str], ...] = ()  # (("torch", "2.2.0a0+81ea7a4"),)
    source: str = ""

    @property
    def image(self) -> str:
        """'nvcr.io/nvidia/pytorch:24.01-py3'."""
        raise NotImplementedError  # helper H5


def ngc_release(product: str, release: str) -> NgcRelease | None:
    raise NotImplementedError  # helper H5


def newest_release_for_driver(product: str, driver_version: str) -> NgcRelease | None:
    """The newest release of ``product`` built for this driver's branch or an older one (runs without forward
    compatibility); None when none in the table does."""
    raise NotImplementedError  # helper H5
