"""Preflight gates for CI and container builds: requirements a user states on the command line.

Each gate is not applicable unless its option is given; an unmet gate is a
problem, so ``gpudoctor check --require-gpu`` exits 1 on a machine without one.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from gpudoctor import kb
from gpudoctor.api import CheckContext, Fix, check, not_applicable, ok, problem, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.accelerators import VENDOR_WORDS, Vendor, display_name, other_vendors
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.model import GpuInfo
from gpudoctor.facts.predicates import driver_runs_cuda_release
from gpudoctor.kb.gpu_specs import MemoryVerdict, memory_rule_text, memory_verdict
from gpudoctor.results import Outcome
from gpudoctor.words import counted


def _usable_gpus(facts: Facts) -> list[GpuInfo]:
    """NVIDIA GPUs the driver reports: on the bus is not enough for a gate."""
    return facts.gpus


@dataclass(frozen=True)
class _Device:
    """A GPU or TPU a gate counts, whoever made it."""

    label: str  # "GPU 0" (NVIDIA's index), "AMD GPU 1", "Google TPU 0"
    name: str | None
    memory_mib: int | None


def _usable_devices(facts: Facts) -> list[_Device]:
    """Every vendor's accelerators a driver or runtime reports (NVIDIA's first); the bus alone is not enough."""
    devices = [_Device(f"GPU {g.index}", g.name, g.memory_total_mib) for g in _usable_gpus(facts)]
    others = [a for a in other_vendors(facts.accelerators) if a.driver_sees]
    for position, device in enumerate(others):
        kind = "TPU" if device.vendor is Vendor.GOOGLE else "GPU"
        number = device.index if device.index is not None else position
        devices.append(
            _Device(f"{VENDOR_WORDS[device.vendor]} {kind} {number}", display_name(device), device.memory_total_mib)
        )
    return devices


def _loaded_driver(facts: Facts) -> str | None:
    """The driver that can actually run CUDA now: installed-but-not-loaded does not count."""
    driver = facts.driver
    if driver.kernel_module_loaded:
        return driver.kernel_version or driver.userspace_version
    return driver.userspace_version if facts.container.wsl else None


def _cc_tuple(value: str) -> tuple[int, int] | None:
    try:
        major, _, minor = value.partition(".")
        return int(major), int(minor or 0)
    except ValueError:
        return None


@check("GATE001", area="gates", title="--require-gpu: a usable GPU")
def require_gpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --require-gpu, that the driver reports at least one GPU.

    Why it matters: a CI runner or container that silently lost its GPU runs GPU jobs on the CPU, slowly,
    or fails late. This gate fails fast.

    How to fix: see the other findings of the report: they say why no GPU is usable.
    """
    if not ctx.options.get("require_gpu"):
        return not_applicable("not requested")
    devices = _usable_devices(facts)
    if devices:
        return ok(f"{counted(len(devices), 'usable GPU')}", data={"gpus": len(devices)})
    return problem(
        "no usable GPU (required by --require-gpu)",
        fix=Fix("Run where a GPU is usable; the other findings of this report say why none is here."),
        evidence=[Ev.NVML, Ev.NVIDIA_SMI],
    )


@check("GATE002", area="gates", title="--min-gpus: enough GPUs")
def min_gpus(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --min-gpus N, that the driver reports at least N GPUs.

    Why it matters: a multi-GPU job placed on a node with fewer working GPUs hangs or fails at start-up.

    How to fix: see the inventory check (GPU001) for GPUs on the bus that the driver does not see.
    """
    wanted = ctx.options.get("min_gpus")
    if wanted is None:
        return not_applicable("not requested")
    count = len(_usable_devices(facts))
    if count >= wanted:
        return ok(f"{counted(count, 'GPU')} ≥ {wanted}", data={"gpus": count, "required": wanted})
    return problem(
        f"{counted(count, 'GPU')}, fewer than the {wanted} required",
        fix=Fix(f"Run on a node with at least {wanted} working GPUs (GPU001 lists GPUs the driver does not see)."),
        data={"gpus": count, "required": wanted},
    )


@check("GATE003", area="gates", title="--min-compute-capability: new enough GPUs")
def min_compute_capability(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --min-compute-capability X.Y, that every GPU has at least that compute
    capability (from NVML, nvidia-smi or the knowledge base).

    Why it matters: kernels built for a newer architecture (bf16 needs 8.0, FP8 needs 8.9) fail with "no
    kernel image is available for execution on the device" on older GPUs.

    How to fix: run on newer GPUs, or build for the older architecture too.
    """
    wanted = ctx.options.get("min_compute_capability")
    if wanted is None:
        return not_applicable("not requested")
    threshold = _cc_tuple(wanted)
    if threshold is None:
        return warning(f"cannot compare compute capabilities with {wanted!r} (not a version like 8.0)")
    gpus = _usable_gpus(facts)
    fix = Fix(f"Run on GPUs of compute capability {wanted} or newer, or build for the older architecture too.")
    if not gpus:
        return problem(f"no GPU to meet compute capability ≥ {wanted}", fix=fix)
    low = [g for g in gpus if g.compute_capability and (_cc_tuple(g.compute_capability) or (0, 0)) < threshold]
    unknown = [g for g in gpus if not g.compute_capability]
    data = {"required": wanted, "gpus": {g.index: g.compute_capability for g in gpus}}
    if low:
        return problem(
            ", ".join(f"GPU {g.index} ({g.name}) is {g.compute_capability}" for g in low) + f", below {wanted}",
            fix=fix,
            data=data,
        )
    if unknown:
        return warning(f"compute capability unknown for GPU {', '.join(str(g.index) for g in unknown)}", data=data)
    return ok(f"every GPU ≥ {wanted}", data=data)


@check("GATE004", area="gates", title="--min-gpu-memory: enough memory per GPU")
def min_gpu_memory(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --min-gpu-memory N, that every GPU has at least N GB of memory as sold: an "80GB"
    H100 meets 80 though NVML reports 79.6 GiB. The rule (gpudoctor.kb.gpu_specs):
    {memory_rule}.

    Why it matters: a model that does not fit fails with an out-of-memory error after minutes of loading.

    How to fix: run on GPUs with more memory, or shard the model.
    """
    wanted = ctx.options.get("min_gpu_memory")
    if wanted is None:
        return not_applicable("not requested")
    devices = _usable_devices(facts)
    fix = Fix(f"Run on GPUs with at least {wanted:g} GB each, or shard the model to fit.")
    if not devices:
        return problem(f"no GPU to meet ≥ {wanted:g} GB", fix=fix, evidence=[Ev.NVML, Ev.NVIDIA_SMI])
    verdicts = {d.label: memory_verdict(d.name, d.memory_mib, wanted) for d in devices}
    data = {
        "required_gb": wanted,
        "gpus_mib": {d.label: d.memory_mib for d in devices},
        "counted_gb": {label: v.counted_gb if v else None for label, v in verdicts.items()},
        "rule": memory_rule_text(),
    }
    low = [(d, v) for d in devices if (v := verdicts[d.label]) is not None and not v.meets]
    if low:
        return problem(
            ", ".join(f"{d.label} ({d.name}) has {_memory_words(v)}" for d, v in low)
            + f", below the {wanted:g} GB required",
            fix=fix,
            evidence=[Ev.NVML, Ev.NVIDIA_SMI],
            data=data,
        )
    if any(v is None for v in verdicts.values()):
        return warning("memory size unknown for some GPUs", data=data)
    counted = sorted({_memory_words(v) for v in verdicts.values() if v is not None})
    return ok(f"every GPU ≥ {wanted:g} GB ({'; '.join(counted)})", data=data)


def _memory_words(verdict: MemoryVerdict) -> str:
    """'79.6 GiB reported, counted as 80 GB marketed' or '39.4 GiB'."""
    if verdict.marketed and abs(verdict.counted_gb - verdict.reported_gib) >= 0.05:
        how = "marketed" if verdict.from_spec else "within the tolerance"
        return f"{verdict.reported_gib:.1f} GiB reported, counted as {verdict.counted_gb:g} GB ({how})"
    return f"{verdict.reported_gib:.1f} GiB"


# The rule has one home (gpudoctor.kb.gpu_specs); the explanation quotes it.
min_gpu_memory.func.__doc__ = (min_gpu_memory.func.__doc__ or "").replace(
    "{memory_rule}", "\n    ".join(textwrap.wrap(memory_rule_text(), 100))
)


@check("GATE005", area="gates", title="--min-driver: new enough driver")
def min_driver(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --min-driver VERSION, that the loaded NVIDIA driver is at least that version.

    Why it matters: features and CUDA versions need a minimum driver; a fleet with stragglers fails in
    ways that are hard to trace.

    How to fix: upgrade the driver on this machine.
    """
    wanted = ctx.options.get("min_driver")
    if wanted is None:
        return not_applicable("not requested")
    version = _loaded_driver(facts)
    fix = Fix(f"Install NVIDIA driver {wanted} or newer on this machine (the host, for a container).")
    if not version:
        return problem(f"no NVIDIA driver loaded (≥ {wanted} required)", fix=fix)
    have, need = kb.parse_driver_version(version), kb.parse_driver_version(wanted)
    if have is None or need is None:
        return warning(f"cannot compare driver {version} with {wanted}")
    if have >= need:
        return ok(f"driver {version} ≥ {wanted}", data={"driver": version, "required": wanted})
    return problem(
        f"driver {version} is older than the {wanted} required",
        fix=fix,
        data={"driver": version, "required": wanted},
    )


@check("GATE006", area="gates", title="--cuda: the driver runs this CUDA version")
def cuda_version(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: with --cuda X.Y, that the installed driver can run programs built with CUDA X.Y,
    natively or through minor-version compatibility (which passes with a warning).

    Why it matters: an image or wheel built for a newer CUDA than the driver supports fails at start-up
    with "CUDA driver version is insufficient for CUDA runtime version".

    How to fix: upgrade the driver to the version the finding names, or use a build for an older CUDA.
    """
    wanted = ctx.options.get("cuda")
    if wanted is None:
        return not_applicable("not requested")
    version = _loaded_driver(facts)
    if not version:
        return problem(
            f"no NVIDIA driver loaded to run CUDA {wanted}",
            fix=Fix(f"Install and load an NVIDIA driver that runs CUDA {wanted} (the host's, for a container)."),
        )
    verdict = driver_runs_cuda_release(version, wanted)
    data = {"driver": version, "cuda": wanted, "verdict": verdict.status, "needs_driver": verdict.needs_driver}
    if verdict.status == "native":
        return ok(f"driver {version} runs CUDA {wanted}", data=data)
    if verdict.status == "minor_version_compat":
        return warning(
            f"driver {version} runs CUDA {wanted} only through minor-version compatibility "
            f"(full support from {verdict.needs_driver})",
            data=data,
        )
    if verdict.status == "too_old":
        return problem(
            f"driver {version} cannot run CUDA {wanted}: needs ≥ {verdict.needs_driver}",
            fix=Fix(f"Upgrade the driver to {verdict.needs_driver} or newer, or use a build for an older CUDA."),
            data=data,
        )
    return warning(f"no compatibility data for CUDA {wanted}", data=data)
