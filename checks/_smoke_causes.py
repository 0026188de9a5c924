"""Why a smoke measurement fell short, and what to do: the causes and fixes the SMOKE checks print."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor import kb
from gpudoctor.api import Fix
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.gpu_state import SLOWING_REASONS
from gpudoctor.facts.smoke_model import MatmulResult, SmokeDevice, SmokeFacts
from gpudoctor_checks import _smoke
from gpudoctor_checks._frameworks import capabilities, driver_version, gpus_present, os_and_machine
from gpudoctor_checks._smoke import BELOW_SPEC, SMALL_MATMUL

if TYPE_CHECKING:
    from gpudoctor.kb.gpu_specs import GpuSpec

# (the row, its TFLOP/s, the spec sheet's peak for its dtype) of a matmul below half of its spec
LowMatmul = tuple[MatmulResult, float, float]


def install_command(facts: Facts, smoke: SmokeFacts, python: str, module: str) -> str:
    """pip for the framework the smoke needs: torch from the index this machine needs, never a blind download."""
    if module != "torch":
        return f"{python} -m pip install {module}"
    if not gpus_present(facts):
        return f"{python} -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    target = smoke.python
    os_name, machine = os_and_machine(target)
    choice = kb.choose_torch_wheel(
        driver_version=driver_version(facts),
        compute_capabilities=capabilities(facts),
        python_version=target.version if target is not None else None,
        os=os_name,
        machine=machine,
    )
    if choice.status == "ok" and choice.requirement:
        index = f" --index-url {choice.index_url}" if choice.index_url else ""
        return f'{python} -m pip install "{choice.requirement}"{index}'
    return f"{python} -m pip install torch"


def matmul_causes(
    facts: Facts, found: SmokeDevice | None, rows: list[MatmulResult], low: list[LowMatmul], spec: GpuSpec
) -> tuple[list[str], list[str]]:
    """Likely causes of a slow matmul from what the evidence shows, and the commands that check or fix them."""
    causes: list[str] = []
    index = _smoke.smi_index(facts, found)
    flag = f" -i {index}" if index is not None else ""
    commands = [
        f"nvidia-smi -q -d PERFORMANCE{flag}",
        "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
    ]
    state = _smoke.state_for(facts, found)
    if state is not None:
        slowing = state.slowing_reasons
        if slowing:
            causes.append(
                "clocks were held back when the evidence was read: "
                + "; ".join(SLOWING_REASONS[reason] for reason in slowing)
            )
        if state.power_capped:
            causes.append(
                f"the power limit is {state.power_limit_w:g} W, below the board's default "
                f"{state.default_power_limit_w:g} W"
            )
            commands.append(f"nvidia-smi -q -d POWER{flag}")
            commands.append(f"sudo nvidia-smi{flag} -pl {state.default_power_limit_w:g}")
        others = [p for p in state.processes if p.type is None or "C" in p.type]
        if others:
            shown = ", ".join(
                f"{p.name or '?'} (PID {p.pid}{', ' + str(p.used_mib) + ' MiB' if p.used_mib else ''})"
                for p in others[:3]
            )
            more = f" and {len(others) - 3} more" if len(others) > 3 else ""
            causes.append(f"other processes were using this GPU: {shown}{more}")
        if state.mig_enabled:
            causes.append("MIG is enabled: the work ran on a MIG slice, a fraction of the GPU")
    gpu = _smoke.gpu_for_device(facts, found)
    if (state is None or not state.mig_enabled) and gpu is not None and gpu.mig_mode_current == "Enabled":
        causes.append("MIG is enabled: the work ran on a MIG slice, a fraction of the GPU")
    if (
        found is not None
        and found.memory_total_mib
        and found.memory_free_mib is not None
        and found.memory_free_mib < 0.5 * found.memory_total_mib
    ):
        causes.append(
            f"only {found.memory_free_mib} of {found.memory_total_mib} MiB were free: something else holds this GPU"
        )
    by_dtype = {r.dtype: r.tflops for r in rows if r.tflops is not None}
    low_dtypes = {r.dtype for r, _, _ in low}
    fp32 = by_dtype.get("fp32")
    fp32_fine = fp32 is not None and spec.fp32_tflops and fp32 >= BELOW_SPEC * spec.fp32_tflops
    if fp32_fine and low_dtypes & {"fp16", "bf16", "tf32"}:
        causes.append(
            f"{'/'.join(sorted(low_dtypes))} ran far below the tensor-core rate while fp32 is fine: the "
            "matmuls may not use tensor cores (a dtype or shape the kernels do not cover, or a framework "
            "build without tensor-core kernels for this GPU)"
        )
    tf32 = by_dtype.get("tf32")
    if "tf32" in low_dtypes and tf32 is not None and fp32 is not None and tf32 < 1.2 * fp32:
        override = facts.env.get("NVIDIA_TF32_OVERRIDE") if facts.env else None
        causes.append(
            "tf32 ran at the fp32 rate: TF32 is switched off"
            + (
                f" (NVIDIA_TF32_OVERRIDE={override})"
                if override is not None
                else " (torch.backends.cuda.matmul.allow_tf32 / NVIDIA_TF32_OVERRIDE=0)"
            )
        )
    small = [r.n for r, _, _ in low if r.n is not None and r.n < SMALL_MATMUL]
    if small:
        causes.append(
            f"n={min(small)} may be too small to keep this GPU busy (quick mode): "
            "`gpudoctor smoke --full` uses larger matrices"
        )
    return causes, commands


def cnn_fix(error: str) -> Fix:
    lowered = error.lower()
    if "out of memory" in lowered:
        return Fix(
            "The GPU ran out of memory for a small model: other processes hold its memory.",
            ("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",),
        )
    if "cudnn" in lowered:
        return Fix(
            "cuDNN failed: the cuDNN the framework loaded does not fit this GPU or driver; the cuDNN and "
            "PyTorch checks of `gpudoctor check` show which one it loaded.",
            ("gpudoctor check",),
        )
    if "no kernel image" in lowered:
        return Fix(
            "The framework has no kernels for this GPU's architecture: TORCH004 prints the wheel that has.",
            ("gpudoctor check",),
        )
    return Fix("The error is the framework's own; `gpudoctor check` matches the usual causes.", ("gpudoctor check",))


def numa_hint(facts: Facts, found: SmokeDevice | None) -> tuple[str | None, str | None]:
    nodes = _smoke.numa_nodes(facts)
    node = _smoke.numa_node_of(facts, found)
    if len(nodes) < 2:
        return None, None
    if node is None:
        return "this machine has several NUMA nodes: a copy from memory on the far node is slower", None
    return (
        f"this machine has {len(nodes)} NUMA nodes and the GPU hangs off node {node}: pinned memory on the "
        "other node crosses the CPU interconnect"
    ), f"numactl --cpunodebind={node} --membind={node} gpudoctor smoke"


P2P_FIX = Fix(
    "Peer access needs a PCIe path that allows it: turn off ACS on the bridges between the GPUs (a BIOS option), "
    "boot with iommu=pt or the IOMMU off on bare metal, and in a VM use a hypervisor that passes P2P through. "
    "Consumer GeForce cards often have peer access disabled by the driver (`nvidia-smi topo -p2p r` shows GNS). "
    "Without it NCCL stages copies through host memory: it works, slower.",
    ("nvidia-smi topo -p2p r", "nvidia-smi topo -m", "sudo lspci -vvv | grep -i acsctl", "cat /proc/cmdline"),
)


def allreduce_fix(error: str) -> Fix:
    lowered = error.lower()
    if "shm" in lowered or "shared memory" in lowered or "bus error" in lowered:
        return Fix(
            "NCCL and gloo need shared memory; a container's default /dev/shm (64 MB) is too small. Start "
            "the container with --ipc=host or a larger --shm-size.",
            ("df -h /dev/shm", "docker run --ipc=host ...  # or --shm-size=16g"),
        )
    if "address already in use" in lowered:
        return Fix("The rendezvous port is taken; pick another.", ("export MASTER_PORT=29533",))
    return Fix(
        "Run it again with NCCL's own log to see which transport fails.", ("NCCL_DEBUG=INFO gpudoctor smoke --full",)
    )
