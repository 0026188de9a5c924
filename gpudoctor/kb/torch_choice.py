"""Which PyTorch wheel to install for a machine: driver, GPUs, Python, OS -> release, variant, index URL.

The policy, in order:

1. Keep the user's release (``torch_version``) when one of its variants fixes things, else
   take the newest release that has a variant which does.
2. A variant qualifies when the Python is supported (unknown Python does not block), the
   driver meets the wheel's driver floor for the OS (unknown driver does not block), every
   GPU's compute capability is covered by the variant's arch list for that OS and machine,
   and, on Windows, a Windows wheel exists.  A variant covering a GPU only through PTX also
   needs a driver that runs its CUDA natively: PTX from a newer toolkit cannot be
   JIT-compiled by an older driver, minor-version compatibility or not.
3. An unverified fact (arch list or Windows wheel unknown) is acceptable only when no
   variant with verified facts qualifies anywhere.
4. Among the qualifying variants of a release, prefer one the driver runs natively, then
   the highest CUDA.

When nothing qualifies the answer says what blocked it: the driver (with the driver to
upgrade to), the Python version (in ``python_note``), the GPU (too old or too new for every
wheel known here), or the platform.  Worked examples from the real collect_env reports in
the fixtures are in ``tests/unit/test_kb_frameworks.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpudoctor.kb.arch_coverage import arch_list_covers, parse_compute_capability
from gpudoctor.kb.python_versions import format_python, parse_python_version
from gpudoctor.kb.torch_verdicts import (
    Context,
    Verdict,
    coverage_clause,
    driver_clause,
    driver_need,
    gpu_reasons,
    python_clause,
    unknown_need,
    verdict_for,
)
from gpudoctor.kb.torch_wheels import (
    TorchRelease,
    TorchVariant,
    _driver_platform,
    normalize_machine,
    normalize_os,
    torch_release,
    torch_releases,
    wheel_driver_floor,
)
from gpudoctor.kb.versions import cuda_key, parse_driver_version, release_tuple


@dataclass(frozen=True)
class WheelChoice:
    """The torch wheel to install, or why there is none.

    ``status``: ``"ok"`` or ``"no_wheel"``.  ``requirement`` is a pip requirement
    (``'torch==2.14.*'``) to install from ``index_url``.  ``python_note`` is set when the
    Python version constrained or blocked the choice and says what to do;
    ``upgrade_driver_to`` is the driver the best variant of the newest fitting release
    would need, set when the driver limited the choice.
    """

    status: str
    torch: str | None = None
    variant: str | None = None
    index_url: str | None = None
    requirement: str | None = None
    reasons: tuple[str, ...] = ()
    python_note: str | None = None
    upgrade_driver_to: str | None = None

    @property
    def install_command(self) -> str | None:
        if self.status != "ok" or not self.requirement or not self.index_url:
            return None
        return f"pip install '{self.requirement}' --index-url {self.index_url}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "torch": self.torch,
            "variant": self.variant,
            "index_url": self.index_url,
            "requirement": self.requirement,
            "install_command": self.install_command,
            "reasons": list(self.reasons),
            "python_note": self.python_note,
            "upgrade_driver_to": self.upgrade_driver_to,
        }


def _cuda_key(variant: TorchVariant) -> tuple[int, int]:
    key = cuda_key(variant.cuda)
    return key[0], key[1]


def _best(candidates: list[Verdict]) -> Verdict:
    def rank(v: Verdict) -> tuple[int, tuple[int, int], bool]:
        native = 2 if v.native is True else 1 if v.native is None else 0
        return native, _cuda_key(v.variant), v.variant.variant == v.release.default_pypi_linux_x86_64

    return max(candidates, key=rank)


def _pick(table: list[list[Verdict]], **flags: bool) -> Verdict | None:
    for strict in (True, False):
        for verdicts in table:
            candidates = [v for v in verdicts if v.qualifies(strict=strict, **flags)]
            if candidates:
                return _best(candidates)
    return None


def _ok(
    choice: Verdict,
    ctx: Context,
    kept: bool,
    python_note: str | None,
    upgrade: str | None,
    limited_by: Verdict | None,
) -> WheelChoice:
    release, variant = choice.release, choice.variant
    lead = (
        f"keeps torch {release.torch}: its {variant.variant} wheel (CUDA {variant.cuda}) fits"
        if kept
        else f"torch {release.torch} {variant.variant} (CUDA {variant.cuda}) is the newest wheel that fits"
    )
    reasons = [lead, *coverage_clause(choice, ctx), driver_clause(choice, ctx), python_clause(choice, ctx)]
    if ctx.os == "windows":
        reasons.append("a Windows wheel exists" if variant.windows else "a Windows wheel is not verified")
    if limited_by is not None:
        target = limited_by.variant
        need = upgrade or unknown_need(target, ctx)
        if limited_by.release.torch == release.torch:
            reasons.append(f"its {target.variant} wheel (CUDA {target.cuda}) would need driver {need}")
        else:
            reasons.append(f"the newer torch {limited_by.release.torch} {target.variant} wheel needs driver {need}")
    return WheelChoice(
        status="ok",
        torch=release.torch,
        variant=variant.variant,
        index_url=variant.index_url,
        requirement=f"torch=={release.torch}.*",
        reasons=tuple(reasons),
        python_note=python_note,
        upgrade_driver_to=upgrade,
    )


def _no_wheel(reasons: list[str], python_note: str | None = None, upgrade: str | None = None) -> WheelChoice:
    return WheelChoice(status="no_wheel", reasons=tuple(reasons), python_note=python_note, upgrade_driver_to=upgrade)


def _release_after(a: TorchRelease, b: TorchRelease) -> bool:
    return release_tuple(a.torch, 2) > release_tuple(b.torch, 2)


def _python_note(chosen: Verdict | None, free: Verdict | None, ctx: Context) -> str | None:
    """Say so when Python held the choice back (or blocked it)."""
    if free is None or not ctx.python or free.python_ok is not False:
        return None  # without the Python limit the same (or an equally fitting) choice is made
    wanted = free.release
    if chosen is not None and not _release_after(wanted, chosen.release):
        return None
    span = f"Python {wanted.python_min}-{wanted.python_max}"
    if chosen is None:
        return (
            f"No torch wheel known here supports Python {ctx.python} on this machine; torch {wanted.torch} "
            f"needs {span}. Create an environment with a Python in that range."
        )
    return (
        f"Python {ctx.python} holds you at torch {chosen.release.torch}: torch {wanted.torch} needs {span}. "
        f"Use a Python in that range for newer releases."
    )


def _clean_ccs(compute_capabilities: object) -> tuple[tuple[str, ...], list[str]]:
    if isinstance(compute_capabilities, str):
        items: list[object] = [compute_capabilities]
    else:
        try:
            items = list(compute_capabilities)[:64]  # type: ignore[call-overload]
        except TypeError:
            items = []
    ccs: list[str] = []
    ignored: list[str] = []
    for item in items:
        parsed = parse_compute_capability(item)
        if parsed is None:
            ignored.append(f"ignored unreadable compute capability {str(item)[:20]!r}")
            continue
        text = f"{parsed[0]}.{parsed[1]}"
        if text not in ccs:
            ccs.append(text)
    return tuple(ccs), ignored


def choose_torch_wheel(
    *,
    driver_version: str | None,
    compute_capabilities: Sequence[str],
    python_version: str | None,
    os: str = "linux",
    machine: str = "x86_64",
    torch_version: str | None = None,
) -> WheelChoice:
    """The PyTorch wheel (release, CUDA variant, index URL) for this machine; see the module doc.

    RTX 5090 D (12.0), driver 570.124.04, Python 3.12 -> torch 2.13 cu129 (the newest release
    with sm_120 kernels that driver runs); 2x RTX 3090, driver 470.182.03, Python 3.8 ->
    torch 2.4 cu118; macOS -> no_wheel.
    """
    os_name = normalize_os(os)
    arch = normalize_machine(machine)
    if os_name == "macos":
        return _no_wheel(
            [
                "PyTorch has no CUDA build for macOS (NVIDIA CUDA is not supported there); "
                "`pip install torch` gives the CPU/MPS build"
            ]
        )
    if os_name is None:
        return _no_wheel([f"unknown operating system {str(os)[:40]!r}: expected linux, windows, wsl or macos"])
    if arch is None or (os_name == "windows" and arch != "x86_64"):
        return _no_wheel([f"no PyTorch CUDA wheels for {os_name} on {str(machine)[:40]!r}"])

    ccs, ignored = _clean_ccs(compute_capabilities)
    driver = (
        driver_version.strip() if isinstance(driver_version, str) and parse_driver_version(driver_version) else None
    )
    python = format_python(parse_python_version(python_version))
    ctx = Context(os=os_name, machine=arch, driver=driver, python=python, ccs=ccs)

    # Install targets only from releases whose index variants were read; the installed release always counts.
    releases = [r for r in torch_releases() if r.index_verified]
    own = torch_release(torch_version) if torch_version else None
    if own is not None:
        releases = [own] + [r for r in releases if r.torch != own.torch]
    table = [[verdict_for(release, variant, ctx) for variant in release.variants] for release in releases]
    # An unverified arch list may stand in only for GPUs some verified list of this platform covers
    # (a Kepler 3.5 GPU must not be sent to a wheel nobody checked just because every checked one fails).
    known_lists = [v.variant.arch_list_for(ctx.wheel_os, ctx.machine) for row in table for v in row]
    plausible = all(
        any(arch_list_covers(item, cc).status in ("sass", "ptx") for item in known_lists if item is not None)
        for cc in ccs
    )
    for row in table:
        for verdict in row:
            verdict.plausible = plausible
    chosen = _pick(table)
    free_python = _pick(table, ignore_python=True) if python else None
    free_driver = _pick(table, ignore_driver=True) if driver else None
    python_note = _python_note(chosen, free_python, ctx)

    if chosen is not None:
        limited = None
        upgrade = None
        if free_driver is not None and (free_driver.release.torch, free_driver.variant.variant) != (
            chosen.release.torch,
            chosen.variant.variant,
        ):
            limited = free_driver
            upgrade = driver_need(free_driver.variant, ctx) if _driver_platform(ctx.os) else None
            needed = parse_driver_version(upgrade) if upgrade is not None else None
            current = parse_driver_version(driver) if driver is not None else None
            if needed is not None and current is not None and needed <= current:
                upgrade = None  # the newer variant was held back by something other than the driver floor
        kept = own is not None and chosen.release.torch == own.torch
        choice = _ok(chosen, ctx, kept, python_note, upgrade, limited)
        if own is not None and not kept:
            ignored = [f"no torch {own.torch} wheel (your release) fits this machine", *ignored]
        return replace(choice, reasons=choice.reasons + tuple(ignored)) if ignored else choice

    reasons: list[str] = []
    upgrade = None
    if free_driver is not None:
        upgrade = driver_need(free_driver.variant, ctx)
        floor = wheel_driver_floor(free_driver.variant.cuda, ctx.os)
        reasons.append(
            f"driver {driver} is too old for every PyTorch CUDA wheel that fits this machine: torch "
            f"{free_driver.release.torch} {free_driver.variant.variant} needs "
            f"{upgrade or unknown_need(free_driver.variant, ctx)}"
            + (f" (at least {floor} through minor-version compatibility)" if floor and floor != upgrade else "")
        )
    if python_note is None and free_python is not None and chosen is None:
        python_note = _python_note(None, free_python, ctx)
    both_free = _pick(table, ignore_python=True, ignore_driver=True)
    if both_free is None:
        reasons.extend(gpu_reasons(table, ctx))
        if ctx.os == "windows" and not reasons:
            reasons.append("no Windows CUDA wheel known here fits this machine")
    elif free_driver is None and free_python is None:
        reasons.append("the driver and the Python version together rule out every wheel known here")
    if python_note and not reasons:
        reasons.append(f"Python {python} is outside the range of every wheel that fits this machine")
    if not reasons:
        reasons.append("no PyTorch CUDA wheel known here fits this machine")
    return _no_wheel(reasons + ignored, python_note=python_note, upgrade=upgrade)
