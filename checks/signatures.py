"""Known error messages found anywhere in the evidence, one check per area they point at.

Every free text (a paste, logs, ``nvidia-smi`` output, the kernel log, probe stderr and tracebacks) is scanned
for the error-signature catalogue (``gpudoctor.kb.signatures``; ``gpudoctor explain --signatures`` lists it).
A message lands in the area of the component it points at, so it is read in the same bottom-up order as the
structured checks, and names the same root causes they do: when a structured check has already named the
cause, the runner shows the message under that finding instead of as a second problem.

Known-harmless messages (TensorRT not found, the NUMA "-1" notice, WSL's "is not a symbolic link") are notes:
they explain a line people often mistake for the cause, and never make a check fail.
"""

from __future__ import annotations

from gpudoctor.api import CheckContext, CheckSpec, check, not_applicable
from gpudoctor.facts.expectations import GPU_STACK_AREAS
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.signature_scan import SignatureMatch
from gpudoctor.results import Finding, Outcome, Severity, judged
from gpudoctor_checks._cause_fixes import fix_for

_SEVERITY = {"problem": Severity.PROBLEM, "warning": Severity.WARNING, "info": Severity.INFO}

_DOC = """What it checks: whether any text in the evidence (a pasted report or log, nvidia-smi's output and
errors, the kernel log, the framework probes' stderr and tracebacks) holds a known error message about
{what}, from gpudoctor's error-signature catalogue ({count_note}).

Why it matters: the structured checks read the values they know; an error line in free text is often the
only clue, and the thread it comes from usually settles the cause.

How to fix: each finding quotes the line, says what it means, names the likely causes in order, and gives the
fix for the likeliest. `gpudoctor kb signatures` lists the catalogue with its public sources."""

# Area -> (code, title, what the area's messages are about).
AREA_CHECKS: dict[str, tuple[str, str, str]] = {
    "pci": ("PCI003", "No PCI bus errors in the logs", "the GPU on the PCI bus"),
    "driver": ("DRV006", "No driver errors in the logs", "the NVIDIA driver and kernel module"),
    "nvml": ("NVML003", "No NVML errors in the logs", "NVML and nvidia-smi"),
    "gpus": ("GPU004", "No GPU-use errors in the logs", "using the GPUs (memory, compute mode, MIG)"),
    "health": ("HEALTH008", "No GPU health errors in the logs", "GPU health (Xid, ECC, lost GPUs)"),
    "topology": ("TOPO006", "No multi-GPU or NCCL errors in the logs", "multi-GPU communication and NCCL"),
    "cuda": ("CUDA003", "No CUDA runtime or library errors in the logs", "the CUDA runtime and its libraries"),
    "cudnn": ("CUDNN002", "No cuDNN errors in the logs", "cuDNN"),
    "devices": ("DEV002", "No device-node errors in the logs", "the GPU device nodes and their permissions"),
    "environment": ("ENV005", "No container or WSL errors in the logs", "containers, WSL and the environment"),
    "frameworks": ("FW004", "No framework-wide GPU errors in the logs", "the Python environment and frameworks"),
    "pytorch": ("TORCH006", "No PyTorch GPU errors in the logs", "PyTorch"),
    "tensorflow": ("TF003", "No TensorFlow GPU errors in the logs", "TensorFlow and XLA"),
    "jax": ("JAX002", "No JAX GPU errors in the logs", "JAX"),
    "cupy": ("CUPY002", "No CuPy GPU errors in the logs", "CuPy"),
    "rocm": ("ROCM090", "No AMD GPU or ROCm errors in the logs", "AMD GPUs, amdgpu and the ROCm stack"),
    "xpu": ("XPU090", "No Intel GPU errors in the logs", "Intel GPUs, Level Zero and torch.xpu"),
    "mps": ("MPS090", "No Apple GPU errors in the logs", "Apple's MPS and Metal"),
    "tpu": ("TPU090", "No TPU errors in the logs", "Google TPUs and libtpu"),
}


def match_finding(match: SignatureMatch, facts: Facts) -> Finding:
    """One matched message as a finding: what it means, the likely causes, the fix for the likeliest."""
    from gpudoctor.kb.causes import cause as cause_entry
    from gpudoctor.kb.causes import cause_title, in_context

    signature = match.signature
    causes = in_context(signature.causes, match.contexts)
    first = cause_entry(causes[0]) if causes else None
    message = signature.meaning.rstrip(".")
    if causes and signature.severity != "info":
        message += f" — likely cause: {cause_title(causes[0])}"
        if len(causes) > 1:
            message += "; else " + "; ".join(cause_title(c) for c in causes[1:3])
    where = f"{match.source}, line {match.line}" + (f", {match.count}×" if match.count > 1 else "")
    return Finding(
        _SEVERITY[signature.severity],
        f"{message} ({where}; signature {signature.id})",
        fix_for(first.fix, facts) if first and signature.severity != "info" else None,
        (match.source,),
        cause=causes[0] if causes and signature.severity != "info" else "",
        other_causes=tuple(causes[1:]) if signature.severity != "info" else (),
        quote=match.quote,
    )


# Where an error without an NVIDIA GPU on the bus is what asking for one prints: the GPU stack, and JAX and CuPy,
# which also say "a GPU may be present" from a stale /dev/nvidiactl alone (not in GPU_STACK_AREAS, whose errors
# also mean someone expected a GPU: a stale device node does not).
_GPU_USE_AREAS = GPU_STACK_AREAS | {"jax", "cupy"}


def _expected_without_gpu(finding: Finding, why: str = "there is no NVIDIA GPU on the PCI bus") -> Finding:
    if finding.severity is Severity.INFO:
        return finding
    return Finding(
        Severity.INFO, f"expected here, {why}: {finding.message}", None, finding.evidence, quote=finding.quote
    )


def _tpu_machine(facts: Facts) -> bool:
    """A TPU machine with no NVIDIA GPU known: JAX tries its CUDA and ROCm backends there too, and says they failed."""
    return "google" in facts.vendors_in_evidence and not facts.gpus and not facts.pci_gpus


def _outcome(area: str, facts: Facts) -> Outcome:
    matches = [m for m in facts.signature_matches if m.signature.component == area]
    what = AREA_CHECKS[area][2]
    if not matches:
        return not_applicable(f"no known error message about {what} in the evidence")
    findings = [match_finding(m, facts) for m in matches]
    if facts.gpu_census.none_on_bus and area in _GPU_USE_AREAS:
        findings = [_expected_without_gpu(f) for f in findings]
    elif area == "jax" and _tpu_machine(facts):
        findings = [
            _expected_without_gpu(f, "this is a TPU machine (JAX tries every backend it has)") for f in findings
        ]
    notes = sum(1 for f in findings if f.severity is Severity.INFO)
    return judged(
        findings,
        {"signatures": [m.signature.id for m in matches]},
        f"only known-harmless messages ({notes}) about {what}",
    )


def _area_check(area: str) -> CheckSpec:
    code, title, what = AREA_CHECKS[area]

    def run(facts: Facts, ctx: CheckContext) -> Outcome:
        return _outcome(area, facts)

    run.__doc__ = _DOC.format(what=what, count_note="its signatures for this area")
    run.__name__ = run.__qualname__ = f"errors_about_{area}"
    return check(code, area=area, title=title)(run)


PCI003 = _area_check("pci")
DRV006 = _area_check("driver")
NVML003 = _area_check("nvml")
GPU004 = _area_check("gpus")
HEALTH008 = _area_check("health")
TOPO006 = _area_check("topology")
CUDA003 = _area_check("cuda")
CUDNN002 = _area_check("cudnn")
DEV002 = _area_check("devices")
ENV005 = _area_check("environment")
FW004 = _area_check("frameworks")
TORCH006 = _area_check("pytorch")
TF003 = _area_check("tensorflow")
JAX002 = _area_check("jax")
CUPY002 = _area_check("cupy")
ROCM090 = _area_check("rocm")
XPU090 = _area_check("xpu")
MPS090 = _area_check("mps")
TPU090 = _area_check("tpu")
