"""Which image a container runs: an NGC framework container, ``nvidia/cuda``, ``rocm/*``, a cloud deep-learning
container, a deepo-style all-in-one image; from the image's own environment and files.  Tolerant: never raises."""

from __future__ import annotations

from gpudoctor.facts.environment import EnvFacts
from gpudoctor.facts.platform_model import ContainerImage


def identify_image(
    env: EnvFacts, exists: tuple[str, ...], files: dict[str, str], dirs: dict[str, tuple[str, ...]]
) -> ContainerImage | None:
    return None  # helper H5
