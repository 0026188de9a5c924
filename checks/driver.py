"""NVIDIA driver checks: kernel module, user space, their versions, and nouveau."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok, problem
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor_checks import _driver_init, _fixes


def _gpu_expected(facts: Facts) -> bool | None:
    """True when the evidence shows an NVIDIA GPU, False when a PCI scan shows none, None when unknown."""
    if facts.container.wsl:
        return None
    census = facts.gpu_census
    if census.present:
        return True
    return False if census.none_on_bus else None


def _module_state_collected(facts: Facts) -> bool:
    return facts.collected(Ev.PROC_DRIVER_VERSION) or facts.collected(Ev.PROC_MODULES)


def _userspace_words(facts: Facts) -> str:
    driver = facts.driver
    parts = []
    if not facts.nvidia_smi_missing and facts.collected(Ev.NVIDIA_SMI):
        parts.append("nvidia-smi")
    if driver.library_versions:
        parts.append("libnvidia-ml")
    what = " and ".join(parts) or "user-space libraries"
    version = f" {driver.userspace_version}" if driver.userspace_version else ""
    return f"driver user space{version} ({what})"


@check("DRV001", area="driver", title="NVIDIA kernel module loaded")
def kernel_module_loaded(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether the NVIDIA kernel module is loaded (/proc/driver/nvidia/version,
    /sys/module/nvidia, /proc/modules) and which flavour (proprietary or open) it is.

    Why it matters: nvidia-smi, NVML and CUDA all talk to the GPU through the kernel module. "NVIDIA-SMI
    has failed because it couldn't communicate with the NVIDIA driver" means it is not loaded: a kernel
    upgrade whose DKMS rebuild failed, a module that was never built, Secure Boot refusing an unsigned
    module, or nouveau holding the GPU.

    How to fix: `sudo modprobe nvidia`; if it fails, install the headers for the running kernel and
    rebuild (`sudo dkms autoinstall`), or enrol the module's signing key when Secure Boot is on.
    """
    driver = facts.driver
    if facts.container.wsl:
        return not_applicable("WSL uses the Windows NVIDIA driver; there is no Linux kernel module")
    if driver.kernel_module_loaded:
        flavor = f" ({driver.kernel_flavor})" if driver.kernel_flavor else ""
        version = driver.kernel_version or "version unknown"
        return ok(f"loaded: {version}{flavor}", data={"version": driver.kernel_version, "flavor": driver.kernel_flavor})
    smi_error = facts.smi_text.error if facts.smi_text else None
    expected = _gpu_expected(facts)
    if not (facts.collected(Ev.PROC_DRIVER_VERSION) or facts.collected(Ev.PROC_MODULES)):
        if smi_error and smi_error.kind == "couldnt_communicate" and expected is not False:
            # A pasted nvidia-smi error alone already says it: the kernel module is not answering.
            return problem(
                "nvidia-smi couldn't communicate with the NVIDIA driver: the kernel module is not "
                "loaded (often after a kernel upgrade the module was not rebuilt for)",
                _fixes.load_kernel_module(),
                [Ev.NVIDIA_SMI],
                cause="driver-not-loaded",
            )
        return not_applicable(
            "whether the kernel module is loaded is not known: /proc/driver/nvidia/version and /proc/modules were "
            "not collected (`cat /proc/driver/nvidia/version` settles it)"
        )
    installed = bool(
        driver.userspace_version
        or driver.library_versions
        or (facts.collected(Ev.NVIDIA_SMI) and not facts.nvidia_smi_missing)
    )
    data = {"version": None, "userspace_installed": installed, "userspace_version": driver.userspace_version}
    if expected is False:
        if installed:
            return not_applicable(
                f"not loaded — and no NVIDIA GPU on the bus for it to drive "
                f"({_userspace_words(facts)} is installed, which is harmless)",
                data=data,
            )
        return not_applicable("not loaded — no NVIDIA GPU on the bus and no driver installed", data=data)
    log = facts.kernel_log
    if log.secure_boot_rejected:
        return problem(
            "not loaded: Secure Boot rejected the unsigned NVIDIA module (kernel log)",
            Fix(
                "Enrol a Machine Owner Key and sign the module, use your distribution's signed "
                "driver packages, or disable Secure Boot.",
                ("mokutil --sb-state", "sudo mokutil --import /var/lib/dkms/mok.pub  # then reboot and enrol the key"),
                needs_root=True,
            ),
            [Ev.KERNEL_LOG],
            data,
            cause="secure-boot-unsigned-module",
        )
    if installed:
        return problem(
            f"not loaded, though {_userspace_words(facts)} is installed: nvidia-smi, NVML and "
            "CUDA cannot reach the GPU",
            _fixes.load_kernel_module(),
            [Ev.PROC_DRIVER_VERSION, Ev.PROC_MODULES, Ev.NVIDIA_SMI],
            data,
            cause="driver-not-loaded",
        )
    if expected is None:
        # Neither a GPU nor the absence of one is shown: a machine without a GPU has no module either.
        return not_applicable(
            "not loaded, and no driver installed; whether this machine has an NVIDIA GPU is not known "
            "(`lspci -nn | grep -i nvidia` settles it)",
            data,
        )
    return problem(
        "no NVIDIA driver installed: the GPU on the bus cannot be used",
        _fixes.install_driver_for(facts),
        [Ev.PROC_MODULES, Ev.PCI_DEVICES],
        data,
        cause="driver-not-installed",
    )


@check("DRV002", area="driver", title="Kernel module matches the user-space driver")
def versions_match(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that the loaded kernel module and the user-space driver libraries (libnvidia-ml,
    the version NVML and nvidia-smi report) are the same version.

    Why it matters: after a driver upgrade (often by unattended-upgrades) the new libraries talk to the
    old, still-loaded module and everything fails with "Failed to initialize NVML: Driver/library version
    mismatch".

    How to fix: reboot, or unload and reload the nvidia modules when no GPU process runs; then hold the
    driver packages so it doesn't happen again unannounced.
    """
    driver = facts.driver
    smi_error = facts.smi_text.error if facts.smi_text else None
    nvml_mismatch = facts.nvml.error_code == 18
    smi_mismatch = bool(smi_error and smi_error.kind == "version_mismatch")
    api = facts.kernel_log.api_mismatch
    userspace = [v for v in driver.library_versions if v]
    if smi_error and smi_error.detail:
        userspace.append(smi_error.detail)
    kernel = driver.kernel_version
    differing = sorted({v for v in userspace if kernel and not _same_driver(v, kernel)})
    if nvml_mismatch or smi_mismatch or api or differing:
        user = ", ".join(differing or userspace) or (api[0] if api else "unknown")
        kernel_words = kernel or (api[1] if api else "unknown")
        evidence = tuple(
            name
            for name, hit in (
                (Ev.NVIDIA_SMI, smi_mismatch),
                (Ev.NVML, nvml_mismatch),
                (Ev.KERNEL_LOG, bool(api)),
                (Ev.DRIVER_LIBRARIES, bool(differing)),
            )
            if hit
        )
        return problem(
            f"Driver/library version mismatch: kernel module {kernel_words}, user space {user}",
            _fixes.reboot_for_mismatch(),
            evidence,
            {"kernel": kernel_words, "userspace": user},
            cause="driver-library-mismatch",
        )
    if not kernel and not _module_state_collected(facts):
        return not_applicable(
            "the loaded kernel module's version is not known: /proc/driver/nvidia/version was not collected "
            "(`cat /proc/driver/nvidia/version` settles it)"
        )
    if not kernel:
        return not_applicable("no kernel module loaded to compare with")
    if not userspace and not driver.userspace_version:
        return not_applicable(f"kernel module {kernel}; user-space version not found")
    return ok(f"kernel module and user space are both {kernel}", data={"kernel": kernel, "userspace": kernel})


def _same_driver(a: str, b: str) -> bool:
    # libnvidia-ml file names carry the full version; nvidia-smi's mismatch note shortens it ("570.124").
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


@check("DRV003", area="driver", title="nouveau is not in the way")
def nouveau(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether the open-source nouveau driver is loaded or owns an NVIDIA GPU, and whether
    the kernel log shows the NVIDIA probe routine being skipped because of it.

    Why it matters: nouveau and the NVIDIA driver cannot share a GPU. With nouveau bound, the NVIDIA
    module loads but finds no device ("NVRM: The NVIDIA probe routine was not called for 1 device(s)").

    How to fix: blacklist nouveau in /etc/modprobe.d, regenerate the initramfs and reboot.
    """
    loaded = facts.loaded_modules
    took_gpu = facts.kernel_log.nouveau_took_gpu
    bound = [d.address for d in facts.pci_devices if d.driver == "nouveau"]
    if bound or took_gpu:
        where = f" and owns {', '.join(bound)}" if bound else ""
        return problem(
            f"nouveau is loaded{where}: the NVIDIA driver cannot use the GPU",
            _fixes.blacklist_nouveau(facts.os_release),
            tuple(n for n, hit in ((Ev.PCI_DEVICES, bool(bound)), (Ev.KERNEL_LOG, took_gpu)) if hit),
            cause="nouveau-bound",
        )
    if loaded is None:
        return not_applicable(
            "whether nouveau is loaded is not known: /proc/modules was not collected (`lsmod | grep nouveau` "
            "settles it)"
        )
    if "nouveau" in loaded:
        return Outcome(
            "nouveau is loaded but owns no NVIDIA GPU",
            [
                Finding(
                    Severity.INFO,
                    "nouveau is loaded; blacklist it if the NVIDIA driver should own the GPUs",
                    _fixes.blacklist_nouveau(facts.os_release),
                    (Ev.PROC_MODULES,),
                )
            ],
        )
    return ok("nouveau not loaded")


@check("DRV004", area="driver", title="Driver user space installed")
def userspace_installed(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: that nvidia-smi and libnvidia-ml.so (the driver's user-space half) are installed,
    and which version they are.

    Why it matters: without them nothing can query or use the GPU, even with the kernel module loaded.
    Inside a container they are injected by the NVIDIA Container Toolkit; missing there means the container
    was started without GPU access.

    How to fix: install the NVIDIA driver packages (or `--gpus all` with the NVIDIA Container Toolkit for a
    container).
    """
    driver = facts.driver
    smi = facts.collected(Ev.NVIDIA_SMI) and not facts.nvidia_smi_missing
    libs = driver.library_versions
    data = {
        "nvidia_smi": smi,
        "libnvidia_ml_versions": libs,
        "version": driver.userspace_version,
        "version_source": driver.userspace_source,
    }
    if smi or libs or driver.userspace_version:
        missing = []
        if not smi and facts.collected(Ev.NVIDIA_SMI):
            missing.append("nvidia-smi is not on PATH")
        if not libs and facts.collected(Ev.DRIVER_LIBRARIES) and not facts.container.wsl:
            missing.append("libnvidia-ml.so not found in the usual library directories")
        version = driver.userspace_version or "version unknown"
        summary = _userspace_words(facts) if driver.userspace_version else f"{_userspace_words(facts)} — {version}"
        findings = [
            Finding(
                Severity.WARNING,
                m,
                None,
                (Ev.NVIDIA_SMI, Ev.DRIVER_LIBRARIES),
                cause="nvml-library-missing" if "libnvidia-ml" in m else "",
            )
            for m in missing
        ]
        return Outcome(summary, findings, data)
    if not facts.collected(Ev.NVIDIA_SMI) and not facts.collected(Ev.DRIVER_LIBRARIES):
        return not_applicable(
            "whether the driver's user space is installed is not known: nvidia-smi and the driver libraries were "
            "not collected (`nvidia-smi` settles it)"
        )
    if _gpu_expected(facts) is False:
        return not_applicable("not installed (no NVIDIA GPU on the bus)", data=data)
    if facts.container.in_container:
        return problem(
            "no NVIDIA driver libraries in this container: it was started without GPU access",
            Fix(
                "Install the NVIDIA Container Toolkit on the host and start the container with GPUs.",
                (
                    "docker run --gpus all ...",
                    "sudo nvidia-ctk runtime configure --runtime=docker "
                    "&& sudo systemctl restart docker  # on the host",
                    _fixes.CONTAINER_TOOLKIT_HINT,
                ),
                needs_root=True,
            ),
            [Ev.NVIDIA_SMI, Ev.DRIVER_LIBRARIES],
            data,
            cause="container-no-gpu-flag",
        )
    return problem(
        "nvidia-smi and libnvidia-ml are not installed",
        _fixes.install_driver_for(facts),
        [Ev.NVIDIA_SMI, Ev.DRIVER_LIBRARIES],
        data,
        cause="driver-not-installed",
    )


@check("DRV005", area="driver", title="The driver initialised the GPUs (kernel log)")
def gpu_initialised(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: the kernel log's NVRM lines for a GPU the driver refused or failed to bring up: a GPU
    too old for the installed driver branch (NVRM names the legacy branch that supports it, such as 470.xx
    or 390.xx), the open kernel module on a GPU without the GSP it needs ("not supported by open nvidia.ko
    because it does not include the required GPU System Processor"), and "RmInitAdapter failed" (the GPU
    did not initialise).

    Why it matters: in each case the module loads and looks healthy, but the GPU is missing or dead to it:
    nvidia-smi says "No devices were found", CUDA sees nothing, and the only word on why is in the kernel
    log. A GPU that failed to initialise is never fine, whatever else works.

    How to fix: a legacy GPU needs its legacy branch (for example `sudo apt-get install nvidia-driver-470`
    on Ubuntu, `nvidia-tesla-470-driver` on Debian, `akmod-nvidia-470xx` from RPM Fusion); a GPU without a
    GSP needs the proprietary kernel module instead of nvidia-open (a GSP firmware failure of the
    proprietary module is turned off with `options nvidia NVreg_EnableGpuFirmware=0`); an RmInitAdapter
    failure: read the NVRM and Xid lines before it, `sudo nvidia-smi -r` or reboot, then reseat the card,
    check its power cables and enable Above 4G decoding / Resizable BAR in the BIOS.
    """
    if facts.container.wsl:
        return not_applicable("WSL uses the Windows NVIDIA driver; its kernel log is not visible here")
    log = facts.kernel_log
    data = {
        "legacy_branch_required": log.legacy_branch_required,
        "gsp_unsupported": log.gsp_unsupported,
        "rm_init_failed": log.rm_init_failed,
        "xids": sorted({event.code for event in log.xid_events}),
    }
    evidence = (Ev.KERNEL_LOG,)
    findings: list[Finding] = []
    if log.legacy_branch_required:
        branch = _driver_init.legacy_branch(log.legacy_branch_required)
        installed = facts.driver.kernel_version or facts.driver.userspace_version
        message = (
            f"the kernel log says this GPU is supported only by the NVIDIA {branch} legacy driver: the installed "
            f"{installed or 'driver'} ignores it"
        )
        findings.append(
            Finding(
                Severity.PROBLEM,
                message,
                _driver_init.legacy_driver_fix(log.legacy_branch_required, facts.os_release),
                evidence,
                cause="driver-unsupported-gpu",
            )
        )
    if log.gsp_unsupported:
        message = (
            "the open NVIDIA kernel module cannot drive this GPU: it has no GSP (GPU System Processor), which "
            "nvidia-open needs, so the GPU stays unused (kernel log)"
        )
        fix = _driver_init.proprietary_module_fix(facts.driver.kernel_version, facts.os_release)
        findings.append(Finding(Severity.PROBLEM, message, fix, evidence, cause="open-module-unsupported-gpu"))
    if log.rm_init_failed:
        message = "a GPU failed to initialise (RmInitAdapter failed, kernel log): it is not usable until it does"
        fix = _driver_init.init_failure_fix(log.xid_events)
        findings.append(Finding(Severity.PROBLEM, message, fix, evidence, cause="gpu-init-failed"))
    if findings:
        summary = findings[0].message + (f" (+{len(findings) - 1} more)" if len(findings) > 1 else "")
        return Outcome(summary, findings, data)
    if _gpu_expected(facts) is False:
        return not_applicable("no NVIDIA GPU on the bus for the driver to initialise", data)
    if _module_state_collected(facts) and not facts.driver.kernel_module_loaded:
        return not_applicable("the kernel module is not loaded (see DRV001): no GPU was initialised", data)
    if not facts.kernel_log_readable:
        # Not known is not fine: a kernel log that was not collected or could not be read says nothing.
        missing = facts.missing(Ev.KERNEL_LOG)
        why = missing.words() if missing is not None else "it could not be read"
        return not_applicable(f"the kernel log is not available ({why}), so GPU initialisation is unknown", data)
    return ok("no GPU initialisation failure in the kernel log", data)
