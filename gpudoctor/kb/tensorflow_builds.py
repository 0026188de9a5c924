"""TensorFlow GPU builds: tested CUDA/cuDNN, Python range, driver floors, and which one to install.

The data is ``data/tensorflow.json`` (generated from the shared reference by
``scripts/kb_refresh.py``).  TensorFlow has one Linux GPU wheel per release (no CUDA
variants); from 2.14 the ``[and-cuda]`` extra pulls CUDA and cuDNN as pip wheels, so only
the driver has to be on the host.  Native Windows lost GPU support after 2.10.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _tf_data
from gpudoctor.kb.python_versions import format_python, parse_python_version, python_in_range
from gpudoctor.kb.torch_wheels import driver_meets_wheel_floor, normalize_os, wheel_driver_floor
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version, release_tuple

WINDOWS_REASON = "TensorFlow ≥ 2.11 has no GPU support on native Windows; use WSL2"
_VERSION_RE = re.compile(r"\s*v?(\d{1,2})\.(\d{1,3})(?:\.\d{1,4})?(?:[-.]?(?:rc|dev|post)\d*)?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class TfRelease:
    """One TensorFlow release and its tested GPU build configuration."""

    version: str  # "2.20.0"
    python_min: str | None
    python_max: str | None
    cuda: str | None  # tested CUDA "12.5"
    cudnn: str | None  # tested cuDNN "9.3"
    and_cuda: bool  # `pip install tensorflow[and-cuda]` brings CUDA/cuDNN as pip wheels
    windows_native_gpu: bool
    linux_driver_min: str | None  # full support of the tested CUDA
    linux_driver_mvc_floor: str | None  # the least driver that runs it (minor-version compatibility)
    sources: tuple[str, ...]
    python_note: str | None = None

    @property
    def major_minor(self) -> str:
        match = _VERSION_RE.fullmatch(self.version)
        return f"{match.group(1)}.{match.group(2)}" if match else self.version

    def supports_python(self, version: str | None) -> bool | None:
        """True when this release's wheels support that Python (major.minor); None when unknown."""
        return python_in_range(version, self.python_min, self.python_max)

    @property
    def requirement(self) -> str:
        extra = "[and-cuda]" if self.and_cuda else ""
        return f"tensorflow{extra}=={self.version}"


def _text(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


@functools.lru_cache(maxsize=None)
def tf_releases() -> tuple[TfRelease, ...]:
    """Every TensorFlow release in the data, newest first."""
    releases = []
    for raw in _tf_data().get("releases", []):
        if not isinstance(raw, dict) or not isinstance(raw.get("version"), str):
            continue
        if not _VERSION_RE.fullmatch(raw["version"]):
            continue
        releases.append(
            TfRelease(
                version=raw["version"],
                python_min=_text(raw, "python_min"),
                python_max=_text(raw, "python_max"),
                cuda=_text(raw, "cuda"),
                cudnn=_text(raw, "cudnn"),
                and_cuda=raw.get("and_cuda") is True,
                windows_native_gpu=raw.get("windows_native_gpu") is True,
                linux_driver_min=_text(raw, "linux_driver_min"),
                linux_driver_mvc_floor=_text(raw, "linux_driver_mvc_floor"),
                sources=tuple(k for k in raw.get("sources", []) if isinstance(k, str)),
                python_note=_text(raw, "python_note"),
            )
        )
    releases.sort(key=lambda r: release_tuple(r.version, 3), reverse=True)
    return tuple(releases)


def tf_release(version: str | None) -> TfRelease | None:
    """The release row of a TensorFlow version, matched on major.minor: ``"2.18.1"`` -> the 2.18 row."""
    if not isinstance(version, str) or len(version) > 64:
        return None
    match = _VERSION_RE.fullmatch(version)
    if not match:
        return None
    wanted = f"{int(match.group(1))}.{int(match.group(2))}"
    for release in tf_releases():
        if release.major_minor == wanted:
            return release
    return None


@dataclass(frozen=True)
class TfChoice:
    """The TensorFlow release to install for GPU use, or why there is none (``status`` "no_wheel")."""

    status: str
    version: str | None = None
    requirement: str | None = None  # 'tensorflow[and-cuda]==2.20.0'
    reasons: tuple[str, ...] = ()
    python_note: str | None = None
    upgrade_driver_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "version": self.version,
            "requirement": self.requirement,
            "reasons": list(self.reasons),
            "python_note": self.python_note,
            "upgrade_driver_to": self.upgrade_driver_to,
        }


def _driver_ok(release: TfRelease, driver: str | None, os_name: str) -> bool | None:
    if driver is None:
        return None
    if os_name == "linux" and release.linux_driver_mvc_floor:
        floor = parse_driver_version(release.linux_driver_mvc_floor)
        current = parse_driver_version(driver)
        if floor is not None and current is not None:
            return current >= floor
    return driver_meets_wheel_floor(driver, release.cuda, os_name)


def _fits(
    release: TfRelease,
    python: str | None,
    driver: str | None,
    os_name: str,
    ignore_python: bool = False,
    ignore_driver: bool = False,
) -> bool:
    if not ignore_python and python and release.supports_python(python) is False:
        return False
    return not (not ignore_driver and _driver_ok(release, driver, os_name) is False)


def choose_tensorflow(
    *,
    driver_version: str | None,
    python_version: str | None,
    os: str = "linux",
    tf_version: str | None = None,
) -> TfChoice:
    """The TensorFlow GPU build for this machine: keep ``tf_version``'s release when it fits, else
    the newest release whose Python range and driver floor fit (unknown Python or driver does not
    block).  Native Windows -> no_wheel ("use WSL2"); macOS -> no_wheel (no CUDA)."""
    os_name = normalize_os(os)
    if os_name == "windows":
        return TfChoice(
            "no_wheel",
            reasons=(
                WINDOWS_REASON,
                "TensorFlow 2.10 was the last release with native-Windows GPU support (CUDA 11.2 / cuDNN 8.1)",
            ),
        )
    if os_name == "macos":
        return TfChoice("no_wheel", reasons=("TensorFlow has no CUDA GPU build for macOS",))
    if os_name is None:
        return TfChoice("no_wheel", reasons=(f"unknown operating system {str(os)[:40]!r}",))

    driver = (
        driver_version.strip() if isinstance(driver_version, str) and parse_driver_version(driver_version) else None
    )
    python = format_python(parse_python_version(python_version))
    releases = list(tf_releases())
    own = tf_release(tf_version) if tf_version else None
    order = ([own] if own else []) + [r for r in releases if r is not own]

    chosen = next((r for r in order if _fits(r, python, driver, os_name)), None)
    free_python = next((r for r in order if _fits(r, python, driver, os_name, ignore_python=True)), None)
    free_driver = next((r for r in order if _fits(r, python, driver, os_name, ignore_driver=True)), None)

    python_note = None
    held_by_python = free_python is not None and free_python is not chosen
    if python and held_by_python and free_python is not None and free_python.supports_python(python) is False:
        if chosen is None or _newer(free_python, chosen):
            python_note = (
                f"Python {python} is outside TensorFlow {free_python.major_minor}'s range "
                f"({free_python.python_min}-{free_python.python_max})"
                + (f"; it holds you at {chosen.major_minor}" if chosen else "")
                + ". Use a Python in that range for the newer release."
            )
    upgrade = None
    limited = (
        driver is not None
        and free_driver is not None
        and free_driver is not chosen
        and (chosen is None or _newer(free_driver, chosen))
    )
    if limited and free_driver is not None:
        upgrade = _driver_target(free_driver, os_name)

    if chosen is None:
        reasons = []
        if limited and free_driver is not None:
            floor = (
                wheel_driver_floor(free_driver.cuda, os_name)
                if os_name != "linux"
                else (free_driver.linux_driver_mvc_floor)
            )
            reasons.append(
                f"driver {driver} is too old for every TensorFlow GPU build: TensorFlow {free_driver.major_minor} "
                f"(CUDA {free_driver.cuda}) needs at least {floor or upgrade}"
            )
        if python_note:
            reasons.append(f"Python {python} is outside the range of every TensorFlow release that fits")
        return TfChoice(
            "no_wheel",
            reasons=tuple(reasons or ["no TensorFlow GPU build known here fits"]),
            python_note=python_note,
            upgrade_driver_to=upgrade,
        )

    kept = own is not None and chosen is own
    lead = (
        f"keeps TensorFlow {chosen.major_minor}"
        if kept
        else f"TensorFlow {chosen.version} is the newest release that fits"
    )
    reasons = [lead + f" (tested with CUDA {chosen.cuda}, cuDNN {chosen.cudnn})"]
    if chosen.and_cuda:
        reasons.append("the [and-cuda] extra installs CUDA and cuDNN as pip wheels: only the driver is needed")
    else:
        reasons.append(
            f"no [and-cuda] extra for this release: CUDA {chosen.cuda} and cuDNN {chosen.cudnn} "
            "must be installed on the system"
        )
    reasons.append(_driver_clause(chosen, driver, os_name))
    if python:
        reasons.append(f"Python {python} is supported ({chosen.python_min}-{chosen.python_max})")
    else:
        reasons.append("Python version unknown: not checked")
    if own is not None and not kept:
        reasons.append(f"TensorFlow {own.major_minor} (yours) does not fit this machine")
    if limited and free_driver is not None:
        reasons.append(f"the newer TensorFlow {free_driver.major_minor} needs driver {upgrade}")
    return TfChoice(
        "ok",
        version=chosen.version,
        requirement=chosen.requirement,
        reasons=tuple(reasons),
        python_note=python_note,
        upgrade_driver_to=upgrade,
    )


def _newer(a: TfRelease, b: TfRelease) -> bool:
    return release_tuple(a.version, 3) > release_tuple(b.version, 3)


def _driver_target(release: TfRelease, os_name: str) -> str | None:
    """The driver with full support for a release's tested CUDA (Linux); the wheel floor elsewhere."""
    if os_name == "linux" and release.linux_driver_min:
        return release.linux_driver_min
    return wheel_driver_floor(release.cuda, os_name)


def _driver_clause(release: TfRelease, driver: str | None, os_name: str) -> str:
    parsed = parse_cuda_version(release.cuda)
    major = parsed[0] if parsed else "?"
    floor = release.linux_driver_mvc_floor if os_name == "linux" else wheel_driver_floor(release.cuda, os_name)
    if driver is None:
        return f"driver version unknown: not checked (CUDA {major}.x builds need {floor} or newer)"
    full = parse_driver_version(release.linux_driver_min) if os_name == "linux" else None
    current = parse_driver_version(driver)
    if full is not None and current is not None and current >= full:
        return f"driver {driver} runs CUDA {release.cuda} natively"
    return f"driver {driver} runs CUDA {major}.x through minor-version compatibility (>= {floor})"
