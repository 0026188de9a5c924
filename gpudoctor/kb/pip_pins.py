"""The CUDA libraries each framework build's wheels declare (Requires-Dist on ``nvidia-*`` wheels), and whether
several builds can share one Python environment.

The data is ``data/pip_pins.json``, written by ``scripts/refresh_pip_pins.py`` from pip's own reading of each
wheel's metadata (every row names the PyPI release that declares the pins).  ``agree`` intersects, per
``nvidia-*`` package, the specifiers every build declares: one venv can hold them only when some version of each
package satisfies all of them, and when their CUDA majors are the same (two CUDA stacks in one process is not a
setup any of the frameworks tests).  ``jupyter_pin`` gives the JupyterLab / ipykernel release for a Python.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "pip_pins.json"


@dataclass(frozen=True)
class PinnedBuild:
    """One framework build and the nvidia-* requirements its wheels declare."""

    framework: str  # "torch", "tensorflow", "jax"
    release: str  # "2.14", "2.21.0", "0.12.0.1" (the knowledge base's own release key)
    build: str  # "cu130", "and-cuda", "cuda12"
    version: str  # the exact release pip read: "2.14.1"
    cuda_major: int | None
    requires: tuple[tuple[str, str], ...]  # (("nvidia-cudnn-cu12", "<10.0,>=9.3.0.75"), ...)
    source: str

    @property
    def label(self) -> str:
        return f"{self.framework} {self.version} ({self.build})"


@dataclass(frozen=True)
class JupyterPin:
    package: str  # "jupyterlab", "ipykernel"
    python: str  # "3.12"
    version: str
    source: str


@functools.lru_cache(maxsize=1)
def pinned_builds() -> tuple[PinnedBuild, ...]:
    """Every row that parses; rows missing a field are skipped."""
    rows = []
    for raw in as_list(_load(DATA_FILE).get("builds")):
        row = as_dict(raw)
        texts = [row.get(key) for key in ("framework", "release", "build", "version", "source")]
        if not all(isinstance(text, str) and text for text in texts):
            continue
        requires = as_dict(row.get("requires"))
        pairs = tuple(sorted((str(k), str(v)) for k, v in requires.items() if isinstance(v, str)))
        major = row.get("cuda_major")
        framework, release, build, version, source = (str(text) for text in texts)
        rows.append(
            PinnedBuild(
                framework=framework,
                release=release,
                build=build,
                version=version,
                cuda_major=major if isinstance(major, int) and not isinstance(major, bool) else None,
                requires=pairs,
                source=source,
            )
        )
    return tuple(rows)


def pinned_build(framework: str, release: str, build: str) -> PinnedBuild | None:
    """The row of this framework release and build (torch "2.14" "cu130"); None when it was never read."""
    return next(
        (row for row in pinned_builds() if (row.framework, row.release, row.build) == (framework, release, build)),
        None,
    )


def jupyter_pin(package: str, python: str) -> JupyterPin | None:
    """The newest ``package`` (jupyterlab, ipykernel) whose Requires-Python admits ``python``; None: not read."""
    for raw in as_list(_load(DATA_FILE).get("jupyter")):
        row = as_dict(raw)
        if row.get("package") == package and row.get("python") == python:
            version, source = row.get("version"), row.get("source")
            if isinstance(version, str) and isinstance(source, str):
                return JupyterPin(package, python, version, source)
    return None


def as_of() -> str | None:
    value = _load(DATA_FILE).get("as_of")
    return value if isinstance(value, str) else None


def _satisfiable(specifiers: Sequence[str]) -> bool:
    """True when some version satisfies every specifier set.  The candidates are the versions the specifiers
    name themselves (every bound of an intersection is one of them, or the intersection has only exclusive
    bounds; that rare case reads as no agreement, which only costs a second venv)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        sets = [SpecifierSet(text) for text in specifiers]
    except InvalidSpecifier:
        return False
    candidates = []
    for spec_set in sets:
        for spec in spec_set:
            try:
                candidates.append(Version(spec.version.removesuffix(".*")))
            except InvalidVersion:
                continue
    if not candidates:  # no bound at all: any version does
        return True
    return any(all(s.contains(c, prereleases=True) for s in sets) for c in candidates)


def _conflict(name: str, holders: Sequence[tuple[PinnedBuild, str]]) -> str:
    """The first pair of ``holders`` whose specifiers for ``name`` exclude each other, in words."""
    for index, (first, first_spec) in enumerate(holders):
        for second, second_spec in holders[index + 1 :]:
            if not _satisfiable([first_spec, second_spec]):
                return (
                    f"{first.label} pins {name} {first_spec or '(any)'}, {second.label} needs {second_spec or '(any)'}"
                )
    return f"no release of {name} satisfies " + ", ".join(f"{b.label} ({s})" for b, s in holders)


def agree(builds: Sequence[PinnedBuild]) -> tuple[bool, str]:
    """(True, what they share) when one environment can hold every build's nvidia-* requirements; else (False,
    every disagreement in words: "tensorflow 2.19.0 (and-cuda) pins nvidia-cudnn-cu12 ==9.3.0.75, jax 0.12.0.1
    (cuda12) needs <10.0,>=9.10.2.21; ...")."""
    majors = {build.cuda_major for build in builds}
    if len(majors) > 1:
        return False, "their CUDA majors differ: " + ", ".join(
            f"{build.label} brings CUDA {build.cuda_major if build.cuda_major else '(none)'} libraries"
            for build in builds
        )
    shared: list[str] = []
    conflicts: list[str] = []
    names = sorted({name for build in builds for name, _ in build.requires})
    for name in names:
        holders = [(build, dict(build.requires)[name]) for build in builds if name in dict(build.requires)]
        if len(holders) < 2:
            continue
        shared.append(name)
        if not _satisfiable([spec for _, spec in holders]):
            conflicts.append(_conflict(name, holders))
    if conflicts:
        return False, "; ".join(conflicts) + ": no release satisfies both"
    if not shared:
        return True, "they declare no nvidia-* library in common"
    return True, f"every nvidia-* library two of them declare has a release all accept ({', '.join(shared)})"


__all__ = ["JupyterPin", "PinnedBuild", "agree", "as_of", "jupyter_pin", "pinned_build", "pinned_builds"]
