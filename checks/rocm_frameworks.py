"""Frameworks on AMD GPUs: ROCm builds of PyTorch/TensorFlow against the GPUs' gfx targets (ROCM020-039).

Knowledge: ``gpudoctor.kb.rocm_targets`` (gfx families, the targets PyTorch's ROCm wheels carry, the
HSA_OVERRIDE_GFX_VERSION workaround values; shared/reference/accelerators.md §1b-§1d) and
``gpudoctor.kb.rocm_wheels`` (the ROCm variants each torch release publishes, §1c).  TensorFlow's ROCm build is
AMD's ``tensorflow-rocm`` (from https://repo.radeon.com/rocm/manylinux since ROCm 6.1, PyPI before) or the
``rocm/tensorflow`` image (AMD's "Install TensorFlow for ROCm" pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import TorchFacts
from gpudoctor.facts.pci_accelerators import functions_of
from gpudoctor.kb import rocm_targets as targets_kb
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import pip

OVERRIDE = "HSA_OVERRIDE_GFX_VERSION"
TF_ROCM_DOC = "https://rocm.docs.amd.com/projects/radeon/en/docs-6.3/docs/install/native_linux/install-tensorflow.html"
OVERRIDE_DOC = "https://github.com/ROCm/legacy-rocm-build/issues/1797"
_AMD_EVIDENCE = (Ev.AMD_SMI, Ev.ROCM_SMI, Ev.ROCMINFO, Ev.KFD_TOPOLOGY, Ev.PCI_DEVICES)


@dataclass(frozen=True)
class AmdTarget:
    """One AMD GPU as the framework checks need it: what to call it, its gfx target, whether it is an iGPU."""

    label: str
    gfx: str | None  # bare target: "gfx90a"
    integrated: bool | None = None


def amd_targets(facts: Facts) -> list[AmdTarget]:
    """The AMD GPUs with their gfx targets: the AMD tools' (KFD, amd-smi, rocm-smi, rocminfo, the bus), else
    what a ROCm PyTorch says of its devices (probe ``gcnArchName``, a collect_env report's GPU lines)."""
    found = [
        AmdTarget(
            gpu.name or (f"AMD GPU {gpu.device_id}" if gpu.device_id else "AMD GPU"),
            targets_kb.normalize_gfx(gpu.gfx_target),
            gpu.integrated,
        )
        for gpu in facts.amd.gpus
    ]
    if found:
        return found
    torch = facts.torch
    if torch.hip:
        for device in torch.devices:
            gfx = targets_kb.normalize_gfx(device.arch_name)
            if gfx:
                found.append(AmdTarget(device.name or "AMD GPU", gfx))
        report = facts.collect_env
        if not found and report is not None:
            names = [name for name in report.gpu_names if targets_kb.normalize_gfx(name)]
            found = [AmdTarget(name.split(" (", 1)[0], targets_kb.normalize_gfx(name)) for name in names]
        if not found and torch.is_available:
            # A ROCm build that says a GPU is available has found an AMD GPU, target unknown ("Device 66a1").
            names = [d.name for d in torch.devices if d.name] or (report.gpu_names if report is not None else [])
            found = [AmdTarget(name, None) for name in names] or [AmdTarget("an AMD GPU PyTorch sees", None)]
    return found


def amd_present(facts: Facts, gpus: list[AmdTarget]) -> bool:
    return bool(gpus) or bool(functions_of(facts.pci_accelerators, "amd"))


def nvidia_present(facts: Facts) -> bool:
    return bool(facts.gpus) or bool(functions_of(facts.pci_accelerators, "nvidia"))


def _names(gpus: list[AmdTarget]) -> str:
    labels = sorted({g.label + (f" ({g.gfx})" if g.gfx else "") for g in gpus})
    return ", ".join(labels) if labels else "an AMD GPU on the PCI bus"


def rocm_torch_fix(facts: Facts, torch: TorchFacts, gpus: list[AmdTarget]) -> Fix:
    """Replace the installed torch with the ROCm wheel from the newest index not newer than the installed ROCm."""
    from gpudoctor.kb import rocm_wheels

    rocm = facts.amd.rocm.version
    choice = rocm_wheels.newest_variant_for(rocm, None)
    if choice is None:
        where = f"ROCm {rocm} is older than every ROCm build PyTorch publishes" if rocm else "no ROCm index is known"
        return Fix(f"Install a ROCm build of PyTorch: {where}; upgrade ROCm first (see ROCM001).", ())
    release, variant = choice
    summary = f"Install PyTorch's ROCm build from the {variant} index (torch {release} publishes it)"
    summary += (
        f", the newest not newer than the installed ROCm {rocm}."
        if rocm
        else "; the installed ROCm version is not known: use the index not newer than it."
    )
    missing = sorted({g.gfx for g in gpus if g.gfx and targets_kb.in_torch_wheels(g.gfx, variant) is False})
    for gfx in missing:
        value = targets_kb.override_for(gfx)
        workaround = f"; {OVERRIDE}={value} is the workaround (not support)" if value else ""
        summary += f" Those wheels carry no code for {gfx}{workaround}."
    summary += " Reinstall torchvision/torchaudio from the same index if you use them."
    commands = (
        f"{pip(torch.python)} uninstall -y torch torchvision torchaudio",
        f"{pip(torch.python)} install torch --index-url {rocm_wheels.index_url(variant)}",
    )
    return Fix(summary, commands, url=rocm_wheels.index_url(variant))


def _built_targets(torch: TorchFacts) -> tuple[frozenset[str] | None, str]:
    """The gfx targets this ROCm torch carries and where that was read: torch's own arch list, else the
    knowledge base's list for its wheel variant ("+rocm6.2" -> rocm6.2), else (None, why)."""
    listed = {t for t in (targets_kb.normalize_gfx(a) for a in torch.arch_list) if t}
    if torch.arch_list_known and listed:
        return frozenset(listed), "torch.cuda.get_arch_list()"
    tag = torch.local_tag or ""
    if tag.startswith("rocm"):
        known = targets_kb.torch_wheel_targets(tag)
        if known is not None:
            return frozenset(known), f"PyTorch's {tag} wheels"
        return None, f"which targets PyTorch's {tag} wheels carry is not in the knowledge base"
    return None, "this is not a download.pytorch.org ROCm wheel; its target list is not known"


def _missing_target_finding(torch: TorchFacts, gpu: AmdTarget, built: frozenset[str], where: str) -> Finding:
    gfx = gpu.gfx or ""
    value = targets_kb.override_for(gfx)
    spoofed = targets_kb.override_target(value) if value else None
    listed = ", ".join(sorted(built, key=lambda t: (len(t), t)))
    message = f"PyTorch {torch.version} has no code for {gfx} ({gpu.label}): built for {listed} ({where})"
    if value and spoofed in built:
        fix = Fix(
            f"Workaround, not support: {OVERRIDE}={value} makes ROCm present this {targets_kb.target_family(gfx)} GPU "
            f"as {spoofed}, whose code this build has (process-wide, Linux only, within one family). Supported: a "
            "GPU whose target the build lists, or a source build with PYTORCH_ROCM_ARCH naming this target.",
            (f"export {OVERRIDE}={value}", "python -c 'import torch; print(torch.cuda.is_available())'"),
            url=OVERRIDE_DOC,
        )
    else:
        fix = Fix(
            "No workaround is known for this target: build PyTorch from source with PYTORCH_ROCM_ARCH naming it, "
            "or use a GPU whose target the build lists.",
            (),
            url="https://github.com/pytorch/pytorch#from-source",
        )
    return Finding(Severity.PROBLEM, message, fix, (Ev.FRAMEWORK_TORCH,), cause="rocm-gfx-not-in-build")


@check("ROCM020", area="rocm", title="PyTorch build fits the AMD GPUs", vendor="amd")
def torch_build_fits_amd(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a machine whose GPUs are AMD, that the installed PyTorch is a ROCm build
    (`torch.version.hip` set) and that it carries code for each GPU's gfx target (gfx90a, gfx1100 ...), read
    from `torch.cuda.get_arch_list()` or, for a download.pytorch.org wheel, the targets PyTorch compiles its
    ROCm wheels for.

    Why it matters: a CUDA or CPU build of PyTorch never uses an AMD GPU. A ROCm build without code for the
    GPU's target aborts at first use with `hipErrorNoBinaryForGpu` or fails with `invalid device function`.

    How to fix: install torch from the ROCm index that matches the installed ROCm
    (`pip install torch --index-url https://download.pytorch.org/whl/rocmX.Y`). For an RDNA2/RDNA3 Radeon whose
    sibling target the build has, `HSA_OVERRIDE_GFX_VERSION` (10.3.0 / 11.0.0) is a workaround, not support;
    otherwise build from source for the target or use a supported GPU.
    """
    gpus = amd_targets(facts)
    if not amd_present(facts, gpus):
        return not_applicable("no AMD GPU")
    torch = facts.torch
    if not torch.version:
        return not_applicable("PyTorch is not installed in the target Python (or was not probed)")
    data = {"torch": torch.version, "hip": torch.hip, "gfx": sorted({g.gfx for g in gpus if g.gfx})}
    if not torch.hip and (torch.cuda or torch.cpu_only):
        if nvidia_present(facts):
            return not_applicable("the NVIDIA checks judge this non-ROCm PyTorch build", data)
        build = f"a CUDA {torch.cuda} build" if torch.cuda else "a CPU-only build"
        integrated_only = bool(gpus) and all(g.integrated is True for g in gpus)
        severity = Severity.WARNING if integrated_only else Severity.PROBLEM
        message = f"PyTorch {torch.version} is {build}: it cannot use {_names(gpus)}"
        if integrated_only:
            message += " (an integrated GPU: ROCm's support for it is limited)"
        finding = Finding(
            severity,
            message,
            rocm_torch_fix(facts, torch, gpus),
            (Ev.FRAMEWORK_TORCH, *_AMD_EVIDENCE),
            cause="rocm-torch-not-rocm-build",
        )
        return Outcome(f"PyTorch {torch.version} is not a ROCm build", [finding], data)
    if not torch.hip:
        return not_applicable("which build of PyTorch this is is not known", data)
    built, where = _built_targets(torch)
    with_target = [g for g in gpus if g.gfx]
    if not with_target:
        return ok(f"ROCm build (HIP {torch.hip}); the GPUs' gfx targets are not known", data)
    if built is None:
        return ok(
            f"ROCm build (HIP {torch.hip}) for {_names(with_target)}",
            data,
            [
                Finding(
                    Severity.INFO,
                    f"whether it carries code for them is not known: {where}",
                    None,
                    (Ev.FRAMEWORK_TORCH,),
                )
            ],
        )
    findings = []
    for gfx in sorted({g.gfx for g in with_target if g.gfx and g.gfx not in built}):
        gpu = next(g for g in with_target if g.gfx == gfx)
        findings.append(_missing_target_finding(torch, gpu, built, where))
    if findings:
        return Outcome(f"ROCm build (HIP {torch.hip}) lacks code for some GPUs", findings, data)
    return ok(f"ROCm build (HIP {torch.hip}) carries code for {_names(with_target)} ({where})", data)


@check("ROCM021", area="rocm", title="HSA_OVERRIDE_GFX_VERSION", vendor="amd")
def gfx_override(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether `HSA_OVERRIDE_GFX_VERSION` is set, which gfx target it makes ROCm present
    (10.3.0 -> gfx1030) next to each GPU's real target, and whether that crosses GPU families.

    Why it matters: the variable makes ROCm load code built for another chip. Within one family (an RDNA2
    RX 6600, gfx1032, as gfx1030) it is a known workaround for consumer cards missing from ROCm builds; across
    families (an RDNA1 card as gfx1030) it has led to `hipErrorNoBinaryForGpu` and display hangs. It applies to
    every GPU of the process, and has no effect with ROCm on Windows.

    How to fix: keep it only for a GPU of the same family as the target it names; unset it
    (`unset HSA_OVERRIDE_GFX_VERSION`) for a GPU the installed build supports natively.
    """
    value = facts.env.get(OVERRIDE)
    if not facts.env.collected and value is None:
        return not_applicable("the environment was not collected")
    if value is None:
        return not_applicable(f"{OVERRIDE} is not set")
    gpus = amd_targets(facts)
    spoofed = targets_kb.override_target(value)
    data = {"value": value, "presents_as": spoofed, "gfx": sorted({g.gfx for g in gpus if g.gfx})}
    unset = Fix(f"Unset {OVERRIDE} so ROCm uses the GPU's own target.", (f"unset {OVERRIDE}",))
    if spoofed is None:
        message = f"{OVERRIDE}={value!r} is not a MAJOR.MINOR.STEPPING value such as 10.3.0"
        return Outcome("override set to an invalid value", [Finding(Severity.WARNING, message, unset, (Ev.ENV,))], data)
    findings: list[Finding] = []
    if not gpus:
        findings.append(
            Finding(
                Severity.INFO,
                f"{OVERRIDE}={value} (as {spoofed}) is set, but no AMD GPU target is known",
                None,
                (Ev.ENV,),
            )
        )
    python = facts.torch.python
    if python is not None and python.os == "windows":
        findings.append(Finding(Severity.INFO, f"{OVERRIDE} has no effect with ROCm on Windows", None, (Ev.ENV,)))
    for gfx in sorted({g.gfx or "" for g in gpus}):
        label = ", ".join(sorted({g.label for g in gpus if (g.gfx or "") == gfx}))
        if not gfx:
            findings.append(
                Finding(
                    Severity.INFO, f"{label} is presented as {spoofed}; its real target is not known", None, (Ev.ENV,)
                )
            )
        elif gfx == spoofed:
            findings.append(
                Finding(
                    Severity.INFO,
                    f"{label} already is {gfx}: {OVERRIDE}={value} changes nothing for it",
                    unset,
                    (Ev.ENV,),
                )
            )
        elif targets_kb.same_family(gfx, spoofed) is False:
            real, fake = targets_kb.target_family(gfx), targets_kb.target_family(spoofed)
            message = (
                f"{OVERRIDE}={value} presents {label} ({gfx}, {real}) as {spoofed} ({fake}): "
                "across GPU families, code for the other chip may not run"
            )
            findings.append(Finding(Severity.WARNING, message, unset, (Ev.ENV,), cause="rocm-gfx-not-in-build"))
        else:
            message = (
                f"{OVERRIDE}={value}: ROCm presents {label} ({gfx}) as {spoofed}, a workaround (process-wide), "
                "not support"
            )
            findings.append(Finding(Severity.INFO, message, None, (Ev.ENV,)))
    summary = f"{OVERRIDE}={value}: presented as {spoofed}"
    return Outcome(summary, findings, data)


@check("ROCM022", area="rocm", title="TensorFlow build fits the AMD GPUs", vendor="amd")
def tensorflow_on_amd(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a machine whose GPUs are AMD, that the installed TensorFlow is a ROCm build
    (`tf.sysconfig.get_build_info()["is_rocm_build"]`, or the `tensorflow-rocm` distribution).

    Why it matters: the `tensorflow` package from PyPI is built for CUDA (or the CPU); it never uses an AMD GPU.

    How to fix: install AMD's ROCm build: the `tensorflow-rocm` wheels (from https://repo.radeon.com/rocm/manylinux
    since ROCm 6.1, PyPI before) matching the installed ROCm, or run AMD's `rocm/tensorflow` container image.
    """
    gpus = amd_targets(facts)
    if not amd_present(facts, gpus):
        return not_applicable("no AMD GPU")
    tf = facts.tensorflow
    if not tf.version:
        return not_applicable("TensorFlow is not installed in the target Python (or was not probed)")
    distribution = (tf.distribution or "").lower().replace("_", "-")
    rocm_build = tf.rocm_build is True or distribution.startswith("tensorflow-rocm")
    data = {"tensorflow": tf.version, "distribution": tf.distribution, "rocm_build": rocm_build}
    if rocm_build:
        rocm = tf.build_rocm
        seen = f"; sees {len(tf.gpus)} GPU(s)" if tf.gpus_listed else ""
        return ok(f"ROCm build of TensorFlow {tf.version}" + (f" (ROCm {rocm})" if rocm else "") + seen, data)
    if nvidia_present(facts):
        return not_applicable("the NVIDIA checks judge this TensorFlow build", data)
    if tf.built_with_cuda is None and tf.rocm_build is None and not distribution:
        return not_applicable("which build of TensorFlow this is is not known", data)
    build = "a CUDA build" if tf.built_with_cuda else "not a ROCm build"
    fix = Fix(
        "Install AMD's ROCm build of TensorFlow: the tensorflow-rocm wheel matching the installed ROCm (from "
        "https://repo.radeon.com/rocm/manylinux since ROCm 6.1, PyPI before), or use AMD's rocm/tensorflow image.",
        ("docker pull rocm/tensorflow:latest",),
        url=TF_ROCM_DOC,
    )
    finding = Finding(
        Severity.WARNING,
        f"TensorFlow {tf.version} ({tf.distribution or 'tensorflow'}) is {build}: it cannot use {_names(gpus)}",
        fix,
        (Ev.FRAMEWORK_TENSORFLOW, *_AMD_EVIDENCE),
        cause="rocm-tensorflow-not-rocm-build",
    )
    return Outcome(f"TensorFlow {tf.version} is not a ROCm build", [finding], data)


_STATUS_SEVERITY = {"deprecated": Severity.WARNING, "unsupported": Severity.WARNING, "not listed": Severity.WARNING}


@check("ROCM023", area="rocm", title="AMD GPU supported by this ROCm release", vendor="amd")
def gpu_supported_by_rocm(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: each AMD GPU's gfx target against the supported-GPU list of the installed ROCm release
    (or the ROCm the PyTorch build was made with), where gpudoctor's knowledge base has that release's list
    (ROCm 6.2.2's Linux system requirements; RX 9000 / gfx1200-gfx1201 from 6.4.1's).

    Why it matters: ROCm's libraries ship code for the targets AMD supports. A GPU marked deprecated loses
    support in a coming release; one left out of the list (many consumer Radeons, gfx1031/gfx1032) runs only
    with a workaround or not at all.

    How to fix: use a GPU from the release's supported list, a ROCm release that supports the GPU, or, for an
    RDNA2/RDNA3 Radeon, the HSA_OVERRIDE_GFX_VERSION workaround (see ROCM020/ROCM021).
    """
    gpus = [g for g in amd_targets(facts) if g.gfx]
    if not gpus:
        return not_applicable("no AMD GPU with a known gfx target")
    rocm, where = facts.amd.rocm.version, "installed ROCm"
    if not rocm and facts.torch.hip:
        rocm, where = facts.torch.hip, "ROCm the PyTorch build was made with"
    if not rocm:
        return not_applicable("the ROCm version is not known")
    statuses: dict[str, str | None] = {}
    findings: list[Finding] = []
    release = ".".join(rocm.split(".")[:2])
    for gfx in sorted({g.gfx for g in gpus if g.gfx}):
        status = statuses[gfx] = targets_kb.support_in_rocm(gfx, rocm)
        severity = _STATUS_SEVERITY.get(status or "")
        if severity is None:
            continue
        label = ", ".join(sorted({g.label for g in gpus if g.gfx == gfx}))
        value = targets_kb.override_for(gfx)
        hint = f"; {OVERRIDE}={value} is the known workaround" if value and status == "not listed" else ""
        message = f"{label} ({gfx}) is {status} in ROCm {release}'s supported GPUs ({where}){hint}"
        findings.append(Finding(severity, message, None, _AMD_EVIDENCE))
    data = {"rocm": rocm, "status": statuses}
    said = [f"{gfx} {status}" for gfx, status in statuses.items() if status]
    if not said:
        return ok(f"ROCm {release}: the knowledge base has no supported-GPU list for this release", data)
    return Outcome(f"ROCm {release}: {', '.join(said)}", findings, data)
