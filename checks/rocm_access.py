"""AMD GPU access: /dev/kfd and /dev/dri/renderD* present and usable, groups, container device flags (ROCM010-019).

Sources: ROCm 6.2.2 install docs (prerequisites: the ``render`` and ``video`` groups; docker: the ``--device``
flags), the rocminfo failure in ROCm/ROCm-docker#116, the Apptainer fix in ROCm/legacy-rocm-build#1798, and
the HIP environment variable reference for the *_VISIBLE_DEVICES variables
(https://rocm.docs.amd.com/projects/HIP/en/docs-6.4.0/reference/env_variables.html).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.pci_accelerators import functions_of
from gpudoctor.results import Outcome
from gpudoctor.words import counted

if TYPE_CHECKING:
    from gpudoctor.facts.accel_nodes import AccelNodes

GROUP_FIX = "sudo usermod -a -G render,video $LOGNAME"
DOCKER_FLAGS = "docker run --device=/dev/kfd --device=/dev/dri --group-add video"
APPTAINER_FLAGS = "apptainer exec --bind=/dev/kfd,/dev/dri"
# Render groups by number: an image may have no group of that name (run on the host; getent prints its gid).
DOCKER_RENDER_GROUP = f'{DOCKER_FLAGS} --group-add "$(getent group render | cut -d: -f3)" IMAGE rocminfo'
# How rocminfo (and the ROCm runtime) says it cannot open /dev/kfd; the first lines are stable.
KFD_OPEN_ERROR = re.compile(r"Unable to open /dev/kfd read-write: ([A-Za-z ]{1,40})")
VISIBLE_VARIABLES = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


def amd_gpu_count(facts: Facts) -> int:
    """How many AMD GPUs (physical) the facts know of: amd-smi/rocm-smi/KFD's, else the PCI bus's."""
    pci = len(functions_of(facts.pci_accelerators, "amd"))
    kfd = facts.amd.kfd
    buses = {node.bus_id.rsplit(".", 1)[0] for node in kfd.gpu_nodes if node.bus_id} if kfd is not None else set()
    tools = {gpu.bus_id.rsplit(".", 1)[0] for gpu in facts.amd.gpus if gpu.bus_id}
    return max(pci, len(buses), len(tools), 0 if tools else len(facts.amd.gpus))


def amd_device_count(facts: Facts) -> int | None:
    """How many devices HIP enumerates (every compute partition is one); None when not known."""
    kfd = facts.amd.kfd
    counts = [len(facts.amd.gpus), len(kfd.gpu_nodes) if kfd is not None else 0]
    return max(counts) or (amd_gpu_count(facts) or None)


def _in_apptainer(facts: Facts) -> bool:
    return any(name in facts.env.present for name in ("APPTAINER_CONTAINER", "SINGULARITY_CONTAINER"))


def _missing_kfd(facts: Facts) -> Finding:
    if _in_apptainer(facts):
        return Finding(
            Severity.PROBLEM,
            "/dev/kfd is missing inside this Apptainer container: the AMD GPUs were not bound into it",
            Fix("Bind the ROCm device nodes into the container.", (f"{APPTAINER_FLAGS} image.sif rocminfo",)),
            (Ev.ACCEL_DEVICE_NODES, Ev.ENV),
            cause="rocm-kfd-missing",
        )
    if facts.container.in_container:
        runtime = f"{facts.container.runtime} " if facts.container.runtime else ""
        return Finding(
            Severity.PROBLEM,
            f"/dev/kfd is missing inside this {runtime}container: the AMD GPUs were not passed into it",
            Fix("Start the container with the ROCm device nodes.", (f"{DOCKER_FLAGS} IMAGE rocminfo",)),
            (Ev.ACCEL_DEVICE_NODES, Ev.CONTAINER),
            cause="rocm-kfd-missing",
        )
    modules = facts.loaded_modules
    if modules is not None and "amdgpu" not in modules:
        return Finding(
            Severity.PROBLEM,
            "/dev/kfd is missing: the amdgpu driver is not loaded",
            Fix(
                "Load amdgpu and read why it did not load at boot.",
                ("sudo modprobe amdgpu", "sudo dmesg | grep -iE 'amdgpu|kfd'"),
                needs_root=True,
            ),
            (Ev.ACCEL_DEVICE_NODES, Ev.PROC_MODULES),
            cause="rocm-kfd-missing",
        )
    said = "amdgpu is loaded but " if modules is not None else ""
    return Finding(
        Severity.PROBLEM,
        f"/dev/kfd is missing: {said}the kernel did not create the ROCm compute interface",
        Fix(
            "Read the kernel's amdgpu/kfd messages (a GPU too old for KFD says so there).",
            ("sudo dmesg | grep -iE 'amdgpu|kfd'",),
            needs_root=True,
        ),
        (Ev.ACCEL_DEVICE_NODES, Ev.KERNEL_LOG),
        cause="rocm-kfd-missing",
    )


def _tool_kfd_error(facts: Facts) -> str | None:
    """The reason an AMD tool gave for not opening /dev/kfd ("Permission denied"), as printed; None if none did."""
    for error in facts.amd.tool_errors.values():
        match = KFD_OPEN_ERROR.search(error or "")
        if match:
            return match.group(1).strip()
    return None


def _said_by_tool(facts: Facts, reason: str) -> Finding:
    if "no such file" in reason.lower():
        return _missing_kfd(facts)
    if facts.container.in_container:
        fix = Fix("Start the container with the render group too (by number).", (DOCKER_RENDER_GROUP,))
    else:
        fix = Fix(
            "On the host: add the user to render and video, then log in again. In a container: add the render group.",
            (GROUP_FIX, DOCKER_RENDER_GROUP),
            needs_root=True,
        )
    return Finding(
        Severity.PROBLEM,
        f"ROCm cannot open /dev/kfd: {reason} (the user lacks the group that owns it: render, or video on older "
        "systems)",
        fix,
        (Ev.ROCMINFO, Ev.ACCEL_DEVICE_NODES),
        cause="rocm-kfd-no-access",
    )


def _denied(facts: Facts, nodes: AccelNodes) -> Finding | None:
    blocked = [node for node in [nodes.kfd, *nodes.render_nodes] if node is not None and node.usable is False]
    if not blocked or nodes.is_root:
        return None
    groups = sorted({node.group for node in blocked if node.group})
    lacking = [group for group in groups if group not in nodes.user_groups]
    owners = f" (group {', '.join(groups)}" + (f"; this user is not in {', '.join(lacking)})" if lacking else ")")
    paths = ", ".join(node.path for node in blocked[:3]) + (" ..." if len(blocked) > 3 else "")
    message = f"this user cannot open {paths} read-write{owners if groups else ''}: ROCm finds no GPU"
    if facts.container.in_container:
        gids = sorted({node.gid for node in blocked if node.gid is not None})
        flags = "".join(f" --group-add {gid}" for gid in gids)
        fix = Fix(
            "Add the device nodes' owning groups to the container (by number: the image may not know the name).",
            (f"{DOCKER_FLAGS}{flags} IMAGE rocminfo",),
        )
    else:
        fix = Fix(
            "Add the user to the render and video groups, then log out and in again (or reboot).",
            (GROUP_FIX, "ls -l /dev/kfd /dev/dri/renderD*"),
            needs_root=True,
        )
    return Finding(Severity.PROBLEM, message, fix, (Ev.ACCEL_DEVICE_NODES,), cause="rocm-kfd-no-access")


@check("ROCM010", area="rocm", title="/dev/kfd and render nodes usable", vendor="amd")
def kfd_access(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: /dev/kfd exists and this user may open it read-write, and there is at least one
    /dev/dri/renderD* node per AMD GPU, also usable.

    Why it matters: every ROCm program (rocminfo, PyTorch, TensorFlow) opens /dev/kfd, the compute interface all
    AMD GPUs share, and one render node per GPU. Without them ROCm sees no GPU: rocminfo says
    `Unable to open /dev/kfd read-write: Permission denied` (the user lacks the group: /dev/kfd is owned by
    `render` on newer systems, `video` on older ones) or `No such file or directory` (the driver is not loaded,
    or a container was started without the devices).

    How to fix: `sudo usermod -a -G render,video $LOGNAME`, then log in again; in Docker
    `docker run --device=/dev/kfd --device=/dev/dri --group-add video ...`; in Apptainer
    `--bind=/dev/kfd,/dev/dri`; on the host, load the driver (`sudo modprobe amdgpu`) and read
    `sudo dmesg | grep -i amdgpu` for why it did not come up.
    """
    nodes = facts.accel_nodes
    said = _tool_kfd_error(facts)
    if said is not None and (not nodes.collected or nodes.kfd is None or nodes.kfd.usable is not True):
        # rocminfo's own words (a pasted report, or a run where the nodes were not read): they settle it.
        return Outcome(f"/dev/kfd: {said}", [_said_by_tool(facts, said)], {"error": said})
    gpus = amd_gpu_count(facts)
    if not gpus:
        return not_applicable("no AMD GPU")
    if not nodes.collected:
        return not_applicable("device nodes not collected (`ls -l /dev/kfd /dev/dri` shows them)")
    data: dict[str, object] = {"nodes": sorted(nodes.nodes), "groups": list(nodes.user_groups)}
    if nodes.kfd is None:
        return Outcome("/dev/kfd missing", [_missing_kfd(facts)], data)
    findings: list[Finding] = []
    denied = _denied(facts, nodes)
    if denied is not None:
        findings.append(denied)
    render = nodes.render_nodes
    if len(render) < gpus:
        findings.append(
            Finding(
                Severity.WARNING,
                f"{counted(len(render), '/dev/dri/renderD* node')} for {counted(gpus, 'AMD GPU')}: ROCm cannot "
                "use the GPUs without one",
                Fix(
                    "Pass /dev/dri whole into the container, or read why amdgpu did not set up every GPU.",
                    (f"{DOCKER_FLAGS} IMAGE rocminfo",)
                    if facts.container.in_container
                    else ("sudo dmesg | grep -iE 'amdgpu|kfd'",),
                    needs_root=not facts.container.in_container,
                ),
                (Ev.ACCEL_DEVICE_NODES,),
            )
        )
    if not findings:
        return ok(f"/dev/kfd and {counted(len(render), 'render node')} usable", data=data)
    return Outcome(f"/dev/kfd and {counted(len(render), 'render node')}", findings, data)


def _entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",")] if value.strip() else []


@check("ROCM011", area="rocm", title="GPU visibility variables", vendor="amd")
def visible_devices(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and (on a machine without NVIDIA GPUs)
    CUDA_VISIBLE_DEVICES do not hide every AMD GPU or name a GPU index that does not exist.

    Why it matters: the ROCm runtime shows a program only the devices these variables list (ROCR's list is
    applied first, then HIP's indices count within what it left). An empty value, `-1` or only wrong indices
    leave PyTorch with `torch.cuda.is_available() == False` on a machine whose GPUs are fine.

    How to fix: `unset HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES`, or set them to indices
    that exist (`export ROCR_VISIBLE_DEVICES=0,1`; `rocminfo` or `amd-smi list` numbers the GPUs).
    """
    if not amd_gpu_count(facts):
        return not_applicable("no AMD GPU")
    if not facts.env.collected:
        return not_applicable("environment not collected")
    names = [n for n in VISIBLE_VARIABLES if n != "CUDA_VISIBLE_DEVICES" or not facts.gpus]
    values = {name: facts.env.get(name) for name in names if facts.env.get(name) is not None}
    if not values:
        return ok("no visibility variable set")
    count = amd_device_count(facts)
    rocr = values.get("ROCR_VISIBLE_DEVICES")
    findings: list[Finding] = []
    for name, value in values.items():
        assert value is not None
        limit = count if name == "ROCR_VISIBLE_DEVICES" or rocr is None else len(_entries(rocr))
        entries = _entries(value)
        indices = [int(e) for e in entries if e.lstrip("-").isdigit()]
        wrong = [e for e in entries if e.isdigit() and limit is not None and int(e) >= limit]
        only_negative = len(indices) == len(entries) and all(i < 0 for i in indices)
        hides_all = not entries or only_negative or len(wrong) == len(entries)
        if not hides_all and not wrong:
            continue
        shown = repr(value) if value.strip() else "empty"
        what = "hides every AMD GPU" if hides_all else f"names GPU {', '.join(wrong)}, which does not exist"
        among = f" ({counted(limit, 'device')} to choose from)" if limit is not None else ""
        findings.append(
            Finding(
                Severity.WARNING,
                f"{name}={shown} {what}{among}",
                Fix(f"Unset {name}, or list GPU indices that exist.", (f"unset {name}", "rocminfo | grep -E 'Name:'")),
                (Ev.ENV,),
            )
        )
    data = {"variables": values, "devices": count}
    if not findings:
        return ok(", ".join(f"{n}={v}" for n, v in values.items()), data=data)
    return Outcome(", ".join(sorted(values)), findings, data)
