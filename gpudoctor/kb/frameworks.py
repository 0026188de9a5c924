"""cuDNN majors, JAX's CUDA extras and CuPy's packages; and one import point for every framework lookup.

cuDNN comes from ``data/cudnn.json`` (generated from the shared reference), JAX and CuPy
from ``data/python_gpu_packages.json`` (edited by hand, every row sourced).  The PyTorch and
TensorFlow lookups live in ``torch_wheels`` / ``torch_choice`` / ``tensorflow_builds`` and
are re-exported here so callers can ``from gpudoctor.kb.frameworks import ...`` everything.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.arch_coverage import ArchCoverage, arch_list_covers, parse_arch_list, parse_compute_capability
from gpudoctor.kb.loading import _cudnn_data, _packages_data
from gpudoctor.kb.tensorflow_builds import TfChoice, TfRelease, choose_tensorflow, tf_release, tf_releases
from gpudoctor.kb.torch_choice import WheelChoice, choose_torch_wheel
from gpudoctor.kb.torch_wheels import (
    TorchRelease,
    TorchVariant,
    driver_branch_floor,
    normalize_os,
    torch_release,
    torch_releases,
    torch_variant,
    wheel_driver_floor,
)
from gpudoctor.kb.versions import parse_driver_version, release_tuple

__all__ = [
    "ArchCoverage",
    "CudnnMajor",
    "TfChoice",
    "TfRelease",
    "TorchRelease",
    "TorchVariant",
    "WheelChoice",
    "arch_list_covers",
    "choose_tensorflow",
    "choose_torch_wheel",
    "cudnn_major",
    "cudnn_min_compute_capability",
    "cupy_package_for_cuda",
    "jax_cuda_extra",
    "jax_install_requirement",
    "parse_arch_list",
    "tf_release",
    "tf_releases",
    "torch_release",
    "torch_releases",
    "torch_variant",
    "wheel_driver_floor",
]

# --------------------------------------------------------------------------- cuDNN


@dataclass(frozen=True)
class CudnnMajor:
    """What a cuDNN major version needs and ships."""

    major: int
    cuda: str | None  # the CUDA releases it has builds for, as the support matrix words it
    libraries: tuple[str, ...]  # "libcudnn.so.9", "libcudnn_ops.so.9", ...
    pip_packages: tuple[str, ...]  # "nvidia-cudnn-cu12", ...
    min_compute_capability: str | None  # None where it changed within the major (see the steps)
    sources: tuple[str, ...]
    min_compute_capability_from: tuple[tuple[str, str], ...] = ()  # (("9.0.0", "5.0"), ("9.11.0", "7.5"))
    linux_driver: str | None = None
    windows_driver: str | None = None
    note: str | None = None


def _version_tuple(text: object) -> tuple[int, ...] | None:
    """A cuDNN release as major, minor, patch (``"9"`` -> ``(9, 0, 0)``); junk -> None."""
    return release_tuple(text, 3) or None


@functools.lru_cache(maxsize=None)
def _cudnn_rows() -> dict[int, CudnnMajor]:
    rows: dict[int, CudnnMajor] = {}
    for raw in _cudnn_data().get("majors", []):
        if not isinstance(raw, dict) or not isinstance(raw.get("major"), int) or isinstance(raw.get("major"), bool):
            continue
        steps = tuple(
            (str(step[0]), str(step[1]))
            for step in raw.get("min_compute_capability_from", [])
            if isinstance(step, list) and len(step) == 2
        )

        def text(key: str) -> str | None:
            value = raw.get(key)  # noqa: B023 - called at once, inside the loop
            return value if isinstance(value, str) else None

        rows[raw["major"]] = CudnnMajor(
            major=raw["major"],
            cuda=text("cuda"),
            libraries=tuple(x for x in raw.get("libraries", []) if isinstance(x, str)),
            pip_packages=tuple(x for x in raw.get("pip_packages", []) if isinstance(x, str)),
            min_compute_capability=text("min_compute_capability"),
            sources=tuple(x for x in raw.get("sources", []) if isinstance(x, str)),
            min_compute_capability_from=steps,
            linux_driver=text("linux_driver"),
            windows_driver=text("windows_driver"),
            note=text("min_compute_capability_note"),
        )
    return rows


def cudnn_major(major: int | str | None) -> CudnnMajor | None:
    """``9`` / ``"9"`` / ``"9.1.0"`` -> the cuDNN 9 row; a major the data lacks or junk -> None."""
    if isinstance(major, bool):
        return None
    if isinstance(major, int):
        wanted: int | None = major
    else:
        parsed = _version_tuple(major)
        wanted = parsed[0] if parsed else None
    if wanted is None:
        return None
    return _cudnn_rows().get(wanted)


def cudnn_min_compute_capability(version: str | None) -> str | None:
    """The oldest GPU a cuDNN release supports: ``"9.10.2"`` -> ``"5.0"``, ``"9.11.0"`` -> ``"7.5"``."""
    parsed = _version_tuple(version)
    if parsed is None:
        return None
    row = _cudnn_rows().get(parsed[0])
    if row is None:
        return None
    if not row.min_compute_capability_from:
        return row.min_compute_capability
    answer = None
    for since, cc in row.min_compute_capability_from:
        start = _version_tuple(since)
        if start is not None and parsed >= start:
            answer = cc
    return answer


# --------------------------------------------------------------------------- JAX


@dataclass(frozen=True)
class JaxExtra:
    extra: str  # "cuda13"
    cuda_major: int
    linux_driver_min: str | None
    driver_branch_min: int | None
    min_compute_capability: str | None
    plugin_packages: tuple[str, ...]
    sources: tuple[str, ...]


@functools.lru_cache(maxsize=None)
def jax_extras() -> tuple[JaxExtra, ...]:
    """JAX's CUDA extras, newest CUDA first."""
    jax = _packages_data().get("jax")
    extras = []
    for raw in jax.get("extras", []) if isinstance(jax, dict) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("extra"), str):
            continue
        major = raw.get("cuda_major")
        if not isinstance(major, int) or isinstance(major, bool):
            continue
        branch = raw.get("driver_branch_min")
        extras.append(
            JaxExtra(
                extra=raw["extra"],
                cuda_major=major,
                linux_driver_min=raw.get("linux_driver_min") if isinstance(raw.get("linux_driver_min"), str) else None,
                driver_branch_min=int(branch) if isinstance(branch, str) and branch.isdecimal() else None,
                min_compute_capability=raw.get("min_compute_capability")
                if isinstance(raw.get("min_compute_capability"), str)
                else None,
                plugin_packages=tuple(x for x in raw.get("plugin_packages", []) if isinstance(x, str)),
                sources=tuple(x for x in raw.get("sources", []) if isinstance(x, str)),
            )
        )
    extras.sort(key=lambda e: e.cuda_major, reverse=True)
    return tuple(extras)


def _jax_driver_ok(extra: JaxExtra, driver: tuple[int, int, int], os_name: str) -> bool:
    if os_name == "linux":
        floor = parse_driver_version(extra.linux_driver_min)
        if floor is not None:
            return driver >= floor
    else:  # WSL2 runs the Windows driver: its floor for the CUDA major, else the branch
        floor = parse_driver_version(wheel_driver_floor(f"{extra.cuda_major}.0", "windows"))
        if floor is not None:
            return driver >= floor
    branch = extra.driver_branch_min or driver_branch_floor(extra.cuda_major)
    return branch is not None and driver[0] >= branch


def jax_cuda_extra(
    driver_version: str | None, os: str = "linux", *, compute_capabilities: Sequence[str] = ()
) -> str | None:
    """The ``jax[...]`` extra for this driver: ``"cuda13"`` from driver 580.65.06, ``"cuda12"`` from
    525.60.13, else None.  JAX's CUDA wheels are Linux-only (x86_64, aarch64); WSL2 is experimental
    and reads the Windows driver's number; native Windows and macOS -> None.  GPUs given in
    ``compute_capabilities`` below an extra's minimum (CUDA 13: 7.5, CUDA 12: 5.2) rule it out.
    """
    os_name = normalize_os(os)
    driver = parse_driver_version(driver_version)
    if driver is None or os_name not in ("linux", "wsl"):
        return None
    given = compute_capabilities if not isinstance(compute_capabilities, str) else [compute_capabilities]
    ccs = [cc for cc in (parse_compute_capability(item) for item in given) if cc is not None]
    for extra in jax_extras():
        minimum = parse_compute_capability(extra.min_compute_capability)
        if minimum is not None and any(cc < minimum for cc in ccs):
            continue
        if _jax_driver_ok(extra, driver, os_name):
            return extra.extra
    return None


def jax_install_requirement(
    driver_version: str | None, os: str = "linux", *, compute_capabilities: Sequence[str] = ()
) -> str | None:
    """``'jax[cuda13]'`` / ``'jax[cuda12]'`` for this driver, or None (see ``jax_cuda_extra``)."""
    extra = jax_cuda_extra(driver_version, os, compute_capabilities=compute_capabilities)
    return f"jax[{extra}]" if extra else None


# --------------------------------------------------------------------------- CuPy


@functools.lru_cache(maxsize=None)
def _cupy_rows() -> dict[int, dict[str, Any]]:
    cupy = _packages_data().get("cupy")
    rows: dict[int, dict[str, Any]] = {}
    for raw in cupy.get("packages", []) if isinstance(cupy, dict) else []:
        if isinstance(raw, dict) and isinstance(raw.get("cuda_major"), int) and isinstance(raw.get("package"), str):
            rows[raw["cuda_major"]] = raw
    return rows


def cupy_package_for_cuda(cuda_major: int | None) -> str | None:
    """The CuPy wheel for a CUDA major: 13 -> "cupy-cuda13x", 12 -> "cupy-cuda12x", 11 -> "cupy-cuda11x"
    (CUDA 11.2+; CuPy v14 dropped it); other majors or junk -> None."""
    if isinstance(cuda_major, bool):
        return None
    if isinstance(cuda_major, str) and cuda_major.strip().isdecimal():
        cuda_major = int(cuda_major.strip())
    if not isinstance(cuda_major, int):
        return None
    row = _cupy_rows().get(cuda_major)
    return row["package"] if row else None
