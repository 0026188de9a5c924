"""How one PyTorch wheel variant fits a machine (Python, driver, GPU arch coverage, Windows wheel) and the
sentences that say so; ``torch_choice`` ranks these verdicts into the wheel to install."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.kb.arch_coverage import ArchCoverage, arch_list_covers, lowest_and_highest, parse_compute_capability
from gpudoctor.kb.driver_cuda import min_driver_for_cuda
from gpudoctor.kb.torch_wheels import (
    TorchRelease,
    TorchVariant,
    _driver_platform,
    driver_branch_floor,
    driver_meets_wheel_floor,
    driver_runs_natively,
    wheel_driver_floor,
)
from gpudoctor.kb.versions import parse_cuda_version


@dataclass
class Verdict:
    release: TorchRelease
    variant: TorchVariant
    python_ok: bool | None
    driver_ok: bool | None
    native: bool | None
    windows_ok: bool | None  # a Windows wheel exists (always True off Windows)
    on_windows: bool = False
    coverage: dict[str, ArchCoverage] = field(default_factory=dict)
    arch_known: bool = True
    # Every GPU is covered by some verified list of this platform: only then may an unverified list stand in.
    plausible: bool = True

    @property
    def covers_all(self) -> bool | None:
        """True when every GPU is covered, False when one is not, None when the list is unknown."""
        if not self.coverage:
            return True
        if not self.arch_known:
            return None
        return all(c.status in ("sass", "ptx") for c in self.coverage.values())

    @property
    def ptx_blocked(self) -> bool:
        """A GPU covered only by PTX, and a driver known not to run this CUDA natively."""
        return self.native is False and any(c.status == "ptx" for c in self.coverage.values())

    def qualifies(self, *, strict: bool, ignore_python: bool = False, ignore_driver: bool = False) -> bool:
        if not ignore_python and self.python_ok is False:
            return False
        if not ignore_driver and (self.driver_ok is False or self.ptx_blocked):
            return False
        covers = self.covers_all
        if covers is False or (covers is None and (strict or not self.plausible)):
            return False
        return not (self.windows_ok is False or (self.windows_ok is None and strict and self.on_windows))


@dataclass(frozen=True)
class Context:
    os: str  # linux / windows / wsl
    machine: str
    driver: str | None
    python: str | None
    ccs: tuple[str, ...]

    @property
    def wheel_os(self) -> str:
        return "windows" if self.os == "windows" else "linux"


def verdict_for(release: TorchRelease, variant: TorchVariant, ctx: Context) -> Verdict:
    arch_list = variant.arch_list_for(ctx.wheel_os, ctx.machine)
    coverage = {cc: arch_list_covers(arch_list, cc) for cc in ctx.ccs} if arch_list is not None else {}
    return Verdict(
        release=release,
        variant=variant,
        python_ok=release.supports_python(ctx.python) if ctx.python else None,
        driver_ok=driver_meets_wheel_floor(ctx.driver, variant.cuda, ctx.os) if ctx.driver else None,
        native=driver_runs_natively(ctx.driver, variant.cuda, ctx.os) if ctx.driver else None,
        windows_ok=variant.windows if ctx.os == "windows" else True,
        on_windows=ctx.os == "windows",
        coverage=coverage if arch_list is not None else {cc: ArchCoverage("unknown") for cc in ctx.ccs},
        arch_known=arch_list is not None,
    )


def driver_need(variant: TorchVariant, ctx: Context) -> str | None:
    platform = _driver_platform(ctx.os)
    parsed = parse_cuda_version(variant.cuda)
    if parsed is None or platform is None:
        return None
    return min_driver_for_cuda(f"{parsed[0]}.{parsed[1]}", platform) or wheel_driver_floor(variant.cuda, ctx.os)


def coverage_clause(verdict: Verdict, ctx: Context) -> list[str]:
    where = "Windows" if ctx.os == "windows" else f"Linux {ctx.machine}"
    if not ctx.ccs:
        return ["GPU compute capability unknown: arch coverage not checked"]
    if not verdict.arch_known:
        return [f"its {where} arch list is not verified, so coverage of {', '.join(ctx.ccs)} is unchecked"]
    clauses = []
    for cc, coverage in verdict.coverage.items():
        if coverage.status == "sass":
            clauses.append(f"it has SASS for compute capability {cc} (via {coverage.via})")
        elif coverage.status == "ptx":
            clauses.append(
                f"it covers compute capability {cc} only with PTX ({coverage.via}), JIT-compiled by the driver"
            )
    return clauses


def driver_clause(verdict: Verdict, ctx: Context) -> str:
    variant = verdict.variant
    parsed = parse_cuda_version(variant.cuda)
    major = parsed[0] if parsed else None
    floor = wheel_driver_floor(variant.cuda, ctx.os)
    need = driver_need(variant, ctx)
    if not ctx.driver:
        floor_text = f" (CUDA {major}.x wheels need {floor} or newer)" if floor else ""
        return f"driver version unknown: not checked{floor_text}"
    if verdict.native:
        return f"driver {ctx.driver} runs CUDA {variant.cuda} natively"
    if floor:
        full = f"; full CUDA {variant.cuda} support needs {need}" if need else ""
        return f"driver {ctx.driver} runs CUDA {major}.x wheels through minor-version compatibility (>= {floor}){full}"
    branch = driver_branch_floor(major) if major is not None else None
    return (
        f"driver {ctx.driver} is on branch R{branch} or newer, which CUDA {major}.x needs (exact minimum not confirmed)"
    )


def python_clause(verdict: Verdict, ctx: Context) -> str:
    release = verdict.release
    if not ctx.python:
        return "Python version unknown: not checked"
    if verdict.python_ok is None:
        return f"Python {ctx.python}: torch {release.torch}'s Python range is not known"
    return f"Python {ctx.python} is supported (torch {release.torch}: {release.python_min}-{release.python_max})"


def unknown_need(variant: TorchVariant, ctx: Context) -> str:
    parsed = parse_cuda_version(variant.cuda)
    branch = driver_branch_floor(parsed[0]) if parsed else None
    return f"R{branch} or newer (exact minimum not confirmed)" if branch else "newer than this one (minimum unknown)"


def gpu_reasons(table: list[list[Verdict]], ctx: Context) -> list[str]:
    """Why no variant covers the GPUs (ignoring Python and driver): too old, too new or in between."""
    reasons = []
    lists = [v.variant.arch_list_for(ctx.wheel_os, ctx.machine) for row in table for v in row]
    known = [item for item in lists if item is not None]
    for cc in ctx.ccs:
        if any(arch_list_covers(item, cc).status in ("sass", "ptx") for item in known):
            continue
        spans = [span for span in (lowest_and_highest(item) for item in known) if span is not None]
        parsed = parse_compute_capability(cc)
        if not spans or parsed is None:
            reasons.append(f"no wheel known here has verified kernels for compute capability {cc}")
            continue
        lowest = min(span[0] for span in spans)
        highest = max(span[1] for span in spans)
        if parsed < lowest:
            reasons.append(
                f"the GPU (compute capability {cc}) is older than every PyTorch CUDA wheel known here "
                f"(oldest architecture {lowest[0]}.{lowest[1]}): build from source or use an older framework"
            )
        elif parsed > highest:
            reasons.append(
                f"the GPU (compute capability {cc}) is newer than every PyTorch CUDA wheel known here "
                f"(newest architecture {highest[0]}.{highest[1]}): try a nightly build"
            )
        else:
            reasons.append(f"no PyTorch CUDA wheel known here has kernels for compute capability {cc}")
    return reasons
