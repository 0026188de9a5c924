"""An NGC container's start-up banner in any free text of the evidence (a paste, a log): which image, and what it
said about the host driver ("This container was built for NVIDIA Driver Release 545.23 or later, but version
525.85.12 was detected and compatibility mode is UNAVAILABLE.").  Tolerant: never raises."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.facts.platform_model import ContainerBanner

if TYPE_CHECKING:
    from gpudoctor.evidence.model import Evidence


def parse_container_banner(text: str) -> ContainerBanner | None:
    return None  # helper H5


def container_banner(evidence: Evidence) -> ContainerBanner | None:
    return None  # helper H5
