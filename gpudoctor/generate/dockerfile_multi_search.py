"""Which build of each framework goes into a multi-framework image, and which of them share one venv.

The search (``plan_builds``), over each framework's candidates (``dockerfile_multi_candidates``: the user's pinned
build, or the newest that fits and older releases' builds the knowledge base also accepts):

1. The largest group of frameworks that can share /opt/venv wins: builds of the same CUDA major whose ``nvidia-*``
   pins all have a release in common (``kb.pip_pins.agree``, from each wheel's own Requires-Dist).  A build whose
   pins were never read cannot be shown to agree, so it never joins a group.
2. Among the sets that give a group of that size, the newest: the smallest sum of each framework's rank (how many
   releases older than its newest that fits), ties going to the set whose first frameworks are newer, then to each
   release's own build (the chooser's variant) over its other ones.
3. A framework outside the group gets its newest build in a venv of its own (/opt/venv-NAME).

The layout says why, which newer builds were passed over (and the pins that disagree), and the ``--framework``
that gives the newest of each instead.  Agreement of two builds is cached, so the few thousand sets of three
frameworks' last ten releases are sorted and checked in milliseconds.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.generate.dockerfile_builds import Build
from gpudoctor.generate.dockerfile_multi_candidates import MAX_RELEASES, Candidate, candidates
from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused
from gpudoctor.kb.pip_pins import PinnedBuild, agree

SHARED_VENV = "/opt/venv"
_PINS = "each wheel's Requires-Dist, kb pip_pins"


@dataclass(frozen=True)
class Layout:
    """Where each build goes (``venvs``: framework -> venv, in the asked order), why, and what was passed over."""

    venvs: tuple[tuple[str, str], ...]
    why: str
    passed_over: tuple[str, ...] = ()  # "torch 2.14.1 (cu130), the newest that fits, for torch 2.10.0 (cu128): ..."
    newest: str | None = None  # the --framework value that gives the newest of each (None: this is it)

    def venv(self, framework: str) -> str:
        return dict(self.venvs)[framework]

    @property
    def shared(self) -> bool:
        """Every framework in /opt/venv."""
        return all(venv == SHARED_VENV for _, venv in self.venvs)

    @property
    def group(self) -> tuple[str, ...]:
        """The frameworks that share /opt/venv (none, or two or more)."""
        return tuple(name for name, venv in self.venvs if venv == SHARED_VENV)

    def ordered_venvs(self) -> list[str]:
        """Each venv once, in the order of the first framework it holds."""
        return list(dict.fromkeys(venv for _, venv in self.venvs))


def plan_builds(
    request: DockerfileRequest, driver: str | None, python: str, os_token: str | None
) -> tuple[list[Build], Layout]:
    """Each framework's build (in the asked order) and the venv layout, or the refusal of one framework."""
    pools = []
    for name, version in request.frameworks:
        try:
            pool = candidates(request, name, version, driver, python, os_token)
        except GenerationRefused as refusal:
            # The single-framework refusal, said for this framework, with the others kept in the nearest request.
            raise GenerationRefused(f"{name}: {refusal.reason}", refusal.nearest) from None
        if not request.cpu and not pool[0].build.pip_libs:
            raise GenerationRefused(
                f"{pool[0].build.choice.chosen} takes CUDA and cuDNN from the base image, and a shared image cannot "
                "fit each framework's: the frameworks together need builds that bring their own (TensorFlow 2.14+)",
                "--framework " + ",".join(n if n != name else "tensorflow==2.14" for n, _ in request.frameworks),
            )
        pools.append(pool)
    names = [name for name, _ in request.frameworks]
    newest = [pool[0] for pool in pools]
    if len(pools) == 1:
        return [newest[0].build], Layout(((names[0], SHARED_VENV),), "one framework")
    if request.cpu:
        why = "CPU builds declare no CUDA library, so one venv holds them all"
        return [c.build for c in newest], Layout(tuple((n, SHARED_VENV) for n in names), why)
    found = _search(pools)
    if found is None:
        return [c.build for c in newest], _all_apart(names, newest, any(len(pool) > 1 for pool in pools))
    subset, combo = found
    chosen = list(newest)
    for index, candidate in zip(subset, combo, strict=True):
        chosen[index] = candidate
    builds = [c.build if c is n else _said_older(c.build, n) for c, n in zip(chosen, newest, strict=True)]
    return builds, _grouped(request, names, pools, subset, chosen)


def _said_older(build: Build, newest: Candidate) -> Build:
    """``build``'s choice, saying that it was taken over the newest so that the frameworks share a venv (the
    chooser's words were for a release the user asked for)."""
    why = build.choice.why
    for asked, taken in (("keeps ", "takes "), ("the asked release", "a release")):
        why = why.replace(asked, taken, 1)
    why += f"; taken over {newest.label}, the newest that fits, so that the frameworks share a venv (see venvs)"
    return dataclasses.replace(build, choice=Choice(build.choice.what, build.choice.chosen, why))


# --------------------------------------------------------------------------- the search


def _search(pools: Sequence[Sequence[Candidate]]) -> tuple[tuple[int, ...], tuple[Candidate, ...]] | None:
    """The largest agreeing group and its builds (the newest such set), or None when no two builds agree."""
    for size in range(len(pools), 1, -1):
        options = []
        for subset in itertools.combinations(range(len(pools)), size):
            known = [[c for c in pools[i] if c.pins is not None] for i in subset]
            for combo in itertools.product(*known):
                ranks = [0] * len(pools)
                variants = [0] * len(pools)
                for index, candidate in zip(subset, combo, strict=True):
                    ranks[index], variants[index] = candidate.rank, candidate.variant_rank
                options.append(((sum(ranks), tuple(ranks), tuple(variants), subset), subset, combo))
        options.sort(key=lambda option: option[0])
        for _, subset, combo in options:
            pins = [c.pins for c in combo if c.pins is not None]
            if all(_pair_agrees(a, b) for a, b in itertools.combinations(pins, 2)) and agree(pins)[0]:
                return subset, combo
    return None


@functools.lru_cache(maxsize=4096)
def _pair_agrees(first: PinnedBuild, second: PinnedBuild) -> bool:
    return agree([first, second])[0]


# --------------------------------------------------------------------------- saying why


def _all_apart(names: list[str], newest: list[Candidate], searched: bool) -> Layout:
    """No two builds agree: each framework in its own venv, saying why."""
    venvs = tuple((name, f"{SHARED_VENV}-{name}") for name in names)
    unread = [c.build.choice.chosen for c in newest if c.pins is None]
    if unread:
        why = (
            f"the wheel requirements of {', '.join(unread)} are not in the knowledge base (kb pip_pins; "
            "scripts/refresh_pip_pins.py reads them), so agreement cannot be shown"
        )
    else:
        why = agree([c.pins for c in newest if c.pins is not None])[1] + f" ({_PINS})"
    either = (
        f"; nor does any build of the {MAX_RELEASES} releases before the newest of each that was not pinned"
        if searched
        else ""
    )
    return Layout(venvs, f"each framework in its own venv: {why}{either}")


def _grouped(
    request: DockerfileRequest,
    names: list[str],
    pools: Sequence[Sequence[Candidate]],
    subset: tuple[int, ...],
    chosen: list[Candidate],
) -> Layout:
    venvs = tuple((name, SHARED_VENV if i in subset else f"{SHARED_VENV}-{name}") for i, name in enumerate(names))
    group = [chosen[i] for i in subset]
    shared_why = agree([c.pins for c in group if c.pins is not None])[1]
    passed = []
    for i in subset:
        newest = pools[i][0]
        if chosen[i] is newest:
            continue
        others = [c.pins for c in group if c is not chosen[i] and c.pins is not None]
        if newest.pins is None:
            reason = "its wheel requirements are not in the knowledge base, so agreement cannot be shown"
        else:
            reason = agree([newest.pins, *others])[1]
        passed.append(f"{newest.label}, the newest that fits, for {chosen[i].label}: {reason}")
    apart = [i for i in range(len(names)) if i not in subset]
    if not apart:
        why = f"one venv: the same CUDA major, and {shared_why} ({_PINS})"
        if passed:
            older = ", ".join(chosen[i].label for i in subset if chosen[i] is not pools[i][0])
            why += f"; {older} rather than the newest, whose pins disagree (see above)"
    else:
        group_names = ", ".join(names[i] for i in subset)
        alone = []
        for i in apart:
            pins = [c.pins for c in group if c.pins is not None]
            own = chosen[i].pins
            if own is None:
                alone.append(f"{names[i]}: its wheel requirements are not in the knowledge base")
            else:
                alone.append(f"{names[i]}: {agree([own, *pins])[1]}")
        why = (
            f"{group_names} share /opt/venv ({shared_why}); "
            + ", ".join(f"{names[i]} has its own venv" for i in apart)
            + f": no build of it agrees with theirs ({'; '.join(alone)}) ({_PINS})"
        )
    newest_flag = None
    if passed:
        pairs = zip(request.frameworks, pools, strict=True)
        newest_flag = ",".join(_pinned_newest(name, version, pool[0]) for (name, version), pool in pairs)
    return Layout(venvs, why, tuple(passed), newest_flag)


def _pinned_newest(name: str, version: str | None, newest: Candidate) -> str:
    """``name==release`` of the newest build (the user's own pin when there was one)."""
    release = version or (newest.build.constraint or "").split("==", 1)[-1].removesuffix(".*")
    return f"{name}=={release}" if release else name
