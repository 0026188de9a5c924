"""ROCm container images: the ``rocm/dev-ubuntu-<os>:<ROCm>`` tags AMD's own build script builds and tags.

The data is ``data/rocm_images.json``: every row names the ROCm/ROCm-docker ``build_all.sh`` commit whose
``docker build -t`` lines create the tag [ROCM_DOCKER_BUILD].  AMD's PyTorch guide uses these images as the base
"with the correct user-space ROCm version" and installs torch from the ROCm wheel index on top [ROCM_PT_INSTALL].
Nothing outside the table is ever emitted as a tag.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list
from gpudoctor.kb.rocm_wheels import rocm_key

DATA_FILE = "rocm_images.json"


@dataclass(frozen=True)
class RocmImage:
    image: str  # "rocm/dev-ubuntu-24.04"
    tag: str  # "6.2"
    os: str  # "ubuntu24.04"
    rocm: str  # "6.2"
    sources: tuple[str, ...]

    @property
    def reference(self) -> str:
        """``rocm/dev-ubuntu-24.04:6.2``."""
        return f"{self.image}:{self.tag}"


@functools.lru_cache(maxsize=1)
def rocm_images() -> tuple[RocmImage, ...]:
    """Every image in the table, newest ROCm first; rows that do not parse are skipped."""
    rows = []
    for raw in as_list(_load(DATA_FILE).get("images")):
        row = as_dict(raw)
        fields = [row.get(key) for key in ("image", "tag", "os", "rocm")]
        if not all(isinstance(value, str) and value for value in fields) or rocm_key(row.get("rocm")) is None:
            continue
        sources = tuple(s for s in as_list(row.get("sources")) if isinstance(s, str))
        rows.append(RocmImage(str(fields[0]), str(fields[1]), str(fields[2]), str(fields[3]), sources))
    return tuple(sorted(rows, key=lambda image: (rocm_key(image.rocm) or (0, 0, 0), image.os), reverse=True))


def image_oses() -> tuple[str, ...]:
    """The base OS tokens with at least one image, newest Ubuntu first."""
    return tuple(sorted({image.os for image in rocm_images()}, reverse=True))


def os_python(os_token: str) -> str | None:
    """The Python 3 of the image's Ubuntu ("3.12" for ubuntu24.04); None when the data does not say."""
    value = as_dict(_load(DATA_FILE).get("os_python")).get(os_token)
    return value if isinstance(value, str) else None


def is_published_rocm_image(reference: str) -> bool:
    """True when ``rocm/dev-ubuntu-24.04:6.2`` is a row of the table."""
    return any(image.reference == reference for image in rocm_images())


def image_for(variant_rocm: str, os_token: str, host_rocm: str | None = None) -> RocmImage | None:
    """The image on ``os_token`` whose ROCm has the major.minor of ``variant_rocm`` (the torch wheel's ROCm): the
    newest patch not newer than ``host_rocm`` when there is one, else the oldest patch of that minor (closest to
    the wheel's own ROCm).  None when the table has no image of that minor on that OS."""
    wanted = rocm_key(variant_rocm)
    if wanted is None:
        return None
    same = [i for i in rocm_images() if i.os == os_token and (rocm_key(i.rocm) or (0, 0, 0))[:2] == wanted[:2]]
    if not same:
        return None
    ceiling = rocm_key(host_rocm) if host_rocm else None
    if ceiling is not None:
        fitting = [i for i in same if (rocm_key(i.rocm) or (0, 0, 0)) <= ceiling]
        if fitting:
            return fitting[0]  # newest first
    return same[-1]


def sources() -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_load(DATA_FILE).get("sources")).items()}


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
