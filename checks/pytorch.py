"""PyTorch checks: does the torch of the target Python really use the GPU, and if not, the command that fixes it.

Facts come from the torch probe run inside the target Python, or from a pasted
``python -m torch.utils.collect_env`` report; the checks read both the same way.
"""

from __future__ import annotations

import re

from gpudoctor import kb
from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.facts.accelerators import other_vendors, vendor_words
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.predicates import comparable_driver, cuda_major_minor, driver_older
from gpudoctor.kb.driver_branches import legacy_branch_architecture
from gpudoctor.kb.torch_wheels import TORCH_OLDEST_CAPABILITY
from gpudoctor.kb.versions import version_key
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import (
    capabilities,
    choice_data,
    driver_unknown,
    driver_usable,
    driver_version,
    evidence_names,
    gpu_check_commands,
    gpu_names,
    gpus_present,
    gpus_unknown,
    local_install_note,
    os_and_machine,
    probe_status_outcome,
    python_words,
    torch_origin_words,
    torch_wheel_fix,
)
from gpudoctor_checks._pytorch_causes import cuda_init_cause
from gpudoctor_checks._pytorch_common import describe_torch, gpu_names_for, one_line, skip_unless_imported


@check("TORCH001", area="pytorch", title="PyTorch imports in the target Python")
def torch_imports(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that `import torch` works in the target Python (`--python`, else the active virtual or
    conda environment, else the Python gpudoctor runs in), in a subprocess with a timeout. Reports the
    version, the build (CUDA, ROCm or CPU-only), cuDNN, NCCL and where torch was installed from.

    Why it matters: an import that fails, hangs or crashes is the first thing to fix; its error text
    usually names the cause (a missing or shadowed CUDA library, a broken install).

    How to fix: follow the finding: reinstall torch into that environment, or fix LD_LIBRARY_PATH when a
    system CUDA shadows the pip nvidia-* libraries.
    """
    torch = facts.torch
    failed = probe_status_outcome("torch", torch)
    if failed is not None:
        return failed
    data = {
        "version": torch.version,
        "cuda": torch.cuda,
        "hip": torch.hip,
        "cudnn": torch.cudnn,
        "nccl": torch.nccl,
        "python": torch.python.executable if torch.python else None,
        "python_version": torch.python.version if torch.python else None,
        "source": torch.source,
        "installer": torch.origin.installer,
        "index_hint": torch.origin.index_hint,
        "is_available": torch.is_available,
        "device_count": torch.device_count,
        "arch_list": torch.arch_list if torch.arch_list_known else None,
        "import_s": torch.run.duration_s,
    }
    extras = [
        f"cuDNN {torch.cudnn}" if torch.cudnn else None,
        f"NCCL {torch.nccl}" if torch.nccl else None,
        torch_origin_words(torch),
    ]
    where = "in a pasted collect_env report" if torch.source == "collect_env" else f"in {python_words(torch.python)}"
    summary = f"{describe_torch(torch)} {where}"
    extra = ", ".join(e for e in extras if e)
    note = local_install_note(facts, torch)
    return ok(summary + (f"; {extra}" if extra else ""), data, [note] if note else None)


@check("TORCH002", area="pytorch", title="PyTorch is a GPU build where there is a GPU")
def torch_build_matches(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that a machine with an NVIDIA GPU has a CUDA build of PyTorch, not a CPU-only wheel
    (`+cpu`, the default from some mirrors and on Windows/macOS PyPI, or conda's `cpuonly`) or a ROCm one.

    Why it matters: a CPU-only build imports fine and trains, just tens of times slower:
    `torch.cuda.is_available()` is False and `.cuda()` raises "Torch not compiled with CUDA enabled".

    How to fix: uninstall torch and install it from the PyTorch index chosen for this driver, GPU and
    Python; the finding prints the exact commands (`pip install "torch==X.Y.*" --index-url
    https://download.pytorch.org/whl/cuXYZ`).
    """
    torch = facts.torch
    skipped = skip_unless_imported(torch)
    if skipped is not None:
        return skipped
    data: dict[str, object] = {
        "version": torch.version,
        "cuda": torch.cuda,
        "hip": torch.hip,
        "cpu_only": torch.cpu_only,
    }
    if torch.cuda:
        return ok(f"{describe_torch(torch)}", data)
    if "apple" in facts.vendors_in_evidence and facts.apple.platform is not None and not gpus_present(facts):
        return not_applicable("macOS: PyTorch has no CUDA builds for macOS (a Mac's GPU is used through MPS)", data)
    others = other_vendors(facts.accelerators)
    if others and not gpus_present(facts):
        # An AMD, Intel or Apple GPU, or a TPU, and no NVIDIA one: the vendor's own checks say which build fits.
        return not_applicable(
            f"{describe_torch(torch)}; this machine's accelerators are {vendor_words(others)}'s: their own "
            "checks judge the build",
            data,
        )
    unknown = gpus_unknown(facts)
    if unknown is not None and not (torch.hip or torch.xpu_built):
        # Unknown is not fine: a CPU-only build where a GPU may be is the commonest reason CUDA is "not available".
        message = (
            f"torch {torch.version} is a CPU-only build; whether this machine has an NVIDIA GPU is not known "
            f"({unknown}): if it has one, nothing runs on it"
        )
        fix, choice = torch_wheel_fix(
            facts, torch, "If it has a GPU, replace it with a CUDA build.", uninstall_first=True
        )
        data["fix_choice"] = choice_data(choice)
        finding = Finding(Severity.WARNING, message, fix, evidence_names("torch", torch), cause="torch-cpu-build")
        return Outcome(message, [finding], data)
    if unknown is not None:
        return not_applicable(
            f"{describe_torch(torch)}; whether this machine has an NVIDIA GPU is not known: {unknown}", data
        )
    if not gpus_present(facts):
        return ok(
            f"{describe_torch(torch)}; no NVIDIA GPU on the PCI bus, so the CPU is what this machine can use", data
        )
    if torch.python is not None and torch.python.os == "macos":
        return not_applicable("macOS: PyTorch has no CUDA builds for macOS (it uses MPS)", data)
    build = "a ROCm build (for AMD GPUs)" if torch.hip else "a CPU-only build"
    build = "an XPU build (for Intel GPUs)" if torch.xpu_built else build
    message = f"torch {torch.version} is {build}, but this machine has {gpu_names(facts)}: nothing will run on the GPU"
    conda_cpuonly = facts.collect_env is not None and "cpuonly" in facts.collect_env.conda_packages
    if conda_cpuonly:
        message += " (conda's `cpuonly` package is installed and forces CPU builds)"
    fix, choice = torch_wheel_fix(facts, torch, "Replace it with a CUDA build.", uninstall_first=True)
    data["fix_choice"] = choice_data(choice)
    evidence = evidence_names("torch", torch)
    cause = "" if torch.hip or torch.xpu_built else "torch-cpu-build"
    return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause=cause)], data)


@check("TORCH003", area="pytorch", title="The driver can run PyTorch's CUDA")
def torch_driver(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that the NVIDIA driver is new enough for the CUDA version this torch was built with.
    PyTorch wheels bundle their CUDA runtime, so they need only a driver at or above the minor-version
    compatibility floor of that CUDA major (CUDA 11.x ≥ 450.80.02, 12.x ≥ 525.60.13, 13.x ≥ 580.65.06 on
    Linux); below the CUDA release's own driver they run with minor-version compatibility.

    Why it matters: with an older driver CUDA initialisation fails: "The NVIDIA driver on your system is
    too old (found version 11040)" or "CUDA driver version is insufficient for CUDA runtime version", and
    `torch.cuda.is_available()` is False.

    How to fix: upgrade the driver to at least the version named, or install the newest torch wheel this
    driver can run (the finding prints its pip command).
    """
    torch = facts.torch
    skipped = skip_unless_imported(torch, cuda_build=True)
    if skipped is not None:
        return skipped
    driver = driver_version(facts)
    unknown = driver_unknown(facts)
    if not driver and unknown is not None:
        return not_applicable(f"torch needs CUDA {torch.cuda}; the driver is not known ({unknown.words()})")
    if not driver or not (driver_usable(facts) or torch.source == "collect_env"):
        return not_applicable(f"torch needs CUDA {torch.cuda}; no loaded NVIDIA driver to compare (see DRV001)")
    if not comparable_driver(driver):
        return not_applicable(
            f"torch needs CUDA {torch.cuda}; driver version {driver} is not an NVIDIA display-driver release "
            "(macOS's CUDA driver, or Jetson's L4T), so it cannot be compared"
        )
    os_name, _ = os_and_machine(torch.python)
    floor = kb.wheel_driver_floor(torch.cuda, os_name)
    cuda_mm = cuda_major_minor(torch.cuda)
    native = kb.min_driver_for_cuda(cuda_mm) if cuda_mm else None
    data: dict[str, object] = {
        "torch_cuda": torch.cuda,
        "driver": driver,
        "driver_floor": floor,
        "driver_native": native,
        "driver_cuda_max": facts.driver.cuda_max,
    }
    too_old_text = (
        torch.cuda_init_error
        if torch.cuda_init_error and re.search(r"too old|insufficient", torch.cuda_init_error, re.I)
        else None
    )
    if (floor and driver_older(driver, floor)) or too_old_text:
        supports = f", which supports CUDA {facts.driver.cuda_max}" if facts.driver.cuda_max else ""
        message = (
            f"torch {torch.version} is built for CUDA {torch.cuda} and needs driver ≥ {floor or native}; "
            f"this driver is {driver}{supports}"
        )
        if too_old_text:
            message += f'. torch says: "{one_line(too_old_text)}"'
        fix, choice = torch_wheel_fix(
            facts,
            torch,
            f"Upgrade the driver to ≥ {native or floor} (needs root), or install the newest torch this driver runs.",
            uninstall_first=True,
        )
        data["fix_choice"] = choice_data(choice)
        other_causes: tuple[str, ...] = ("driver-too-old",)
        legacy = legacy_branch_architecture(driver)
        if legacy is not None and version_key(legacy[1]) < version_key(TORCH_OLDEST_CAPABILITY):
            # Nobody stays on such a branch by choice: the GPU is most likely one no PyTorch build supports.
            message += (
                f". {driver} is a legacy branch, the last for {legacy[0]} GPUs: if this GPU needs it, no "
                f"PyTorch build supports it (PyTorch needs compute capability ≥ {TORCH_OLDEST_CAPABILITY})"
            )
            other_causes = ("torch-arch-unsupported", "driver-too-old")
        finding = Finding(
            Severity.PROBLEM,
            message,
            fix,
            evidence_names("torch", torch),
            cause="torch-cuda-too-new",
            other_causes=other_causes,
        )
        return Outcome(message, [finding], data)
    if native and driver_older(driver, native):
        note = (
            f"driver {driver} runs CUDA {torch.cuda} through minor-version compatibility (full support from "
            f"{native}): fine for PyTorch, but PTX from newer toolkits cannot be JIT-compiled"
        )
        return ok(
            f"driver {driver} runs torch's CUDA {torch.cuda}",
            data,
            [Finding(Severity.INFO, note, None, evidence_names("torch", torch))],
        )
    return ok(f"driver {driver} runs torch's CUDA {torch.cuda}", data)


@check("TORCH004", area="pytorch", title="PyTorch has kernels for this GPU's architecture")
def torch_arch(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that every GPU's compute capability is covered by the architectures the torch
    wheel was compiled for (`torch.cuda.get_arch_list()`; for a pasted report, its warning or the knowledge
    base): a cubin of the same major with an equal or lower minor (sm_86 runs on 8.9), or PTX at or below
    the GPU's capability (JIT-compiled at start-up).

    When neither the evidence nor the knowledge base knows the wheel's architecture list, the check says
    that it cannot tell (and how to print the list); it never calls that fine.

    Why it matters: without a kernel image for the GPU, `is_available()` can still be True but every CUDA
    operation fails with "no kernel image is available for execution on the device". New GPUs need new
    wheels (Blackwell sm_100/sm_120 need cu128 or newer, torch ≥ 2.7) and new wheels drop old GPUs (cu128+
    drop Maxwell and Pascal; CUDA 13 builds start at Turing 7.5).

    How to fix: install a wheel whose arch list covers the GPU; the finding prints the pip command with the
    right --index-url (e.g. cu126 for Pascal, cu128 or newer for Blackwell).
    """
    torch = facts.torch
    skipped = skip_unless_imported(torch, cuda_build=True)
    if skipped is not None:
        return skipped
    ccs = capabilities(facts, torch.devices)
    if torch.unsupported_capability and torch.unsupported_capability not in ccs:
        ccs.append(torch.unsupported_capability)
    if not ccs:
        unknown = gpus_unknown(facts)
        where = f" (whether there is one is not known: {unknown})" if unknown else ""
        return not_applicable(f"no GPU with a known compute capability to compare{where}")
    os_name, machine = os_and_machine(torch.python)
    arch_list: list[str] = list(torch.arch_list)
    arch_source: str | None = "torch.cuda.get_arch_list()"
    if torch.source == "collect_env":
        arch_source = "the report's warning"
    if not (torch.arch_list_known and arch_list):
        variant = kb.torch_variant(torch.version, torch.local_tag)
        known = variant.arch_list_for(os_name, machine) if variant else None
        arch_list, arch_source = (list(known), "knowledge base") if known else ([], None)
    data: dict[str, object] = {"compute_capabilities": ccs, "arch_list": arch_list, "arch_list_source": arch_source}
    if not arch_list:
        # Not known is not fine: an old or unusual wheel may well lack this GPU's kernels.
        sms = "sm_" + ", sm_".join(c.replace(".", "") for c in ccs)
        return not_applicable(
            f"whether torch {torch.version} has kernels for {sms} is not known: its architecture list is neither in "
            'the evidence nor in the knowledge base (`python -c "import torch; print(torch.cuda.get_arch_list())"` '
            "prints it)",
            data,
        )
    uncovered, jit = [], []
    for cc in ccs:
        coverage = kb.arch_list_covers(arch_list, cc)
        if coverage.status == "none":
            uncovered.append(cc)
        elif coverage.status == "ptx":
            jit.append((cc, coverage.via))
    listing = " ".join(arch_list)
    if uncovered:
        sms = ", ".join(f"sm_{c.replace('.', '')}" for c in uncovered)
        message = (
            f"torch {torch.version} has no kernels for {sms} ({gpu_names_for(facts, torch, uncovered)}): "
            f'it was built for {listing}; CUDA operations fail with "no kernel image is available"'
        )
        fix, choice = torch_wheel_fix(facts, torch, f"Install a torch build that includes {sms}.", uninstall_first=True)
        data["fix_choice"] = choice_data(choice)
        finding = Finding(
            Severity.PROBLEM, message, fix, evidence_names("torch", torch), cause="torch-arch-unsupported"
        )
        return Outcome(message, [finding], data)
    findings = [
        Finding(
            Severity.INFO,
            f"sm_{cc.replace('.', '')} runs by JIT-compiling PTX ({via}): the first "
            "start is slow and some kernels may be missing",
            None,
            evidence_names("torch", torch),
        )
        for cc, via in jit
    ]
    return ok(
        f"kernels for every GPU (sm_{', sm_'.join(c.replace('.', '') for c in ccs)}) in {listing}", data, findings
    )


@check("TORCH005", area="pytorch", title="PyTorch initialises CUDA")
def torch_cuda_init(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that a CUDA build of torch can initialise CUDA (`torch.cuda.is_available()`), and
    if not, the verbatim error CUDA gave, mapped to its cause: no driver loaded, driver too old, Error 802
    (NVSwitch system without fabric manager), Error 804 (forward-compatibility libraries on a GPU that
    doesn't support them), CUDA unknown error (nvidia_uvm not loaded, often after suspend), no device
    (CUDA_VISIBLE_DEVICES, a container started without GPUs), all devices busy (exclusive compute mode).

    Why it matters: torch falls back to the CPU silently when CUDA can't initialise. Unknown is not fine: a
    CUDA build that cannot reach CUDA, where nothing in the evidence says whether the machine has an NVIDIA
    GPU (a pasted report whose nvidia-smi lines say "Could not collect"), is a warning naming the commands that
    settle it; only a PCI scan that shows no NVIDIA GPU makes it expected.

    How to fix: follow the finding; each cause has its own fix.
    """
    torch = facts.torch
    skipped = skip_unless_imported(torch, cuda_build=True)
    if skipped is not None:
        return skipped
    data = {
        "is_available": torch.is_available,
        "device_count": torch.device_count,
        "devices": [
            {
                "index": d.index,
                "name": d.name,
                "compute_capability": d.compute_capability,
                "memory_total_mib": d.memory_total_mib,
            }
            for d in torch.devices
        ],
        "cuda_init_error": torch.cuda_init_error,
        "driver_cuda": torch.driver_cuda,
    }
    if torch.is_available:
        count = torch.device_count if torch.device_count is not None else len(torch.devices) or len(facts.gpus)
        names = ", ".join(d.name for d in torch.devices if d.name) or (gpu_names(facts) if facts.gpus else "")
        return ok(f"CUDA available: {count} device{'s' if count != 1 else ''}" + (f" ({names})" if names else ""), data)
    if torch.is_available is None:
        return not_applicable("whether CUDA initialised is not known: the evidence does not say", data)
    error = torch.cuda_init_error
    evidence = evidence_names("torch", torch)
    if not error and facts.gpu_census.none_on_bus:
        return ok("CUDA not available: there is no NVIDIA GPU on the PCI bus", data)
    unknown = gpus_unknown(facts)
    if unknown is not None and not error:
        # A CUDA build that cannot reach CUDA, on a machine that may or may not have a GPU: not fine, not proven
        # broken.  Say what is unknown and what settles it.
        message = (
            f"torch.cuda.is_available() is False on a CUDA {torch.cuda} build, and whether this machine has an "
            f"NVIDIA GPU is not known: {unknown}"
        )
        fix = Fix("On the machine, see whether a GPU is on the bus and the driver answers.", gpu_check_commands())
        finding = Finding(
            Severity.WARNING,
            message,
            fix,
            evidence,
            # The likely roots, not the symptom: no driver, no NVIDIA GPU at all, or a driver not loaded.
            cause="driver-not-installed",
            other_causes=("no-nvidia-gpu", "driver-not-loaded", "cuda-unavailable"),
        )
        return Outcome(message, [finding], data)
    said = cuda_init_cause(facts, error)
    message = "torch.cuda.is_available() is False" + (f': "{one_line(error)}"' if error else "") + f" — {said.words}"
    finding = Finding(Severity.PROBLEM, message, said.fix, evidence, cause=said.cause, other_causes=said.other_causes)
    return Outcome(message, [finding], data)
