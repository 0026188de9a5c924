"""NVML checks: does the management library initialise, and are the Python bindings the right ones."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Fix, check, not_applicable, ok, problem, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor_checks import _fixes

# NVML init error code -> (what it means for a person, the fix).  Codes from nvml.h.
_LIBRARY_NOT_FOUND = 12
_DRIVER_NOT_LOADED = 9
_VERSION_MISMATCH = 18
_NO_PERMISSION = 4
_GPU_IS_LOST = 15
_UNKNOWN = 999


# nvidia-smi prints NVML's own initialisation error; its kind (gpudoctor.facts.nvidia_smi_text) -> the NVML code.
_SMI_ERROR_CODES = {
    "library_not_found": _LIBRARY_NOT_FOUND,
    "couldnt_communicate": _DRIVER_NOT_LOADED,
    "version_mismatch": _VERSION_MISMATCH,
    "no_permission": _NO_PERMISSION,
    "nvml_unknown_error": _UNKNOWN,
}


def _no_gpu(facts: Facts) -> bool:
    return facts.gpu_census.none_on_bus and not facts.container.wsl


def _from_nvidia_smi(facts: Facts) -> tuple[int, str] | None:
    """(NVML's error code, nvidia-smi's words) when NVML was not queried but nvidia-smi printed NVML's error."""
    error = facts.smi_text.error if facts.smi_text is not None else None
    if error is None or error.kind not in _SMI_ERROR_CODES:
        return None
    return _SMI_ERROR_CODES[error.kind], " ".join(error.message.split())[:300]


@check("NVML001", area="nvml", title="NVML initialises")
def nvml_init(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether NVML (libnvidia-ml, the library behind nvidia-smi, nvitop, DCGM and
    torch.cuda's device queries) initialises, and maps each failure to its cause: library not found,
    driver not loaded, driver/library version mismatch, no permission, GPU lost, unknown error. Where NVML
    itself was not queried (a pasted nvidia-smi output), the NVML error nvidia-smi printed is read instead.

    Why it matters: an NVML failure means monitoring, schedulers and most diagnostics are blind, and it
    usually shares its cause with a CUDA failure.

    How to fix: depends on the error; each finding says what to type. Library not found: install the
    driver (or start the container with GPU access). Driver not loaded: load the kernel module. Version
    mismatch: reboot. GPU lost: reboot and inspect the hardware. Unknown error in a container: recreate it
    and fix the host's device cgroup rules.
    """
    nvml = facts.nvml
    if not nvml.collected:
        printed = _from_nvidia_smi(facts)
        if printed is None:
            return not_applicable("NVML not queried (`nvidia-smi` shows whether it initialises)")
        # Not queried directly, but nvidia-smi runs on NVML and printed why it could not start: that is the answer.
        code, words = printed
        return _init_failure(facts, code, f"nvidia-smi: {words}", None, {"error_code": code}, (Ev.NVIDIA_SMI,))
    if nvml.init_ok:
        count = nvml.device_count if nvml.device_count is not None else len(nvml.gpus)
        version = nvml.nvml_version or "version unknown"
        noun = "GPU" if count == 1 else "GPUs"
        return ok(
            f"NVML {version} sees {count} {noun}",
            data={
                "nvml_version": nvml.nvml_version,
                "driver_version": nvml.driver_version,
                "cuda_driver_version": nvml.cuda_driver_version,
                "device_count": count,
            },
        )
    data: dict[str, object] = {
        "error_code": nvml.error_code,
        "error_name": nvml.error_name,
        "error_message": nvml.error_message,
    }
    said = f"NVML: {nvml.error_message}" if nvml.error_message else "NVML failed to initialise"
    if nvml.bindings_importable is False:
        return problem(
            f"the NVML Python bindings cannot be imported: {nvml.bindings_error}",
            Fix(
                "Install NVIDIA's bindings into the Python that runs gpudoctor.",
                ("python -m pip install -I nvidia-ml-py",),
            ),
            [Ev.NVML],
            data,
        )
    return _init_failure(facts, nvml.error_code, said, nvml.error_name, data, (Ev.NVML,))


def _init_failure(
    facts: Facts, code: int | None, said: str, name: str | None, data: dict[str, object], source: tuple[Ev, ...]
) -> Outcome:
    """The finding for one NVML initialisation error, by its code (from NVML, or nvidia-smi's words for it)."""
    if code == _LIBRARY_NOT_FOUND:
        if _no_gpu(facts):
            return not_applicable("NVML library not installed (no NVIDIA GPU on the bus)", data)
        if facts.container.in_container:
            return problem(
                f"{said}: this container has no driver libraries — started without GPU access",
                Fix("Start it with GPU access through the NVIDIA Container Toolkit.", ("docker run --gpus all ...",)),
                source,
                data,
                cause="container-no-gpu-flag",
            )
        return problem(
            f"{said}: libnvidia-ml.so.1 is not installed or not on the loader path",
            _fixes.install_driver_for(facts),
            (*source, Ev.LDCONFIG),
            data,
            cause="nvml-library-missing",
        )
    if code == _DRIVER_NOT_LOADED:
        if _no_gpu(facts):
            return not_applicable(f"{said} — expected: there is no NVIDIA GPU on the bus", data)
        return problem(
            f"{said}: the NVIDIA kernel module is not loaded",
            _fixes.load_kernel_module(),
            source,
            data,
            cause="driver-not-loaded",
        )
    if code == _VERSION_MISMATCH:
        return problem(
            f"{said}: kernel module and libraries are different driver versions",
            _fixes.reboot_for_mismatch(),
            source,
            data,
            cause="driver-library-mismatch",
        )
    if code == _NO_PERMISSION:
        return problem(
            f"{said}: this user may not open the GPU device nodes",
            Fix(
                "Give the user access to /dev/nvidia* (usually group 'video' or 'render'), then log in again.",
                ("ls -l /dev/nvidia*", "sudo usermod -aG video,render $USER"),
                needs_root=True,
            ),
            (*source, Ev.DEVICE_NODES),
            data,
            cause="nvml-no-permission",
        )
    if code == _GPU_IS_LOST:
        return problem(
            f"{said}: a GPU has fallen off the bus (see Xid 79 in the kernel log)",
            Fix(
                "Reboot; if it recurs, check power cables, risers, cooling and the slot, and update the "
                "BIOS. Persisting loss is a hardware fault.",
                ("sudo reboot", "sudo dmesg | grep -i xid"),
                needs_root=True,
            ),
            (*source, Ev.KERNEL_LOG),
            data,
            cause="gpu-fallen-off-bus",
        )
    if code == _UNKNOWN and facts.container.in_container:
        return problem(
            f"{said}: inside a container this follows a host `systemctl daemon-reload` that "
            "dropped the container's GPU device access",
            Fix(
                "Recreate the container; on the host, create the /dev/char symlinks once so it "
                "doesn't recur (or use CDI / the cgroupfs driver).",
                ("sudo nvidia-ctk system create-dev-char-symlinks --create-all  # on the host",),
                needs_root=True,
                url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/48",
            ),
            source,
            data,
            cause="container-cgroup-devices",
        )
    return problem(
        f"{said} ({name or 'unknown error'})" if name or source == (Ev.NVML,) else said,
        Fix(
            "Look at the kernel log for NVRM lines; a reboot clears most transient driver states.",
            ("sudo dmesg | grep -E 'NVRM|Xid'", "sudo reboot"),
            needs_root=True,
        ),
        source,
        data,
        cause="nvml-unavailable",
    )


@check("NVML002", area="nvml", title="NVML Python bindings")
def bindings(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: which NVML Python bindings are installed (NVIDIA's `nvidia-ml-py`, which provides
    the `pynvml` module) and whether the deprecated `pynvml` distribution shadows them.

    Why it matters: both distributions install a module named `pynvml`; an old `pynvml` wins and breaks
    tools that need current NVML functions ("module 'pynvml' has no attribute '_nvmlGetFunctionPointer'").

    How to fix: `pip uninstall -y pynvml && pip install -I nvidia-ml-py`.
    """
    bindings = facts.nvml_bindings
    if bindings is None:
        return not_applicable("Python packages not collected")
    official = bindings.get("nvidia-ml-py")
    legacy = {d.name: d for d in bindings.distributions if d.name != "nvidia-ml-py" and d.provides_pynvml_module}
    data = {
        "nvidia_ml_py": official.version if official else None,
        "legacy": {n: d.version for n, d in legacy.items()},
        "module_file": bindings.pynvml_module_file,
    }
    fix = Fix(
        "Remove the legacy package and reinstall NVIDIA's bindings.",
        (
            "python -m pip uninstall -y " + " ".join(sorted(legacy) or ["pynvml"]),
            "python -m pip install -I nvidia-ml-py",
        ),
    )
    if legacy:
        names = ", ".join(f"{n} {d.version}" for n, d in legacy.items())
        return problem(
            f"the legacy {names} shadows nvidia-ml-py: both install the 'pynvml' module",
            fix,
            [Ev.PYTHON_PACKAGES],
            data,
            cause="pynvml-wrong-package",
        )
    if official is None:
        return warning(
            "nvidia-ml-py is not installed in gpudoctor's Python",
            Fix("Install it.", ("python -m pip install nvidia-ml-py",)),
            [Ev.PYTHON_PACKAGES],
            data,
        )
    return ok(f"nvidia-ml-py {official.version}", data=data)
