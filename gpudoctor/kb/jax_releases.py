"""JAX releases of the CUDA-plugin era and the one to install: ``jax[cuda13]==0.12.0.1``, pinned.

The rows live in ``data/python_gpu_packages.json`` under ``jax.releases``, written by
``scripts/jax_releases_refresh.py`` from the package index itself (source ``JAX_PYPI``): version, the jaxlib it
pins, the Python range its wheels cover and the CUDA extras whose plugin wheels exist (``cuda12`` from 0.4.30,
``cuda13`` from 0.7.2: 0.7.0 and 0.7.1 declare the extra, but its plugin was first published for 0.7.2).
``choose_jax`` keeps the release asked for when it fits, else takes the newest one whose Python range and CUDA
extra fit this machine, the same way ``choose_tensorflow`` does; the extra itself (driver floor, GPU minimum)
comes from ``frameworks.jax_cuda_extra``'s table.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.loading import _packages_data
from gpudoctor.kb.python_versions import format_python, parse_python_version, python_in_range
from gpudoctor.kb.versions import version_key as _version_key

__all__ = ["JaxChoice", "JaxRelease", "choose_jax", "jax_release", "jax_releases", "jax_releases_matching"]


@dataclass(frozen=True)
class JaxRelease:
    version: str  # "0.9.2"
    jaxlib: str | None  # the jaxlib it pins: jax 0.4.37 installs jaxlib 0.4.36
    python_min: str | None
    python_max: str | None
    extras: tuple[str, ...]  # the CUDA extras with wheels: ("cuda12", "cuda13")
    sources: tuple[str, ...]
    note: str | None = None

    def supports_python(self, version: object) -> bool | None:
        return python_in_range(version, self.python_min, self.python_max)


@functools.lru_cache(maxsize=None)
def jax_releases() -> tuple[JaxRelease, ...]:
    """Every release the knowledge base knows, newest first; yanked ones are left out."""
    jax = _packages_data().get("jax")
    rows = jax.get("releases", []) if isinstance(jax, dict) else []
    releases = []
    for raw in rows if isinstance(rows, list) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("version"), str) or raw.get("yanked") is True:
            continue
        if not _version_key(raw["version"]):
            continue

        def text(key: str, row: dict[str, Any] = raw) -> str | None:
            return row.get(key) if isinstance(row.get(key), str) else None

        extras = raw.get("extras")
        releases.append(
            JaxRelease(
                version=raw["version"],
                jaxlib=text("jaxlib"),
                python_min=text("python_min"),
                python_max=text("python_max"),
                extras=tuple(x for x in extras if isinstance(x, str)) if isinstance(extras, list) else (),
                sources=tuple(x for x in raw.get("sources", []) if isinstance(x, str))
                if isinstance(raw.get("sources"), list)
                else (),
                note=text("note"),
            )
        )
    releases.sort(key=lambda r: _version_key(r.version), reverse=True)
    return tuple(releases)


def jax_releases_matching(version: object) -> tuple[JaxRelease, ...]:
    """``"0.9.2"`` -> that release; ``"0.9"`` -> every 0.9.x, newest first; anything unknown -> ()."""
    if not isinstance(version, str) or not version.strip():
        return ()
    wanted = version.strip()
    exact = tuple(r for r in jax_releases() if r.version == wanted)
    return exact or tuple(r for r in jax_releases() if r.version.startswith(wanted + "."))


def jax_release(version: object) -> JaxRelease | None:
    """``"0.9.2"`` -> that release; ``"0.9"`` -> the newest 0.9.x; anything unknown -> None."""
    return next(iter(jax_releases_matching(version)), None)


@dataclass(frozen=True)
class JaxChoice:
    """The JAX release and extra to install, or why there is none (``status`` "no_wheel")."""

    status: str
    version: str | None = None
    extra: str | None = None  # "cuda13"; None for the CPU build
    requirement: str | None = None  # "jax[cuda13]==0.10.0"
    reasons: tuple[str, ...] = ()
    python_note: str | None = None
    upgrade_driver_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "version": self.version,
            "extra": self.extra,
            "requirement": self.requirement,
            "reasons": list(self.reasons),
            "python_note": self.python_note,
            "upgrade_driver_to": self.upgrade_driver_to,
        }


def choose_jax(
    *,
    driver_version: str | None,
    python_version: str | None,
    os: str = "linux",
    compute_capabilities: Sequence[str] = (),
    jax_version: str | None = None,
    cpu: bool = False,
) -> JaxChoice:
    """The JAX to install: the asked release when it fits, else the newest whose Python range fits and that
    ships the CUDA extra this driver and these GPUs can run (``cpu``: plain ``jax``, no extra).

    An unknown Python does not hold a release back; an unknown driver gives no GPU build (the extra depends on
    it).  Yanked releases are never chosen.
    """
    from gpudoctor.kb.frameworks import jax_cuda_extra, jax_extras

    python = format_python(parse_python_version(python_version))
    releases = list(jax_releases())
    if not releases:
        return JaxChoice("no_wheel", reasons=("the knowledge base lists no JAX release",))
    asked = jax_releases_matching(jax_version) if jax_version else ()
    if jax_version and not asked:
        return JaxChoice(
            "no_wheel",
            reasons=(
                f"JAX {str(jax_version)[:20]} is not a release the knowledge base knows "
                f"({releases[-1].version} to {releases[0].version})",
            ),
        )
    own = asked[0] if asked else None  # "0.9" asks for the 0.9.x series: the newest of it that fits
    order = list(asked) if asked else releases

    def python_fits(release: JaxRelease) -> bool:
        return python is None or release.supports_python(python) is not False

    if cpu:
        chosen = next((r for r in order if python_fits(r)), None)
        if chosen is None:
            return _no_python_fit(order, python)
        return JaxChoice(
            "ok",
            chosen.version,
            None,
            f"jax=={chosen.version}",
            (
                f"JAX {chosen.version} is the {'asked' if own else 'newest'} release for Python {python or 'any'}; "
                "plain jax runs on the CPU",
            ),
        )

    usable = jax_cuda_extra(driver_version, os, compute_capabilities=compute_capabilities)
    if usable is None:
        floors = [e for e in jax_extras() if e.linux_driver_min]
        oldest = min(floors, key=lambda e: e.cuda_major, default=None)
        why = (
            f"no JAX CUDA build runs on driver {driver_version}"
            if driver_version
            else "the JAX CUDA extra depends on the host driver, and none is known"
        )
        return JaxChoice("no_wheel", reasons=(why,), upgrade_driver_to=oldest.linux_driver_min if oldest else None)
    # The extras this driver can run, newest CUDA first: jax_cuda_extra names the newest; older majors also run.
    runnable = [e for e in jax_extras() if e.cuda_major <= _extra_major(usable)]
    for release in order:
        if not python_fits(release):
            continue
        extra = next((e for e in runnable if e.extra in release.extras), None)
        if extra is None:
            continue
        reasons = [
            f"JAX {release.version} is the {'asked' if own else 'newest'} release with jax[{extra.extra}] "
            f"wheels for Python {python or 'any'}",
            f"driver {driver_version} runs CUDA {extra.cuda_major}.x (jax[{extra.extra}] needs "
            f"{extra.linux_driver_min} or newer); its CUDA and cuDNN come as pip wheels "
            f"({', '.join(extra.plugin_packages)})",
        ]
        note = None
        newer = next(
            (
                r
                for r in releases
                if _version_key(r.version) > _version_key(release.version)
                and any(e.extra in r.extras for e in runnable)
            ),
            None,
        )
        if newer is not None and not own and newer.supports_python(python) is False:
            note = (
                f"Python {python} is outside JAX {newer.version}'s range ({newer.python_min}-{newer.python_max}); "
                f"it holds you at {release.version}. Use a Python in that range for the newer release."
            )
        return JaxChoice(
            "ok",
            release.version,
            extra.extra,
            f"jax[{extra.extra}]=={release.version}",
            tuple(reasons),
            python_note=note,
        )
    if own is not None and python_fits(own):
        have = ", ".join(f"jax[{x}]" for x in own.extras) or "no CUDA extra"
        newest_extra = next((e for e in jax_extras() if e.extra in own.extras), None)
        return JaxChoice(
            "no_wheel",
            reasons=(
                f"JAX {own.version} ships {have}, and driver {driver_version} runs only "
                + ", ".join(f"jax[{e.extra}]" for e in runnable),
            ),
            upgrade_driver_to=newest_extra.linux_driver_min if newest_extra else None,
        )
    return _no_python_fit(order, python)


def _extra_major(extra: str) -> int:
    digits = "".join(ch for ch in extra if ch.isdecimal())
    return int(digits) if digits else 0


def _no_python_fit(releases: Sequence[JaxRelease], python: str | None) -> JaxChoice:
    """No release among RELEASES (the one asked for, or all) has wheels for PYTHON: say which Pythons do."""
    if len(releases) == 1:
        release = releases[0]
        return JaxChoice(
            "no_wheel",
            reasons=(
                f"Python {python} is outside JAX {release.version}'s range ({release.python_min}-{release.python_max})",
            ),
            python_note=f"JAX {release.version} needs Python {release.python_min}-{release.python_max}",
        )
    lows = [r.python_min for r in releases if r.python_min]
    highs = [r.python_max for r in releases if r.python_max]
    span = f"{min(lows, key=_version_key)}-{max(highs, key=_version_key)}" if lows and highs else "other Pythons"
    return JaxChoice(
        "no_wheel",
        reasons=(
            f"no JAX release from {releases[-1].version} to {releases[0].version} has wheels for Python {python} "
            f"(together they cover {span})",
        ),
        python_note=f"JAX needs Python {span}",
    )
