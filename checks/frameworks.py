"""Checks across every framework: which Python was probed, where CUDA libraries load from, how many GPUs each sees."""

from __future__ import annotations

import re

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.environment import resolve_visible_devices
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import JaxFacts, TensorflowFacts, TorchFacts
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import LABELS, FrameworkFacts, evidence_names, shadowing_fix, source_of

# A library name in the loaded set -> the pip nvidia-* distribution that ships it.
_PIP_PACKAGE_FOR_LIBRARY = {
    "libcudart": "nvidia-cuda-runtime",
    "libcudnn": "nvidia-cudnn",
    "libcublas": "nvidia-cublas",
    "libcublasLt": "nvidia-cublas",
    "libnvJitLink": "nvidia-nvjitlink",
    "libnvrtc": "nvidia-cuda-nvrtc",
    "libcusparse": "nvidia-cusparse",
    "libcufft": "nvidia-cufft",
    "libcurand": "nvidia-curand",
    "libcusolver": "nvidia-cusolver",
    "libnccl": "nvidia-nccl",
}
_SYSTEM_CUDA_DIR = re.compile(r"/cuda[^/:]*(/targets/[^/:]+)?/lib(64)?/?$|/cuda[^/:]*/compat/?$")


def _frameworks(facts: Facts) -> dict[str, FrameworkFacts]:
    return {"torch": facts.torch, "tensorflow": facts.tensorflow, "jax": facts.jax, "cupy": facts.cupy}


@check("FW001", area="frameworks", title="The target Python and its frameworks")
def target_python(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: which Python interpreter the framework probes ran in (`--python`, else the active
    virtual environment, else the active conda environment, else the Python gpudoctor runs in), and which
    of PyTorch, TensorFlow, JAX and CuPy it has.

    Why it matters: a GPU check run with a different Python than the one that trains proves nothing;
    `pipx install gpudoctor` lives in its own environment, so the probes go to the environment you use.

    How to fix: pass `--python /path/to/venv` (or the interpreter) when gpudoctor picked the wrong one.
    """
    target = facts.target_python
    frameworks = _frameworks(facts)
    probed = {name: fw for name, fw in frameworks.items() if fw.run.status != "not_collected"}
    if not probed:
        return not_applicable("no framework was probed")
    data = {
        "python": target.executable,
        "how": target.how,
        "version": target.version,
        "frameworks": {name: {"status": fw.run.status, "version": fw.version} for name, fw in probed.items()},
    }
    found = [
        f"{LABELS[n]} {fw.version}" for n, fw in probed.items() if fw.version and fw.run.status in ("ok", "from_report")
    ]
    absent = [LABELS[n] for n, fw in probed.items() if fw.run.status == "not_installed"]
    broken = [LABELS[n] for n, fw in probed.items() if fw.run.status in ("import_error", "crashed", "timed_out")]
    if all(source_of(fw) in ("collect_env", "log") for fw in probed.values()):
        return ok("frameworks from a pasted report: " + (", ".join(found) or "see below"), data)
    where = target.executable or "the target Python"
    version = f"Python {target.version}" if target.version else "Python"
    how = {
        "--python": "from --python",
        "VIRTUAL_ENV": "the active virtual environment",
        "CONDA_PREFIX": "the active conda environment",
    }.get(target.how or "", "gpudoctor's own Python")
    unrunnable = [
        fw
        for fw in probed.values()
        if fw.run.status == "crashed" and fw.run.error and "command not found" in fw.run.error
    ]
    if unrunnable and len(unrunnable) == len(probed):
        message = f"the target Python {where} could not be run: {unrunnable[0].run.error}"
        return Outcome(
            message,
            [
                Finding(
                    Severity.PROBLEM,
                    message,
                    Fix(
                        "Point --python at a working interpreter or environment.",
                        ("gpudoctor check --python /path/to/venv",),
                    ),
                    (Ev.TARGET_PYTHON,),
                )
            ],
            data,
        )
    parts = []
    if found:
        parts.append(", ".join(found))
    if broken:
        parts.append("broken: " + ", ".join(broken))
    if absent:
        parts.append("not installed: " + ", ".join(absent))
    findings = []
    if target.note:
        findings.append(Finding(Severity.INFO, target.note, None, (Ev.TARGET_PYTHON,)))
    if target.how not in ("--python", "VIRTUAL_ENV", "CONDA_PREFIX") and not found and not broken:
        findings.append(
            Finding(
                Severity.INFO,
                "no framework in gpudoctor's own Python (as with pipx): to check the "
                "environment you train in, activate it or pass --python",
                Fix("Point gpudoctor at your environment.", ("gpudoctor check --python /path/to/venv",)),
                (Ev.TARGET_PYTHON,),
            )
        )
    return ok(f"{where} ({version}, {how}): " + "; ".join(parts), data, findings)


@check("FW002", area="frameworks", title="Framework CUDA libraries load from the right place")
def library_shadowing(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: which CUDA libraries (cudart, cuDNN, cuBLAS, nvJitLink, ...) the framework processes
    really loaded (from their memory maps), whether a system copy was loaded where the framework's own pip
    nvidia-* package provides one, and whether LD_LIBRARY_PATH puts a system CUDA in front of them. Also
    reads the import errors this causes (`undefined symbol: __nvJitLinkComplete_12_4`).

    Why it matters: pip wheels of PyTorch, TensorFlow and JAX bring exact CUDA library versions; a system
    CUDA on LD_LIBRARY_PATH is searched first, so an older libnvJitLink or cuDNN gets loaded and the import
    fails with "undefined symbol", or cuDNN calls fail at run time.

    How to fix: remove the system CUDA directories from LD_LIBRARY_PATH (or put the pip package's lib
    directory first); the finding prints the command.
    """
    frameworks = {n: fw for n, fw in _frameworks(facts).items() if fw.run.status in ("ok", "import_error")}
    if not frameworks:
        return not_applicable("no framework was imported")
    library_path = facts.env.get("LD_LIBRARY_PATH") or ""
    system_dirs = [d for d in library_path.split(":") if d and _SYSTEM_CUDA_DIR.search(d)]
    findings: list[Finding] = []
    loaded: dict[str, list[str]] = {}
    for name, fw in frameworks.items():
        label = LABELS[name]
        evidence = evidence_names(name, fw) + ((Ev.ENV,) if system_dirs else ())
        error = " ".join(filter(None, [fw.run.error, fw.run.output_tail]))
        if re.search(r"undefined symbol: __nvJitLink|version `libnvJitLink|undefined symbol: \w*cudnn\w*", error):
            symbol = re.search(r"undefined symbol: [^\s,]+", error)
            findings.append(
                Finding(
                    Severity.PROBLEM,
                    f"`import {name}` fails with "
                    f'"{symbol.group(0) if symbol else "undefined symbol"}": an older CUDA library '
                    "from "
                    + (", ".join(system_dirs) or "outside the environment")
                    + " shadows the one its pip nvidia-* package brings",
                    shadowing_fix(fw),
                    evidence,
                    cause="ld-library-path-conflict",
                )
            )
        packages = {_family(d) for d in fw.nvidia_packages}
        for library in fw.loaded_libraries:
            loaded.setdefault(name, []).append(library.path)
            wanted = _PIP_PACKAGE_FOR_LIBRARY.get(library.name)
            if library.from_pip or wanted is None or wanted not in packages:
                continue
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"{label} loaded {library.path}, not the copy from its pip "
                    f"package {wanted}-*: the system library wins the search",
                    shadowing_fix(fw),
                    evidence,
                    cause="ld-library-path-conflict",
                )
            )
    data = {"ld_library_path_cuda_dirs": system_dirs, "loaded": loaded}
    if findings:
        return Outcome(findings[0].message, findings, data)
    uses_pip = any(fw.nvidia_packages for fw in frameworks.values())
    if system_dirs and uses_pip:
        note = (
            f"LD_LIBRARY_PATH holds {', '.join(system_dirs)} while pip nvidia-* libraries are installed: "
            "nothing was shadowed this time, but a newer framework wheel may be"
        )
        return ok("no shadowed CUDA library loaded", data, [Finding(Severity.INFO, note, None, (Ev.ENV,))])
    count = sum(len(v) for v in loaded.values())
    return ok(
        f"{count} CUDA librar{'ies' if count != 1 else 'y'} loaded, none shadowed"
        if count
        else "no CUDA library loaded by the frameworks (no GPU build or no GPU)",
        data,
    )


@check("FW003", area="frameworks", title="Frameworks see every GPU the driver sees")
def framework_visibility(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: how many GPUs each framework enumerates (PyTorch, TensorFlow, JAX, CuPy) against
    the GPUs NVML lists, after CUDA_VISIBLE_DEVICES is applied, and why they differ: the variable itself,
    MIG (one CUDA process sees a single MIG instance), a container given only some GPUs.

    Why it matters: a job configured for 8 GPUs that sees 1 runs 8× slower or fails at device 1 with
    "invalid device ordinal"; with MIG, multi-instance data parallelism in one process is impossible.

    How to fix: export CUDA_VISIBLE_DEVICES before starting Python (it is read once), name MIG instances by
    their MIG- UUID with one process each, start the container with `--gpus all`.
    """
    gpus = facts.gpus
    if not gpus:
        if facts.gpu_census.driver_listed:
            return not_applicable("the driver lists no GPU to compare with")
        return not_applicable("the driver's GPU list was not collected, nothing to compare with (`nvidia-smi -L`)")
    counts = {}
    for name, fw in _frameworks(facts).items():
        count = _gpu_count(fw)
        if count is not None:
            counts[name] = count
    if not counts:
        return not_applicable("no framework with GPU support reported its devices")
    uuids = [g.uuid for g in gpus if g.uuid] + [m.uuid for g in gpus for m in g.mig_devices if m.uuid]
    visible = resolve_visible_devices(facts.env.get("CUDA_VISIBLE_DEVICES"), len(gpus), uuids)
    mig_on = any((g.mig_mode_current or "").lower() == "enabled" for g in gpus)
    expected = len(visible.visible) if visible.set else len(gpus)
    if mig_on:
        expected = min(expected, 1) if not visible.set else min(len(visible.visible), 1)
    data = {
        "driver_gpus": len(gpus),
        "expected": expected,
        "counts": counts,
        "mig": mig_on,
        "cuda_visible_devices": visible.raw,
    }
    findings = []
    for name, count in counts.items():
        if count >= expected or count == 0:
            continue  # none at all is the framework's own check's business (TORCH005, TF002, JAX001, CUPY001)
        message = f"{LABELS[name]} sees {count} of the {expected} GPUs it should"
        findings.append(Finding(Severity.WARNING, message, None, evidence_names(name, _frameworks(facts)[name])))
    reasons = []
    if visible.set:
        reasons.append(f"CUDA_VISIBLE_DEVICES={visible.raw!r} leaves {len(visible.visible)} of {len(gpus)}")
    if mig_on:
        reasons.append("MIG is on: one CUDA process enumerates a single MIG instance")
    listing = ", ".join(f"{LABELS[n]} {c}" for n, c in counts.items())
    summary = f"driver: {len(gpus)} GPU{'s' if len(gpus) != 1 else ''}; {listing}"
    if reasons:
        summary += f" ({'; '.join(reasons)})"
    if findings:
        return Outcome(summary, findings, data)
    return ok(summary, data)


def _gpu_count(fw: FrameworkFacts) -> int | None:
    if fw.run.status not in ("ok", "from_report"):
        return None
    if isinstance(fw, TorchFacts):
        if not fw.cuda:
            return None
        if fw.device_count is not None:
            return fw.device_count
        return len(fw.devices) if fw.devices else None  # a pasted report does not say how many
    if isinstance(fw, TensorflowFacts):
        return len(fw.gpus) if fw.gpus_listed and fw.built_with_cuda else None
    if isinstance(fw, JaxFacts):
        if not fw.plugins:
            return None
        return sum(1 for d in fw.devices if d.platform in ("gpu", "cuda"))
    return fw.device_count


def _family(distribution: str) -> str:
    """ "nvidia-cudnn-cu12" -> "nvidia-cudnn": the package family, whatever its CUDA suffix."""
    return re.sub(r"-cu\d+$", "", distribution.lower())
