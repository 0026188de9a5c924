"""Environment checks: variables that hide GPUs or mix CUDA versions, and container / WSL context."""

from __future__ import annotations

import re

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok, problem
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.environment import resolve_visible_devices
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK
from gpudoctor.results import Outcome
from gpudoctor.words import counted


def _known_uuids(facts: Facts) -> list[str]:
    uuids = [g.uuid for g in facts.gpus if g.uuid]
    for gpu in facts.gpus:
        uuids += [d.uuid for d in gpu.mig_devices if d.uuid]
    return uuids


@check("ENV001", area="environment", title="CUDA_VISIBLE_DEVICES")
def visible_devices(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: what CUDA_VISIBLE_DEVICES leaves visible, by CUDA's own rules: an empty value hides
    every GPU; enumeration stops at the first entry that names no GPU (so "0,5,1" on two GPUs exposes only
    GPU 0); a repeated entry makes CUDA initialisation fail; one process can use only one MIG instance.

    Why it matters: the variable is read once when CUDA starts, silently. A stale value inherited from a
    job script is the classic "torch sees 1 GPU but nvidia-smi shows 8".

    How to fix: export the intended value before starting the program (`export CUDA_VISIBLE_DEVICES=0,1`),
    or `unset CUDA_VISIBLE_DEVICES`; prefer GPU UUIDs from `nvidia-smi -L` on machines with mixed GPUs.
    """
    env = facts.env
    if not env.collected:
        return not_applicable("environment not collected")
    raw = env.get("CUDA_VISIBLE_DEVICES")
    gpus = facts.gpus
    if raw is None:
        if gpus:
            return ok(f"not set: all {counted(len(gpus), 'GPU')} visible to CUDA")
        return not_applicable("not set (no GPU list to compare with)")
    unset = Fix(
        "Unset it, or export the GPUs you mean before starting the program.",
        ("unset CUDA_VISIBLE_DEVICES", "export CUDA_VISIBLE_DEVICES=0  # for example"),
    )
    data: dict[str, object] = {"value": raw}
    if not raw.strip() or raw.strip() in ("-1", "none", "NoDevFiles"):
        return Outcome(
            f"set to {raw!r}: hides every GPU from CUDA",
            [
                Finding(
                    Severity.WARNING,
                    f"CUDA_VISIBLE_DEVICES={raw!r} hides every GPU: CUDA programs will run on the CPU or fail",
                    unset,
                    (Ev.ENV,),
                    cause="cuda-visible-devices",
                )
            ],
            data,
        )
    if not gpus:
        return not_applicable(
            f"set to {raw!r}; whether it names existing GPUs is not known: no GPU list to check it against "
            "(`nvidia-smi -L` prints it)",
            data=data,
        )
    resolved = resolve_visible_devices(raw, len(gpus), _known_uuids(facts))
    data.update({"visible": resolved.visible, "stopped_at": resolved.stopped_at})
    findings = []
    if resolved.duplicates:
        findings.append(
            Finding(
                Severity.PROBLEM,
                f"CUDA_VISIBLE_DEVICES repeats {', '.join(resolved.duplicates)}: "
                "CUDA initialisation fails with a repeated device",
                unset,
                (Ev.ENV,),
                cause="cuda-visible-devices",
            )
        )
    if resolved.stopped_at is not None:
        severity = Severity.WARNING if resolved.visible else Severity.PROBLEM
        kept = ",".join(resolved.visible) or "none"
        findings.append(
            Finding(
                severity,
                f"entry {resolved.stopped_at!r} names no GPU on this machine: CUDA ignores "
                f"it and every entry after it (visible: {kept})",
                unset,
                (Ev.ENV, Ev.NVML),
                cause="cuda-visible-devices",
            )
        )
    mig_entries = [e for e in resolved.visible if e.upper().startswith("MIG-")]
    if len(mig_entries) > 1:
        findings.append(
            Finding(
                Severity.WARNING,
                "several MIG instances listed: one CUDA process can use only the first; run one process per instance",
                None,
                (Ev.ENV,),
                cause="mig-misconfigured",
            )
        )
    summary = f"set to {raw!r}: CUDA sees {len(resolved.visible)} of {counted(len(gpus), 'GPU')}"
    return Outcome(summary, findings, data)


@check("ENV002", area="environment", title="CUDA_DEVICE_ORDER on mixed-GPU machines")
def device_order(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a machine with different GPU models, whether CUDA_DEVICE_ORDER=PCI_BUS_ID is set.

    Why it matters: CUDA numbers GPUs fastest-first by default, nvidia-smi by PCI bus. Without the variable,
    cuda:0 may be nvidia-smi's GPU 1, and CUDA_VISIBLE_DEVICES=0 selects a different card than intended.

    How to fix: `export CUDA_DEVICE_ORDER=PCI_BUS_ID` (in the shell profile or job script).
    """
    if not facts.env.collected:
        return not_applicable("environment not collected")
    names = {g.name for g in facts.gpus if g.name}
    order = facts.env.get("CUDA_DEVICE_ORDER")
    if len(names) < 2:
        return not_applicable("one GPU model: CUDA and nvidia-smi number GPUs alike")
    if order == "PCI_BUS_ID":
        return ok("PCI_BUS_ID: CUDA numbers GPUs as nvidia-smi does")
    return Outcome(
        f"mixed GPUs ({', '.join(sorted(names))}) and CUDA_DEVICE_ORDER={order or 'unset'}",
        [
            Finding(
                Severity.WARNING,
                "CUDA numbers these GPUs fastest-first, unlike nvidia-smi: cuda:0 may not be nvidia-smi's GPU 0",
                Fix("Number GPUs by PCI bus, as nvidia-smi does.", ("export CUDA_DEVICE_ORDER=PCI_BUS_ID",)),
                (Ev.ENV,),
            )
        ],
        {"order": order},
    )


_CUDA_DIR = re.compile(r"cuda[-_]?(\d+\.\d+)")


@check("ENV003", area="environment", title="LD_LIBRARY_PATH")
def library_path(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: LD_LIBRARY_PATH entries that do not exist, and entries that point at a different CUDA
    version than the toolkit in use.

    Why it matters: LD_LIBRARY_PATH outranks everything else the loader knows. An entry for another CUDA
    makes programs load that CUDA's libraries (and framework wheels their older nvJitLink or cuDNN,
    "undefined symbol: __nvJitLink..."); entries left from removed installs are signs of such drift.

    How to fix: drop the stale entries from the shell profile or job script, e.g.
    `export LD_LIBRARY_PATH=$(echo $LD_LIBRARY_PATH | tr ':' '\\n' | grep -v cuda-11 | paste -sd:)`.
    """
    if not facts.env.collected:
        return not_applicable("environment not collected")
    value = facts.env.get("LD_LIBRARY_PATH")
    if not value:
        return ok("not set")
    entries = [e for e in value.split(":") if e]
    findings = []
    missing = list(facts.env.missing_library_dirs)
    if missing:
        findings.append(Finding(Severity.INFO, f"entries that do not exist: {', '.join(missing)}"))
    toolkit = facts.nvcc.release if facts.nvcc and facts.nvcc.release else None
    if toolkit:
        other = sorted({m.group(1) for e in entries if (m := _CUDA_DIR.search(e)) and m.group(1) != toolkit})
        if other:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"LD_LIBRARY_PATH names CUDA {', '.join(other)} while nvcc on "
                    f"PATH is CUDA {toolkit}: programs may load the other version's libraries",
                    Fix("Keep one CUDA version on LD_LIBRARY_PATH.", ("echo $LD_LIBRARY_PATH | tr ':' '\\n'",)),
                    (Ev.ENV, Ev.NVCC),
                    cause="ld-library-path-conflict",
                )
            )
    return Outcome(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}", findings, {"entries": entries})


def _bus_shows_no_gpu(facts: Facts) -> bool:
    """A scan of the whole PCI bus answered and lists no NVIDIA GPU (what PCI001 reports)."""
    return facts.pci_scan_available and not any(d.address != UNPLACED_LSPCI_BLOCK for d in facts.pci_gpus)


@check("ENV004", area="environment", title="Container and WSL context")
def container_context(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: whether gpudoctor runs in a container (Docker, Podman, Kubernetes) or WSL, and whether
    that context was given GPU access: NVIDIA_VISIBLE_DEVICES, injected driver libraries and device nodes in
    a container; the Windows driver's /usr/lib/wsl/lib/libcuda.so.1 and no Linux driver inside WSL2.

    Why it matters: a container sees GPUs only when started through the NVIDIA Container Toolkit; WSL2 gets
    CUDA from the Windows driver, and a Linux NVIDIA driver installed inside WSL breaks it; WSL1 has no CUDA
    at all.
    In a container whose PCI bus shows no NVIDIA GPU, PCI001 gives the verdict and this check is not
    applicable, whichever /dev/nvidia* nodes exist: one cause, one finding, one exit code.

    How to fix: container: `docker run --gpus all` (toolkit installed on the host); WSL: install only the
    Windows NVIDIA driver, remove Linux driver packages from the distribution, and use WSL2
    (`wsl --set-version <distro> 2`).
    """
    context = facts.container
    if not context.collected and not context.wsl:
        return not_applicable("context not collected")
    if context.wsl:
        if context.wsl_version == 1:
            return problem(
                "WSL1: CUDA needs WSL2",
                Fix("Convert the distribution to WSL2 (in Windows PowerShell).", ("wsl --set-version <distro> 2",)),
                [Ev.PROC_VERSION],
                cause="wsl-driver-setup",
            )
        findings = []
        if not context.wsl_libcuda:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    "WSL2 without /usr/lib/wsl/lib/libcuda.so.1: the Windows NVIDIA driver is missing or too old",
                    Fix("Install the current NVIDIA driver on Windows (not inside WSL), then `wsl --shutdown`."),
                    (Ev.CONTAINER,),
                    cause="wsl-driver-setup",
                )
            )
        linux_libs = list(facts.driver.library_versions)
        if linux_libs or facts.driver.kernel_module_loaded:
            findings.append(
                Finding(
                    Severity.WARNING,
                    "a Linux NVIDIA driver is installed inside WSL; it shadows the Windows driver's libraries",
                    Fix(
                        "Remove the Linux driver packages.",
                        ("sudo apt-get remove --purge '^nvidia-driver-.*' '^libnvidia-.*'",),
                        needs_root=True,
                    ),
                    (Ev.DRIVER_LIBRARIES,),
                    cause="wsl-driver-setup",
                )
            )
        return Outcome("WSL2 with the Windows driver's CUDA", findings, {"wsl": 2})
    if not context.in_container:
        return not_applicable("not in a container or WSL")
    visible = facts.env.get("NVIDIA_VISIBLE_DEVICES")
    data = {"runtime": context.runtime, "NVIDIA_VISIBLE_DEVICES": visible}
    if _bus_shows_no_gpu(facts):
        # One cause, one verdict: PCI001 owns "no GPU reachable from this container". Device nodes do not
        # change it (a stale /dev/nvidiactl, made by installing the user space, gives no GPU access), so the
        # verdict and the exit code stay the same whichever nodes exist.
        data["gpu_access"] = "judged by PCI001: no NVIDIA GPU on the PCI bus"
        return not_applicable(
            f"inside a {context.runtime} container"
            + (f", NVIDIA_VISIBLE_DEVICES={visible}" if visible is not None else "")
            + "; no NVIDIA GPU on the PCI bus it sees, so GPU access is PCI001's verdict",
            data,
        )
    findings = []
    # GPU access means /dev/nvidiaN: a lone /dev/nvidiactl is what installing the user space leaves behind.
    has_nodes = bool(facts.device_nodes.gpu_nodes())
    if visible in ("void", "none", ""):
        findings.append(
            Finding(
                Severity.WARNING,
                f"NVIDIA_VISIBLE_DEVICES={visible!r}: the container was asked to see no GPU",
                None,
                (Ev.ENV,),
                cause="container-no-gpu-flag",
            )
        )
    elif not has_nodes and facts.device_nodes.collected:
        findings.append(
            Finding(
                Severity.PROBLEM,
                "no /dev/nvidiaN GPU node in this container: it was started without GPU access",
                Fix(
                    "Start it with GPUs (NVIDIA Container Toolkit on the host).",
                    ("docker run --gpus all ...", "# Kubernetes: request nvidia.com/gpu in the pod's resources.limits"),
                ),
                (Ev.DEVICE_NODES,),
                cause="container-no-gpu-flag",
            )
        )
    return Outcome(
        f"inside a {context.runtime} container"
        + (f", NVIDIA_VISIBLE_DEVICES={visible}" if visible is not None else ""),
        findings,
        data,
    )
