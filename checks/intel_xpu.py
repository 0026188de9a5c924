"""Intel GPUs (XPU): on the bus, i915/xe, Level Zero, torch.xpu."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome, judged
from gpudoctor.words import counted
from gpudoctor_checks._frameworks import pip

if TYPE_CHECKING:
    from gpudoctor.facts.intel_model import IntelFacts, IntelGpu

# The xe driver is the one seen binding Battlemage (Arc B-Series) cards (accelerators.md §2 [RPI_PCIE_510]).
_XE_FIRST = re.compile(r"Battlemage|\bArc(?:\(TM\))?\s+B\d{3}|\[Arc B\d{3}", re.IGNORECASE)


def _label(gpu: IntelGpu) -> str:
    name = gpu.name or "Intel GPU"
    return f"{name} at {gpu.bus_id}" if gpu.bus_id else name


def _discrete(intel: IntelFacts) -> list[IntelGpu]:
    return [g for g in intel.gpus if g.discrete is True]


def _unbound(intel: IntelFacts, gpu: IntelGpu) -> bool:
    """No i915/xe drives this GPU: sysfs shows no driver bound, or no Intel GPU module is loaded at all."""
    from gpudoctor.facts.intel import INTEL_DRIVERS

    if gpu.kernel_driver in INTEL_DRIVERS:
        return False
    if intel.bus_scanned and "pci" in gpu.sources:
        return True
    return intel.kernel_modules_known and intel.kernel_driver is None


def _driver_fix(gpu: IntelGpu) -> Fix:
    module = "xe" if _XE_FIRST.search(gpu.name or "") else "i915"
    return Fix(
        f"Load the Intel GPU kernel driver ({module}) and read the kernel log for why it did not bind.",
        (f"sudo modprobe {module}", "sudo dmesg | grep -iE 'i915|xe ' | tail -n 20", "lsmod | grep -E '^(i915|xe) '"),
        needs_root=True,
    )


def _level_zero_fix() -> Fix:
    from gpudoctor.kb import intel_xpu as xpu_kb

    return Fix(
        "Install the Level Zero loader and Intel's Level Zero GPU driver (Ubuntu 24.04 names), then run sycl-ls "
        "again: the GPU must appear as a level_zero:gpu device.",
        (f"sudo apt-get install -y {' '.join(xpu_kb.level_zero_packages())}",),
        needs_root=True,
        url="https://packages.ubuntu.com/noble/libze-intel-gpu1",
    )


def _runtime_findings(intel: IntelFacts, discrete: list[IntelGpu]) -> list[Finding]:
    if intel.sycl_devices is None or intel.level_zero_gpu:
        return []
    opencl_only = [g for g in discrete if g.level_zero is False]
    if opencl_only:
        names = ", ".join(g.name or "Intel GPU" for g in opencl_only)
        message = f"{names}: listed by sycl-ls under OpenCL only; no Level Zero GPU device (its runtime is missing)"
    elif discrete:
        message = "sycl-ls lists no Level Zero GPU device: the Level Zero GPU runtime is missing or does not see it"
    else:
        return []
    return [Finding(Severity.WARNING, message, _level_zero_fix(), (Ev.SYCL_LS,), cause="intel-level-zero-missing")]


@check("XPU001", area="xpu", title="Intel GPU driver and Level Zero", vendor="intel")
def intel_driver(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: each discrete Intel GPU (Arc, Flex, Data Center GPU Max) on the PCI bus has the i915 or
    xe kernel driver bound, and `sycl-ls` lists it under Level Zero (`[level_zero:gpu]`, older oneAPI
    `[ext_oneapi_level_zero:gpu:N]`), not only under OpenCL.

    Why it matters: PyTorch's XPU backend and SYCL programs reach the GPU through the kernel driver and the
    Level Zero runtime. A GPU without a bound driver is invisible to everything; a GPU listed only under
    `[opencl:gpu]` means the Level Zero GPU driver is missing or cannot see it.

    How to fix: load the driver (`sudo modprobe xe` for Arc B-Series/Battlemage, `sudo modprobe i915` for the
    others) and read `sudo dmesg` for why it did not bind; install the Level Zero runtime (`sudo apt-get install
    -y libze1 libze-intel-gpu1` on Ubuntu 24.04), then check `sycl-ls` again. An integrated Intel GPU alone
    (a laptop's or desktop's iGPU) is noted, not judged.
    """
    intel = facts.intel
    if not intel.present:
        if intel.sycl_devices is not None and not any(d.device_type == "gpu" for d in intel.sycl_devices):
            return judged(
                [
                    Finding(
                        Severity.INFO,
                        "sycl-ls lists no GPU at all (CPU devices only): no Level Zero or OpenCL GPU driver sees one",
                        None,
                        (Ev.SYCL_LS,),
                    )
                ],
                {"sycl_devices": len(intel.sycl_devices)},
                "no Intel GPU",
            )
        return not_applicable("no Intel GPU on the bus or in any tool's output")
    discrete = _discrete(intel)
    data = {"gpus": [g.name for g in intel.gpus], "kernel_driver": intel.kernel_driver}
    findings: list[Finding] = []
    for gpu in discrete:
        if _unbound(intel, gpu):
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{_label(gpu)}: no Intel GPU kernel driver (i915 or xe) is bound to it",
                    _driver_fix(gpu),
                    (Ev.PCI_DEVICES, Ev.PROC_MODULES),
                )
            )
    findings.extend(_runtime_findings(intel, discrete))
    if not discrete:
        names = ", ".join(sorted({g.name or "Intel GPU" for g in intel.gpus}))
        findings.append(Finding(Severity.INFO, f"only an integrated or unidentified Intel GPU: {names}"))
    driver = f", driver {intel.kernel_driver}" if intel.kernel_driver else ""
    zero = ", Level Zero sees it" if intel.level_zero_gpu else ""
    return judged(findings, data, f"{counted(len(intel.gpus), 'Intel GPU')}{driver}{zero}")


@check("XPU002", area="xpu", title="PyTorch sees the Intel GPU", vendor="intel")
def torch_sees_intel_gpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a machine with a discrete Intel GPU, the installed PyTorch is an XPU build
    (`torch.xpu`, built in since PyTorch 2.5, wheels tagged `+xpu`) and `torch.xpu.is_available()` is True.

    Why it matters: a CUDA or CPU build of PyTorch never uses an Intel GPU; an XPU build whose
    `torch.xpu.is_available()` is False cannot reach the GPU through the driver and Level Zero.

    How to fix: install the XPU build from PyTorch's own index, `pip install torch torchvision torchaudio
    --index-url https://download.pytorch.org/whl/xpu`; when the build is right but no device is available,
    fix the driver and Level Zero runtime first (XPU001).
    """
    intel = facts.intel
    discrete = _discrete(intel)
    if not discrete:
        if intel.present:
            return not_applicable("no discrete Intel GPU known (an integrated one is optional for PyTorch)")
        return not_applicable("no Intel GPU")
    torch = facts.torch
    if not torch.version:
        return not_applicable("PyTorch not probed or not installed")
    names = ", ".join(sorted({g.name or "Intel GPU" for g in discrete}))
    data = {"torch": torch.version, "xpu_built": torch.xpu_built, "xpu_available": torch.xpu_available}
    evidence = (Ev.FRAMEWORK_TORCH,)
    if torch.xpu_available:
        count = len(torch.xpu_devices)
        seen = f"{counted(count, 'XPU device')}" if count else "torch.xpu is available"
        return ok(f"PyTorch {torch.version}: {seen}", data=data)
    xpu_build = torch.xpu_built is True or "+xpu" in torch.version
    if not xpu_build and (torch.xpu_built is False or torch.cuda or torch.hip or "+cpu" in torch.version):
        from gpudoctor.kb import intel_xpu as xpu_kb

        fix = Fix(
            f"Install PyTorch's XPU build (torch.xpu is built in since PyTorch {xpu_kb.torch_xpu_native_since()}).",
            (xpu_kb.torch_xpu_install_command(pip(torch.python)),),
            url="https://pytorch.org/docs/stable/notes/get_start_xpu.html",
        )
        message = f"PyTorch {torch.version} has no XPU support: it cannot use the {names}"
        finding = Finding(Severity.PROBLEM, message, fix, evidence, cause="torch-without-xpu")
        return judged([finding], data, message)
    if xpu_build and torch.xpu_available is False:
        message = f"PyTorch {torch.version} is an XPU build but torch.xpu.is_available() is False"
        finding = Finding(Severity.PROBLEM, message, _level_zero_fix(), evidence, cause="intel-level-zero-missing")
        return judged([finding], data, message)
    return not_applicable(f"PyTorch {torch.version}: whether it was built with XPU is not known", data)
