"""CUDA toolkit checks: which toolkits are installed, and can this driver run what they build."""

from __future__ import annotations

import os

from gpudoctor import kb
from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.cuda_toolkit import CudaToolkit
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.predicates import comparable_driver, driver_runs_cuda_release
from gpudoctor.facts.predicates import cuda_major_minor as _major_minor
from gpudoctor.results import Outcome


def _toolkits_looked_for(facts: Facts) -> bool:
    """The machine was searched for toolkits (the directory scan or nvcc on PATH), or a report named one."""
    return facts.collected(Ev.CUDA_TOOLKITS) or facts.collected(Ev.NVCC) or facts.nvcc is not None


def _nvcc_where(facts: Facts) -> str:
    return "nvcc on PATH" if facts.collected(Ev.NVCC) else "the nvcc the collect_env report found"


def _driver_state_known(facts: Facts) -> bool:
    """Something said whether a driver is there: the kernel module's files, NVML, nvidia-smi or a report."""
    keys = (Ev.PROC_DRIVER_VERSION, Ev.PROC_MODULES, Ev.NVML, Ev.NVIDIA_SMI, Ev.NVIDIA_SMI_XML)
    return any(facts.collected(key) for key in keys) or bool(facts.driver.userspace_version)


def _toolkits(facts: Facts) -> list[CudaToolkit]:
    """Installed toolkits, plus the nvcc on PATH when it lives outside every scanned directory."""
    return [t for t in facts.toolkits if t.version]


@check("CUDA001", area="cuda", title="CUDA toolkits installed")
def toolkits_installed(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: every CUDA toolkit on the machine (/usr/local/cuda*, CUDA_HOME, CUDA_PATH) with its
    version (version.json, version.txt, or its package metadata), the nvcc first on PATH, and whether they
    agree.

    Why it matters: PyTorch and TensorFlow wheels bring their own CUDA libraries, so a toolkit is needed
    only to compile CUDA code (extensions, custom kernels). When several are installed, the nvcc on PATH,
    CUDA_HOME and /usr/local/cuda can point at different ones, and extensions then build against one CUDA
    and run against another.

    How to fix: make PATH, CUDA_HOME and the /usr/local/cuda link name the same toolkit, e.g.
    `export CUDA_HOME=/usr/local/cuda-12.4 PATH=/usr/local/cuda-12.4/bin:$PATH`.
    """
    toolkits = facts.toolkits
    nvcc = facts.nvcc
    if not _toolkits_looked_for(facts):
        return not_applicable("toolkits not collected (`nvcc --version` and `ls -d /usr/local/cuda*` show them)")
    data = {
        "toolkits": [
            {
                "path": t.path,
                "realpath": t.realpath,
                "version": t.version,
                "version_source": t.version_source,
                "nvcc": t.has_nvcc,
            }
            for t in toolkits
        ],
        "nvcc_on_path": nvcc.version if nvcc else None,
        "links": facts.toolkit_links,
    }
    if not toolkits and not nvcc:
        return not_applicable(
            "no CUDA toolkit installed — not needed to run PyTorch or TensorFlow wheels, only to compile CUDA code",
            data,
        )
    findings = []
    listing = ", ".join(f"{t.version or 'unknown version'} at {t.realpath}" for t in toolkits)
    summary = f"{len(toolkits)} toolkit{'s' if len(toolkits) != 1 else ''}: {listing}" if toolkits else ""
    if nvcc and nvcc.release:
        summary = (summary + "; " if summary else "") + f"{_nvcc_where(facts)} is {nvcc.version or nvcc.release}"
        versions = {_major_minor(t.version) for t in toolkits if t.version}
        link = facts.toolkit_links.get("/usr/local/cuda")
        if link:
            linked = next((t for t in toolkits if t.realpath == link), None)
            if linked and linked.version and _major_minor(linked.version) != nvcc.release:
                findings.append(
                    Finding(
                        Severity.WARNING,
                        f"nvcc on PATH is CUDA {nvcc.release} but /usr/local/cuda "
                        f"points at CUDA {_major_minor(linked.version)} ({link})",
                        Fix("Put the toolkit you mean first on PATH.", (f"export PATH={link}/bin:$PATH",)),
                        (Ev.NVCC, Ev.CUDA_TOOLKITS),
                        cause="cuda-toolkit-mismatch",
                    )
                )
        if versions and nvcc.release not in versions and not findings:
            findings.append(
                Finding(
                    Severity.INFO, f"nvcc on PATH (CUDA {nvcc.release}) is not one of the scanned toolkit directories"
                )
            )
    if len({_major_minor(t.version) for t in toolkits if t.version}) > 1:
        findings.append(
            Finding(
                Severity.INFO,
                "several CUDA toolkits are installed; CUDA_HOME and PATH decide which one builds extensions",
            )
        )
    cuda_home = facts.env.get("CUDA_HOME") or facts.env.get("CUDA_PATH")
    if cuda_home:
        home_real = os.path.normpath(cuda_home)
        known = {t.path for t in toolkits} | {t.realpath for t in toolkits}
        if toolkits and home_real not in known:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"CUDA_HOME/CUDA_PATH is {cuda_home}, which is not an installed toolkit",
                    Fix("Point it at an installed toolkit.", (f"export CUDA_HOME={toolkits[0].realpath}",)),
                    (Ev.ENV, Ev.CUDA_TOOLKITS),
                    cause="cuda-toolkit-missing",
                )
            )
    return Outcome(summary or "toolkit found", findings, data)


@check("CUDA002", area="cuda", title="The driver can run the installed CUDA toolkits")
def toolkit_vs_driver(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: for each installed toolkit (and nvcc on PATH), whether the installed driver can run
    programs built with it: natively (the driver is at least the toolkit's release driver), through
    minor-version compatibility (same CUDA major, driver above that major's floor: CUDA 11.x ≥ 450.80.02,
    12.x ≥ 525.60.13, 13.x ≥ 580.65.06), or not at all.

    A pasted collect_env report's "CUDA runtime version" is the nvcc it found, and is judged the same way.

    Why it matters: a toolkit newer than the driver compiles fine and then fails at run time with "CUDA
    driver version is insufficient for CUDA runtime version" (cudaError 35). Under minor-version
    compatibility most programs run, but JIT-compiling PTX from the newer toolkit fails.

    How to fix: upgrade the driver to at least the version the finding names, or install a toolkit no newer
    than the CUDA version the driver supports (nvidia-smi's "CUDA Version").
    """
    driver = facts.driver
    versions: dict[str, str | None] = {}
    for toolkit in _toolkits(facts):
        if toolkit.version:
            versions.setdefault(toolkit.version, toolkit.realpath)
    if facts.nvcc and facts.nvcc.version and not any(v.startswith(facts.nvcc.release or "#") for v in versions):
        versions.setdefault(facts.nvcc.version, _nvcc_where(facts))
    if not versions:
        if not _toolkits_looked_for(facts):
            return not_applicable("which CUDA toolkits are installed is not known (toolkits not collected)")
        return not_applicable("no CUDA toolkit installed")
    driver_version = driver.kernel_version or driver.userspace_version
    if not driver_version and not _driver_state_known(facts):
        described = ", ".join(f"CUDA {v} ({where})" for v, where in versions.items())
        return not_applicable(
            f"{described}; the NVIDIA driver is not known, so whether it runs them is not known "
            "(`nvidia-smi` shows the driver and the CUDA version it supports)",
            {"toolkits": list(versions), "driver": None},
        )
    if not driver_version or (not driver.kernel_module_loaded and not facts.container.wsl):
        described = ", ".join(f"CUDA {v} ({where})" for v, where in versions.items())
        needs = []
        for version in versions:
            cuda_major = kb.major(version)
            floor = kb.mvc_floor(cuda_major) if cuda_major is not None else None
            full = kb.min_driver_for_cuda(_major_minor(version) or version)
            if full:
                needs.append(
                    f"CUDA {_major_minor(version)} needs driver ≥ {full}"
                    + (f" (≥ {floor} with minor-version compatibility)" if floor and floor != full else "")
                )
        words = "; ".join(needs)
        return not_applicable(
            f"{described} installed, but no NVIDIA driver is loaded: CUDA programs can be "
            f"compiled here but not run" + (f" ({words})" if words else ""),
            {"toolkits": list(versions), "driver": None},
        )
    if not comparable_driver(driver_version):
        return not_applicable(
            f"driver version {driver_version} is not an NVIDIA display-driver release (macOS's CUDA driver, or "
            "Jetson's L4T): the toolkits cannot be compared with it",
            {"toolkits": list(versions), "driver": driver_version},
        )
    findings = []
    verdicts = {}
    for version, where in versions.items():
        # The runtime checks major.minor against the driver's CUDA version, so an update release
        # (12.2.2) runs natively wherever its GA (12.2) does.
        verdict = driver_runs_cuda_release(driver_version, version)
        verdicts[version] = verdict.status
        label = f"CUDA {version} ({where})"
        if verdict.status == "too_old":
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{label} needs driver ≥ {verdict.needs_driver}; this driver "
                    f"is {driver_version} (runs CUDA ≤ {driver.cuda_max or 'unknown'})",
                    Fix(
                        f"Upgrade the driver to ≥ {verdict.needs_driver}, or install a CUDA toolkit "
                        f"≤ {driver.cuda_max or 'the driver supports'}.",
                        needs_root=True,
                    ),
                    (Ev.CUDA_TOOLKITS, Ev.NVIDIA_SMI, Ev.NVML),
                    cause="driver-too-old",
                )
            )
        elif verdict.status == "minor_version_compat":
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{label} runs on driver {driver_version} only through "
                    f"minor-version compatibility (full support needs ≥ {verdict.needs_driver}): "
                    "programs that ship only PTX from this toolkit fail to JIT-compile",
                    Fix(f"Upgrade the driver to ≥ {verdict.needs_driver} for full support.", needs_root=True),
                    (Ev.CUDA_TOOLKITS,),
                    cause="driver-too-old",
                )
            )
    data = {"driver": driver_version, "cuda_driver_max": driver.cuda_max, "verdicts": verdicts}
    if not findings:
        return ok(f"driver {driver_version} runs " + ", ".join(f"CUDA {v}" for v in versions), data=data)
    return Outcome(
        "driver " + driver_version + ": " + "; ".join(f"CUDA {v} {s.replace('_', ' ')}" for v, s in verdicts.items()),
        findings,
        data,
    )
