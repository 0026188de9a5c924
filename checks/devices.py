"""Device node checks: /dev/nvidia* exist and this user may open them."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome
from gpudoctor.words import counted


@check("DEV001", area="devices", title="GPU device nodes present and usable")
def device_nodes(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: /dev/nvidiactl, /dev/nvidia-uvm and one /dev/nvidiaN per GPU exist, are character
    devices, and are readable and writable by the user running gpudoctor.

    Why it matters: CUDA opens these nodes. Without /dev/nvidia-uvm CUDA initialisation fails even though
    nvidia-smi works; without read/write permission NVML reports "Insufficient Permissions" and CUDA finds
    no device.

    How to fix: `sudo nvidia-modprobe -u -c=0` (or `sudo modprobe nvidia-uvm`) creates the missing nodes;
    for permissions add the user to the group owning them (`sudo usermod -aG video $USER`) or fix the udev
    rule; in a container, start it with `--gpus`.
    """
    nodes = facts.device_nodes
    if not nodes.collected:
        return not_applicable("device nodes not collected (`ls -l /dev/nvidia*` shows them)")
    if facts.container.wsl:
        dxg = nodes.nodes.get("/dev/dxg")
        if dxg:
            return ok("WSL2 GPU node /dev/dxg present", data={"nodes": ["/dev/dxg"]})
        return not_applicable("WSL: /dev/dxg absent")
    present = sorted(nodes.nodes)
    data = {"nodes": present}
    if not facts.driver.kernel_module_loaded:
        if not (facts.collected(Ev.PROC_DRIVER_VERSION) or facts.collected(Ev.PROC_MODULES)):
            listing = f": {', '.join(present)}" if present else ": none"
            return not_applicable(f"whether the kernel module is loaded is not known; nodes present{listing}", data)
        if present:
            return not_applicable(f"kernel module not loaded; stale nodes present: {', '.join(present)}", data)
        return not_applicable("kernel module not loaded", data)
    findings = []
    root_fix = Fix(
        "Create the missing device nodes.",
        ("sudo nvidia-modprobe -u -c=0", "sudo modprobe nvidia-uvm"),
        needs_root=True,
    )
    for required in ("/dev/nvidiactl", "/dev/nvidia-uvm"):
        if required not in nodes.nodes:
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"{required} is missing: CUDA cannot initialise",
                    root_fix,
                    (Ev.DEVICE_NODES,),
                    cause="nvidia-uvm-not-loaded" if required == "/dev/nvidia-uvm" else "",
                )
            )
    gpu_count = len(facts.gpus)
    gpu_nodes = nodes.gpu_nodes()
    if gpu_count and len(gpu_nodes) < gpu_count:
        findings.append(
            Finding(
                Severity.WARNING,
                f"{counted(len(gpu_nodes), '/dev/nvidiaN node')} for {counted(gpu_count, 'GPU')}",
                root_fix,
                (Ev.DEVICE_NODES,),
            )
        )
    denied = [n.path for n in nodes.nodes.values() if n.char_device and (n.readable is False or n.writable is False)]
    if denied:
        findings.append(
            Finding(
                Severity.PROBLEM,
                f"this user cannot open {', '.join(denied)}",
                Fix(
                    "Give the user access to the GPU device nodes, then log in again.",
                    ("ls -l /dev/nvidia*", "sudo usermod -aG video,render $USER"),
                    needs_root=True,
                ),
                (Ev.DEVICE_NODES,),
                cause="nvml-no-permission",
            )
        )
    if not findings:
        return ok(f"{len(present)} nodes, all readable and writable", data=data)
    return Outcome(f"{counted(len(present), 'node')} present", findings, data)
