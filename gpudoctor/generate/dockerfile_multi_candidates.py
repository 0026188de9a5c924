"""The builds of one framework that the multi-framework search may pick from, newest first.

A framework whose version the user pinned has one candidate: the single-framework chooser's build of that release
(``dockerfile_builds.choose_build``).  An unpinned one has the chooser's newest build (rank 0) and then, release by
release going back (at most ``MAX_RELEASES``), the build the chooser gives with that release asked for, and the other
builds of the same release the knowledge base also accepts for this driver, GPUs and Python:

- torch: every CUDA variant of the release whose verdict qualifies (``kb.torch_verdicts``, the chooser's own test);
  on driver 580 torch 2.10 has cu130 (the chooser's pick) and cu128 (the one PyPI serves, whose pins were read).
- jax: ``jax[cuda12]`` besides ``jax[cuda13]`` where the driver and GPUs run both (the chooser takes the newest CUDA).
- tensorflow: one GPU build per release (``[and-cuda]``, 2.14+: older ones take CUDA from the image).

Each candidate carries its row of wheel pins (``kb.pip_pins``) or None when they were never read: such a candidate
can be installed alone, never shown to agree with another.  ``choose_build`` results are cached per candidate, so a
search over three base OSes asks the chooser once per release.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from gpudoctor.generate.dockerfile_builds import Build, _newest_cuda_of_major, choose_build
from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused
from gpudoctor.kb.pip_pins import PinnedBuild

MAX_RELEASES = 10  # releases looked at per unpinned framework: the search stays small, the builds recent


@dataclass(frozen=True)
class Candidate:
    """One build the search may choose, ``rank`` releases older than the newest that fits (0: the newest)."""

    build: Build
    pins: PinnedBuild | None
    rank: int
    variant_rank: int  # 0: the chooser's own build of the release; 1, 2...: the other builds it accepts

    @property
    def label(self) -> str:
        return self.pins.label if self.pins else self.build.choice.chosen


def candidates(
    request: DockerfileRequest, name: str, version: str | None, driver: str | None, python: str, os_token: str | None
) -> list[Candidate]:
    """The builds of ``name`` to search, newest first; the first is the chooser's (its refusal is raised as is)."""
    newest = _chosen(request, name, version, driver, python, os_token)
    if isinstance(newest, GenerationRefused):
        raise newest
    if version is not None or request.cpu or driver is None or not newest.pip_libs:
        return [Candidate(newest, pinned_of(newest), 0, 0)]
    found = []
    releases = [newest, *(_chosen(request, name, r, driver, python, os_token) for r in _older_releases(name, newest))]
    for rank, build in enumerate(releases):
        if isinstance(build, GenerationRefused) or not build.pip_libs:
            continue
        builds = [build, *_other_builds(request, build, driver, python)]
        found += [Candidate(b, pinned_of(b), rank, index) for index, b in enumerate(builds)]
    return found


def pinned_of(build: Build) -> PinnedBuild | None:
    """The knowledge base's row of the wheel requirements of ``build``; None when they were never read."""
    from gpudoctor.kb.pip_pins import pinned_build

    release = (build.constraint or "").split("==", 1)[-1].removesuffix(".*")
    if build.framework == "torch":
        variant = (build.extra_index or "").rsplit("/", 1)[-1]
        return pinned_build("torch", release, variant)
    if build.framework == "tensorflow":
        return pinned_build("tensorflow", release, "and-cuda")
    extra = re.search(r"\[(cuda\d+)\]", build.pip_args)
    return pinned_build("jax", release, extra.group(1)) if extra else None


# --------------------------------------------------------------------------- the chooser, cached


def _chosen(
    request: DockerfileRequest, name: str, version: str | None, driver: str | None, python: str, os_token: str | None
) -> Build | GenerationRefused:
    one = dataclasses.replace(request, framework=name, framework_version=version, more_frameworks=(), jupyter=False)
    return _cached_build(one, driver, python, os_token)


@functools.lru_cache(maxsize=512)
def _cached_build(
    request: DockerfileRequest, driver: str | None, python: str, os_token: str | None
) -> Build | GenerationRefused:
    try:
        return choose_build(request, driver, python, os_token)
    except GenerationRefused as refusal:
        return refusal


def _older_releases(name: str, newest: Build) -> list[str]:
    """The releases after ``newest``'s in the knowledge base's newest-first list, at most MAX_RELEASES."""
    from gpudoctor import kb
    from gpudoctor.kb.jax_releases import jax_releases

    if name == "torch":
        names = [r.torch for r in kb.torch_releases() if r.index_verified]
    elif name == "tensorflow":
        names = [r.version for r in kb.tf_releases()]
    else:
        names = [r.version for r in jax_releases()]
    own = (newest.constraint or "").split("==", 1)[-1].removesuffix(".*")
    if own not in names:
        return []
    return names[names.index(own) + 1 :][:MAX_RELEASES]


def _other_builds(request: DockerfileRequest, build: Build, driver: str | None, python: str) -> list[Build]:
    if build.framework == "torch":
        return _torch_variants(request, build, driver, python)
    if build.framework == "jax":
        return _jax_extras(request, build, driver)
    return []


def _torch_variants(request: DockerfileRequest, build: Build, driver: str | None, python: str) -> list[Build]:
    """The release's other CUDA variants that qualify as the chooser judges them, highest CUDA first."""
    from gpudoctor import kb
    from gpudoctor.kb.torch_verdicts import Context, coverage_clause, driver_clause, python_clause, verdict_for
    from gpudoctor.kb.versions import cuda_key

    release = kb.torch_release((build.constraint or "").split("==", 1)[-1].removesuffix(".*"))
    if release is None:
        return []
    ctx = Context(os="linux", machine="x86_64", driver=driver, python=python, ccs=request.target.compute_capabilities)
    chosen = (build.extra_index or "").rsplit("/", 1)[-1]
    others = []
    for variant in sorted(release.variants, key=lambda v: cuda_key(v.cuda), reverse=True):
        if variant.variant == chosen or not variant.cuda:
            continue
        verdict = verdict_for(release, variant, ctx)
        if not verdict.qualifies(strict=True):
            continue
        reasons = [
            f"torch {release.torch} {variant.variant} (CUDA {variant.cuda}) fits too",
            *coverage_clause(verdict, ctx),
            driver_clause(verdict, ctx),
            python_clause(verdict, ctx),
        ]
        requirement = f"torch=={release.torch}.*"
        choice = Choice("torch", f"{requirement} {variant.variant} from {variant.index_url}", "; ".join(reasons))
        pip_args = f"'{requirement}' --index-url {variant.index_url}"
        others.append(Build("torch", pip_args, requirement, variant.index_url, variant.cuda, True, choice))
    return others


def _jax_extras(request: DockerfileRequest, build: Build, driver: str | None) -> list[Build]:
    """``jax[cudaNN]`` of the same release for the older CUDA majors the driver and GPUs also run."""
    from gpudoctor.kb.arch_coverage import parse_compute_capability
    from gpudoctor.kb.frameworks import jax_extras
    from gpudoctor.kb.jax_releases import jax_release

    found = re.search(r"\[(cuda(\d+))\]==(\S+?)'", build.pip_args)
    release = jax_release(found.group(3)) if found else None
    if found is None or release is None or driver is None:
        return []
    ccs = [cc for cc in map(parse_compute_capability, request.target.compute_capabilities) if cc is not None]
    others = []
    for extra in jax_extras():
        minimum = parse_compute_capability(extra.min_compute_capability)
        if extra.cuda_major >= int(found.group(2)) or extra.extra not in release.extras:
            continue
        if minimum is not None and any(cc < minimum for cc in ccs):
            continue
        cuda = _newest_cuda_of_major(extra.cuda_major, driver)
        if cuda is None:
            continue
        requirement = f"jax[{extra.extra}]=={release.version}"
        why = (
            f"JAX {release.version} ships jax[{extra.extra}] too, and driver {driver} runs CUDA {extra.cuda_major}.x "
            f"(it needs {extra.linux_driver_min} or newer); its CUDA and cuDNN come as pip wheels "
            f"({', '.join(extra.plugin_packages)})"
        )
        choice = Choice("jax", requirement, why)
        others.append(Build("jax", f"'{requirement}'", f"jax=={release.version}", None, cuda, True, choice))
    return others
