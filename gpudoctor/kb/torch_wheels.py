"""PyTorch wheels: each release's CUDA variants, their GPU arch lists, Python range and index URL.

The data is ``data/pytorch.json`` (generated from the shared reference by
``scripts/kb_refresh.py``).  Releases are named by major.minor ("2.6"); a variant by its
local version tag ("cu126").  ``None`` means the data does not say, never "no".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.driver_cuda import min_driver_for_cuda, mvc_floor
from gpudoctor.kb.loading import _driver_data, _torch_data
from gpudoctor.kb.python_versions import python_in_range
from gpudoctor.kb.versions import _platform_column, parse_cuda_version, parse_driver_version

INDEX_ROOT = "https://download.pytorch.org/whl"

_RELEASE_RE = re.compile(r"\s*v?(\d{1,2})\.(\d{1,3})(?:\.\d{1,4})?(?:[a-z]+\d*)?(?:\.dev\d+)?(?:\+([\w.]+))?\s*")
_TAG_RE = re.compile(r"(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*)", re.IGNORECASE)


def _tuple(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list):
        return ()
    return tuple(str(value) for value in values if isinstance(value, str))


def _optional_list(values: Any) -> tuple[str, ...] | None:
    return _tuple(values) if isinstance(values, list) else None


def normalize_os(os_name: object) -> str | None:
    """``"linux"`` / ``"windows"`` / ``"macos"`` / ``"wsl"`` from the spellings platform APIs use
    (sys.platform "win32", "darwin", platform.system() "Windows", "Linux"); None when unknown."""
    if not isinstance(os_name, str):
        return None
    name = os_name.strip().lower()
    if name.startswith("wsl"):
        return "wsl"
    if name.startswith("linux"):
        return "linux"
    if name.startswith(("win", "cygwin")):
        return "windows"
    if name.startswith(("darwin", "mac", "osx")):
        return "macos"
    return None


def normalize_machine(machine: object) -> str | None:
    """``"x86_64"`` (also AMD64, x64) or ``"aarch64"`` (also arm64); None for anything else."""
    if not isinstance(machine, str):
        return None
    name = machine.strip().lower()
    if name in ("x86_64", "amd64", "x64", "x86-64"):
        return "x86_64"
    if name in ("aarch64", "arm64", "armv8", "sbsa"):
        return "aarch64"
    return None


@dataclass(frozen=True)
class TorchVariant:
    """One CUDA build of a torch release, as published on ``download.pytorch.org/whl/<variant>``."""

    torch: str  # "2.6"
    variant: str  # "cu126"
    cuda: str | None  # "12.6" (major.minor)
    cudnn: str | None  # "9.5.1.17"
    arch_list: tuple[str, ...] | None  # Linux x86_64, KB notation ("8.6", "12.0+PTX"); None = not verified
    windows: bool | None  # a Windows wheel exists; None = not verified
    index_url: str  # "https://download.pytorch.org/whl/cu126"
    note: str | None
    sources: tuple[str, ...]
    cuda_full: str | None = None  # "12.6.3" where the data names the exact toolkit
    arch_list_aarch64: tuple[str, ...] | None = None
    arch_list_windows: tuple[str, ...] | None = None
    windows_note: str | None = None
    arch_sources: tuple[str, ...] = ()
    windows_sources: tuple[str, ...] = ()

    def arch_list_for(self, os: str = "linux", machine: str = "x86_64") -> tuple[str, ...] | None:
        """The arch list of this variant's wheel for an OS ("linux", "windows", "wsl" = Linux wheels)
        and machine ("x86_64", "aarch64"); None where the data has none (not verified, or no wheel)."""
        os_name = normalize_os(os)
        arch = normalize_machine(machine)
        if os_name in ("linux", "wsl"):
            if arch == "x86_64":
                return self.arch_list
            if arch == "aarch64":
                return self.arch_list_aarch64
            return None
        if os_name == "windows" and arch == "x86_64":
            return self.arch_list_windows if self.windows else None
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "torch": self.torch,
            "variant": self.variant,
            "cuda": self.cuda,
            "cuda_full": self.cuda_full,
            "cudnn": self.cudnn,
            "arch_list": list(self.arch_list) if self.arch_list is not None else None,
            "arch_list_aarch64": list(self.arch_list_aarch64) if self.arch_list_aarch64 is not None else None,
            "arch_list_windows": list(self.arch_list_windows) if self.arch_list_windows is not None else None,
            "windows": self.windows,
            "index_url": self.index_url,
            "note": self.note,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class TorchRelease:
    """A torch release (major.minor) and its CUDA variants."""

    torch: str  # "2.6"
    python_min: str | None  # "3.9"
    python_max: str | None  # "3.13"
    python_note: str | None
    default_pypi_linux_x86_64: str | None  # the variant plain `pip install torch` gets there
    variants: tuple[TorchVariant, ...]
    sources: tuple[str, ...]
    note: str | None = None
    # False for a release confirmed only from PyPI's metadata (its download.pytorch.org variants not read yet):
    # it is known when found installed, but never chosen as an install target in its own right.
    index_verified: bool = True

    def supports_python(self, version: str | None) -> bool | None:
        """True when wheels for this Python (major.minor) are in the release's supported range;
        None when the version or the range is unknown."""
        return python_in_range(version, self.python_min, self.python_max)

    def variant(self, tag: str | None) -> TorchVariant | None:
        if not isinstance(tag, str):
            return None
        wanted = tag.strip().lower()
        for variant in self.variants:
            if variant.variant == wanted:
                return variant
        return None


def _variant(torch: str, raw: dict[str, Any]) -> TorchVariant | None:
    tag = raw.get("variant")
    if not isinstance(tag, str) or not _TAG_RE.fullmatch(tag):
        return None
    windows = raw.get("windows")
    return TorchVariant(
        torch=torch,
        variant=tag.lower(),
        cuda=raw.get("cuda") if isinstance(raw.get("cuda"), str) else None,
        cudnn=raw.get("cudnn") if isinstance(raw.get("cudnn"), str) else None,
        arch_list=_optional_list(raw.get("arch_list_linux_x86_64")),
        windows=windows if isinstance(windows, bool) else None,
        index_url=f"{INDEX_ROOT}/{tag.lower()}",
        note=raw.get("note") if isinstance(raw.get("note"), str) else None,
        sources=_tuple(raw.get("sources")),
        cuda_full=raw.get("cuda_full") if isinstance(raw.get("cuda_full"), str) else None,
        arch_list_aarch64=_optional_list(raw.get("arch_list_linux_aarch64")),
        arch_list_windows=_optional_list(raw.get("arch_list_windows")),
        windows_note=raw.get("windows_note") if isinstance(raw.get("windows_note"), str) else None,
        arch_sources=_tuple(raw.get("arch_sources")),
        windows_sources=_tuple(raw.get("windows_sources")),
    )


def _release_key(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor)


@functools.lru_cache(maxsize=None)
def torch_releases() -> tuple[TorchRelease, ...]:
    """Every confirmed torch release in the data, newest first (announced-only releases excluded)."""
    releases = []
    for raw in _torch_data().get("releases", []):
        if not isinstance(raw, dict):
            continue
        torch = raw.get("torch")
        if not isinstance(torch, str) or not re.fullmatch(r"\d{1,2}\.\d{1,3}", torch):
            continue
        variants = tuple(v for v in (_variant(torch, r) for r in raw.get("variants", []) if isinstance(r, dict)) if v)

        def text(key: str) -> str | None:
            value = raw.get(key)  # noqa: B023 - called at once, inside the loop
            return value if isinstance(value, str) else None

        releases.append(
            TorchRelease(
                torch=torch,
                python_min=text("python_min"),
                python_max=text("python_max"),
                python_note=text("python_note"),
                default_pypi_linux_x86_64=text("default_pypi_linux_x86_64"),
                variants=variants,
                sources=_tuple(raw.get("sources")),
                note=text("note"),
                index_verified=raw.get("index_verified") is not False,
            )
        )
    releases.sort(key=lambda release: _release_key(release.torch), reverse=True)
    return tuple(releases)


def _parse_release(version: object) -> tuple[str, str | None] | None:
    """``"2.6.0+cu126"`` -> ``("2.6", "cu126")``; ``"2.14"`` -> ``("2.14", None)``; junk -> None."""
    if not isinstance(version, str) or len(version) > 64:
        return None
    match = _RELEASE_RE.fullmatch(version)
    if not match:
        return None
    local = match.group(3)
    tag = None
    if local:
        tag_match = _TAG_RE.match(local)
        tag = tag_match.group(1).lower() if tag_match else None
    return f"{int(match.group(1))}.{int(match.group(2))}", tag


def torch_release(version: str | None) -> TorchRelease | None:
    """The release a torch version belongs to: ``"2.6.0+cu126"`` -> the 2.6 row; unknown -> None."""
    parsed = _parse_release(version)
    if parsed is None:
        return None
    for release in torch_releases():
        if release.torch == parsed[0]:
            return release
    return None


def torch_variant(version: str | None, variant: str | None = None) -> TorchVariant | None:
    """One variant of a release: ``("2.6.0", "cu126")``, or ``("2.6.0+cu126", None)`` which takes
    the tag from the version.  None when either is unknown to the data."""
    release = torch_release(version)
    if release is None:
        return None
    tag = variant
    if tag is None:
        parsed = _parse_release(version)
        tag = parsed[1] if parsed else None
    return release.variant(tag)


def wheel_driver_floor(cuda: str | None, os: str = "linux") -> str | None:
    """The oldest driver a framework wheel built with CUDA ``cuda`` runs on.

    Framework wheels (PyTorch, TensorFlow, JAX) bundle their CUDA runtime, so the driver only has
    to run that CUDA major through minor-version compatibility: 11.x -> 450.80.02, 12.x ->
    525.60.13, 13.x -> 580.65.06 on Linux (527.41 for 12.x on Windows).  A CUDA major without
    minor-version compatibility (10.x and older) needs its release's own driver.  ``os`` "wsl"
    reads the Windows column (WSL runs the Windows driver).  None when unknown (for instance
    Windows and CUDA 13.x: no Windows floor is confirmed).
    """
    parsed = parse_cuda_version(cuda)
    platform = _driver_platform(os)
    if parsed is None or platform is None:
        return None
    floor = mvc_floor(parsed[0], platform)
    if floor is not None:
        return floor
    if parsed[0] < 11:
        return min_driver_for_cuda(f"{parsed[0]}.{parsed[1]}", platform)
    return None


def _driver_platform(os_name: object) -> str | None:
    """The driver table a wheel's OS reads: Linux for linux, Windows for windows and WSL."""
    name = normalize_os(os_name)
    if name == "linux":
        return "linux"
    if name in ("windows", "wsl"):
        return "windows"
    return None


def driver_branch_floor(cuda_major: int) -> int | None:
    """The driver branch the compatibility guide names for a CUDA major (13 -> 580), for platforms
    whose exact floor is not confirmed."""
    for row in _driver_data().get("minor_version_compat", []):
        if isinstance(row, dict) and row.get("cuda_major") == cuda_major:
            branch = row.get("branch_min")
            if isinstance(branch, str) and branch.isdecimal():
                return int(branch)
    return None


def driver_meets_wheel_floor(driver_version: str | None, cuda: str | None, os: str = "linux") -> bool | None:
    """Whether a driver runs a wheel built with ``cuda`` on ``os``: the exact floor where it is
    known, else the driver branch of that CUDA major; None when neither is known."""
    driver = parse_driver_version(driver_version)
    parsed = parse_cuda_version(cuda)
    if driver is None or parsed is None:
        return None
    floor = parse_driver_version(wheel_driver_floor(cuda, os))
    if floor is not None:
        return driver >= floor
    branch = driver_branch_floor(parsed[0])
    if branch is not None and _driver_platform(os) is not None:
        return driver[0] >= branch
    return None


def driver_runs_natively(driver_version: str | None, cuda: str | None, os: str = "linux") -> bool | None:
    """Whether the driver fully supports the CUDA major.minor of a wheel (release-notes Table 3 GA row)."""
    driver = parse_driver_version(driver_version)
    parsed = parse_cuda_version(cuda)
    platform = _driver_platform(os)
    if driver is None or parsed is None or platform is None or _platform_column(platform) is None:
        return None
    needed = parse_driver_version(min_driver_for_cuda(f"{parsed[0]}.{parsed[1]}", platform))
    if needed is None:
        return None
    return driver >= needed


# No PyTorch 1.x or 2.x binary ships kernels below this compute capability (1.x builds started at sm_35; the
# table's releases start higher): a GPU below it runs no PyTorch wheel at all.  Source: the arch lists of the
# PyTorch release builds (pytorch/builder and .ci scripts' TORCH_CUDA_ARCH_LIST), as kept in pytorch.json.
TORCH_OLDEST_CAPABILITY = "3.5"
