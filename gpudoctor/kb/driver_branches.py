"""Driver branches and the GPUs they serve: the legacy branch an old GPU stays on, the branch and kernel-module
flavour a set of GPUs needs, and the newest CUDA toolkit that still builds for every one of them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.kb.driver_cuda import _toolkit_rows, min_driver_for_cuda
from gpudoctor.kb.loading import _driver_data
from gpudoctor.kb.versions import parse_cuda_version, parse_driver_version

# Legacy driver branches: the last branch for GPUs of an architecture the next branch dropped (NVIDIA's
# "Unix legacy GPU releases", https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/).  Someone still running
# one most likely has such a GPU: branch -> (architecture, the highest compute capability among its GPUs).
LEGACY_BRANCH_ARCHITECTURES: dict[int, tuple[str, str]] = {
    340: ("Tesla (GeForce 8 to 300 series)", "1.3"),
    390: ("Fermi (GeForce 400 and 500 series)", "2.1"),
    470: ("Kepler (GeForce 600 and 700 series, Tesla K)", "3.7"),
}
LEGACY_GPU_URL = "https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/"


def legacy_branch_architecture(driver_version: str | None) -> tuple[str, str] | None:
    """(architecture, highest compute capability) when ``driver_version`` is of a legacy branch, else None."""
    parsed = parse_driver_version(driver_version) if driver_version else None
    # Windows numbers a branch's releases past it (R340 ships as 342.01, R390 as 391.35, R470 as 474.xx).
    return LEGACY_BRANCH_ARCHITECTURES.get(parsed[0] // 10 * 10) if parsed else None


# --------------------------------------------------------------------------- the driver branch the GPUs need

OPEN_ONLY, OPEN_OR_PROPRIETARY, PROPRIETARY = "open", "open-or-proprietary", "proprietary"
_BRANCH_RE = re.compile(r"[Rr]?(\d{3})(?:\.\d+){0,2}")


def _branch_number(text: object) -> int | None:
    """``"R580"`` / ``"580"`` / ``"580.65.06"`` -> 580; ``"ongoing"`` / None -> None."""
    match = _BRANCH_RE.fullmatch(text.strip()) if isinstance(text, str) else None
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class DriverNeeds:
    """What the GPUs present (and a floor from the software) ask of the driver: the branch to pin and the
    kernel-module flavour, with one reason per GPU architecture.

    ``branch`` is None (and ``problem`` says why) when no branch, or no kernel-module flavour, fits every GPU.
    """

    branch: int | None
    open_modules: bool
    floor: int | None  # the oldest branch every GPU and the software floor accept
    cap: int | None  # the newest branch every GPU accepts (legacy GPUs); None: no cap
    reasons: tuple[str, ...]
    problem: str | None = None
    sources: tuple[str, ...] = ()
    pin_why: str = ""  # why this branch: "the newest branch every GPU supports", the Long Term Support Branch...


def long_term_branch() -> int | None:
    """The newest Long Term Support Branch the knowledge base lists (R580) [BRANCH]."""
    branches = [
        _branch_number(row.get("branch"))
        for row in _driver_data().get("driver_branches", [])
        if isinstance(row, dict) and row.get("designation") == "Long Term Support Branch"
    ]
    known = [branch for branch in branches if branch is not None]
    return max(known) if known else None


def _architecture_row(cc: str) -> dict[str, Any] | None:
    parsed = parse_cuda_version(cc)
    if parsed is None:
        return None
    for row in _driver_data().get("architectures", []):
        for listed in row.get("compute_capabilities", ()):
            other = parse_cuda_version(listed)
            if other is not None and other[:2] == parsed[:2]:
                return dict(row)
    return None


def driver_needs(
    compute_capabilities: tuple[str, ...],
    floor_driver: str | None = None,
    floor_why: str = "",
) -> DriverNeeds:
    """The driver branch and kernel-module flavour for these GPUs, above ``floor_driver`` (a framework's or
    toolkit's minimum).  Legacy GPUs cap the branch at their architecture's last one (Pascal: R580); the newest
    GPUs need at least the driver of their first CUDA release (Blackwell: CUDA 12.8 -> R570); without a cap the
    newest Long Term Support Branch is pinned.  Pre-Turing GPUs need the proprietary modules, Blackwell the open
    ones [ARCH, KMOD, OPEN_ONLY]; mixed GPUs get the intersection, or a problem when there is none."""
    reasons: list[str] = []
    sources: set[str] = set()
    floor = _branch_number(floor_driver)
    if floor is not None:
        reasons.append(f"{floor_driver} or newer: {floor_why}" if floor_why else f"{floor_driver} or newer")
    caps: list[tuple[int, str]] = []
    flavours: dict[str, list[str]] = {}
    for cc in compute_capabilities:
        row = _architecture_row(cc)
        if row is None:
            reasons.append(f"compute capability {cc}: not in the knowledge base; treated as a current GPU")
            continue
        label = f"{row.get('architecture')} (compute capability {cc})"
        sources.update(str(key) for key in row.get("sources", ()))
        flavour = str(row.get("kernel_modules") or OPEN_OR_PROPRIETARY)
        flavours.setdefault(flavour, []).append(label)
        cap = _branch_number(row.get("last_driver"))
        first = min_driver_for_cuda(str(row.get("first_cuda"))) if row.get("first_cuda") else None
        arch_floor = _branch_number(first)
        parts = []
        if cap is not None:
            caps.append((cap, label))
            parts.append(f"its last driver branch is R{cap}")
        if arch_floor is not None:
            parts.append(f"it needs R{arch_floor} or newer (CUDA {row.get('first_cuda')} is its first toolkit)")
            floor = max(floor or 0, arch_floor)
        parts.append(
            {
                PROPRIETARY: "proprietary kernel modules only",
                OPEN_ONLY: "open kernel modules only",
            }.get(flavour, "open kernel modules recommended")
        )
        reasons.append(f"{label}: {'; '.join(parts)}")
    cap = min(caps)[0] if caps else None
    open_modules = PROPRIETARY not in flavours
    problem = None
    if PROPRIETARY in flavours and OPEN_ONLY in flavours:
        problem = (
            f"no kernel-module flavour drives every GPU: {', '.join(flavours[PROPRIETARY])} needs the proprietary "
            f"modules, {', '.join(flavours[OPEN_ONLY])} the open ones"
        )
    elif cap is not None and floor is not None and floor > cap:
        problem = f"no driver branch fits: {min(caps)[1]} ends at R{cap}, but R{floor} or newer is needed"
    if problem:
        return DriverNeeds(None, open_modules, floor, cap, tuple(reasons), problem, tuple(sorted(sources)))
    if cap is not None:
        branch: int | None = cap
        pin_why = f"R{cap} pinned: the newest branch every GPU here supports [ARCH]"
    else:
        lts = long_term_branch()
        branch = max((b for b in (lts, floor) if b is not None), default=None)
        if branch is not None and branch == lts:
            pin_why = f"R{branch} pinned: NVIDIA's newest Long Term Support Branch [BRANCH]"
        else:
            pin_why = f"R{branch} pinned: the oldest branch that meets the floor"
        sources.add("BRANCH")
    if not compute_capabilities:
        reasons.append("no GPU known: a Turing or newer GPU is assumed; for an older GPU run this on its machine")
    sources.add("KMOD")
    return DriverNeeds(branch, open_modules, floor, cap, tuple(reasons), None, tuple(sorted(sources)), pin_why)


# --------------------------------------------------------------------------- the CUDA toolkit the GPUs can use

_LAST_CUDA_RE = re.compile(r"(\d{1,2})\.(?:x|\d{1,2})")


def _toolkit_problems(cuda: tuple[int, int], compute_capabilities: tuple[str, ...]) -> tuple[list[str], set[str]]:
    """Why toolkit ``cuda`` cannot build for some of these GPUs, and the sources that say so: an architecture's
    ``last_cuda`` ("12.x": CUDA 13.0 dropped offline compilation and library support before Turing, 7.5
    [ARCH_DROP]) or ``first_cuda`` [ARCH]."""
    problems: list[str] = []
    cites: set[str] = set()
    for cc in compute_capabilities:
        row = _architecture_row(cc)
        if row is None:
            continue
        label = f"{row.get('architecture')} (compute capability {cc})"
        last = _LAST_CUDA_RE.fullmatch(str(row.get("last_cuda") or ""))
        first = parse_cuda_version(row.get("first_cuda"))
        if last and cuda[0] > int(last.group(1)):
            problems.append(f"{label}: CUDA {last.group(1)}.x is its last toolkit, CUDA {cuda[0]} cannot build for it")
        elif first and cuda < first[:2]:
            problems.append(f"{label}: needs CUDA {first[0]}.{first[1]} or newer")
        else:
            continue
        cites.update(key for key in row.get("sources", ()) if key in ("ARCH", "ARCH_DROP"))
    return problems, cites


def toolkit_for_gpus(cuda: str, compute_capabilities: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(the CUDA toolkit to install when ``cuda`` ("13.0") is asked for on these GPUs, why it differs or None).

    A toolkit that cannot build for every GPU present (CUDA 13 for a Pascal GTX 1050) is replaced by the newest
    release that can: of the asked major when one can, else of any major (12.9 for Pascal).  (None, why) when no
    release known here builds for them all (a Kepler GPU next to a Blackwell one) [ARCH, ARCH_DROP]."""
    parsed = parse_cuda_version(cuda)
    if parsed is None:
        return cuda, None
    problems, cites = _toolkit_problems((parsed[0], parsed[1]), compute_capabilities)
    if not problems:
        return cuda, None
    released = {row.cuda for row in _toolkit_rows("linux_min") if row.stage == "ga" and row.minimum is not None}
    fitting = sorted(release for release in released if not _toolkit_problems(release, compute_capabilities)[0])
    same_major = [release for release in fitting if release[0] == parsed[0]]
    why = f"CUDA {cuda} cannot build for every GPU here: {'; '.join(problems)}"
    cited = " ".join(f"[{key}]" for key in sorted(cites))
    if not fitting:
        return None, f"{why}; no CUDA release in the knowledge base builds for them all {cited}"
    chosen = max(same_major or fitting)
    text = f"{chosen[0]}.{chosen[1]}"
    return text, f"{why}; CUDA {text} is the newest toolkit that builds for every GPU here {cited}"
