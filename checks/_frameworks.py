"""What the framework checks share: the GPUs a framework should see, probe statuses, pip commands.

The fix a framework check prints is a command for the *target* Python (the one
probed), so it installs into the environment that was diagnosed and not into
whichever ``pip`` comes first on PATH.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpudoctor import kb
from gpudoctor.api import Finding, Fix, Severity, not_applicable
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.keys import framework_key
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import (
    CupyFacts,
    FrameworkDevice,
    JaxFacts,
    PythonTarget,
    TensorflowFacts,
    TorchFacts,
)
from gpudoctor.facts.model import GpuInfo
from gpudoctor.facts.sources_state import Missing, Why
from gpudoctor.results import Outcome

if TYPE_CHECKING:
    from gpudoctor.kb.torch_choice import WheelChoice

# What a framework probe (or a pasted report) says about one framework of the target Python.
FrameworkFacts = TorchFacts | TensorflowFacts | JaxFacts | CupyFacts

LABELS = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "cupy": "CuPy"}
MODULES = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax", "cupy": "cupy"}
PIP_INDEX = "https://download.pytorch.org/whl"


def probe_file(framework: str) -> Ev:
    return framework_key(framework)


def source_of(fw: FrameworkFacts) -> str:
    """Where a framework's facts came from: "probe", or a pasted "collect_env" report / TensorFlow "log"."""
    return fw.source if isinstance(fw, (TorchFacts, TensorflowFacts)) else "probe"


def evidence_names(framework: str, fw: FrameworkFacts) -> tuple[str, ...]:
    source = source_of(fw)
    if source == "collect_env":
        return (Ev.TORCH_COLLECT_ENV,)
    if source == "log":
        return (Ev.TENSORFLOW_LOG,)
    return (probe_file(framework),)


def python_words(python: PythonTarget | None) -> str:
    """ "/venv/bin/python (Python 3.12.3)" — which interpreter a statement is about."""
    if python is None:
        return "the reported Python"
    version = f"Python {python.version}" if python.version else "Python"
    return f"{python.executable} ({version})" if python.executable else version


def pip(python: PythonTarget | None) -> str:
    """The pip of the target Python: ``/venv/bin/python -m pip``; plain ``python -m pip`` for a pasted report."""
    executable = python.executable if python is not None else None
    if python is None or not executable:
        return "python -m pip"
    if python.os == "windows":
        return f'"{executable}" -m pip' if " " in executable else f"{executable} -m pip"
    return f"{shlex.quote(executable)} -m pip"


def os_and_machine(python: PythonTarget | None) -> tuple[str, str]:
    os_name = (python.os if python is not None else None) or "linux"
    machine = ((python.machine if python is not None else None) or "x86_64").lower()
    if machine in ("amd64", "x64"):
        machine = "x86_64"
    if machine == "arm64" and os_name == "linux":
        machine = "aarch64"
    return os_name, machine


# --------------------------------------------------------------------------- the GPUs


def nvidia_gpus(facts: Facts) -> list[GpuInfo]:
    """The NVIDIA GPUs the driver (or a pasted report) knows of."""
    return list(facts.gpus)


def gpus_present(facts: Facts) -> bool:
    """An NVIDIA GPU is here: a source lists one (the driver, the PCI bus, the topology table, a framework), or
    the evidence implies one (a loaded NVIDIA kernel module, an nvidia-smi that printed its driver version)."""
    return facts.gpu_census.present


def _not_known(missing: Missing | None) -> Missing | None:
    """The reason, when it makes the value unknown rather than known to be absent."""
    return missing if missing is not None and missing.why in (Why.NOT_COLLECTED, Why.FAILED) else None


def gpus_unknown(facts: Facts) -> str | None:
    """Why it is not known whether an NVIDIA GPU is here, in words; None when one is shown or a PCI scan showed
    none.  Unknown is not absent: only a scan of the PCI bus establishes that there is no GPU."""
    census = facts.gpu_census
    if census.present or census.none_on_bus:
        return None
    report = facts.collect_env
    said = report.missing.get("gpu_names") if report is not None else None
    if said is not None and said.error:
        return f"the report's GPU list says {said.error!r}, and the PCI bus was not read"
    return census.unknown_words()


def driver_unknown(facts: Facts) -> Missing | None:
    """Why the driver is not known, when no source names one and a pasted collect_env report printed
    "Could not collect" (or "No CUDA": nvidia-smi gave it nothing) for it; None when a source names it or the
    kernel module's state was read."""
    driver = facts.driver
    if driver.kernel_version or driver.userspace_version or facts.collect_env is None:
        return None
    if facts.collected(Ev.PROC_DRIVER_VERSION) or facts.collected(Ev.PROC_MODULES):
        return None
    said = facts.collect_env.missing.get("driver_version")
    if said is not None and (said.error or "").lower() == "no cuda":
        # collect_env prints "No CUDA" when nvidia-smi gave it nothing at all: missing, or not answering.
        return Missing(Why.FAILED, said.source, said.error)
    return _not_known(said)


def gpu_check_commands() -> tuple[str, ...]:
    """What settles whether a machine has an NVIDIA GPU and a working driver, typed on that machine."""
    return ("nvidia-smi", "lspci -nn | grep -i nvidia", "gpudoctor collect  # everything at once")


def driver_version(facts: Facts) -> str | None:
    """The driver to choose wheels for: the loaded one, else the installed user space (what will load)."""
    driver = facts.driver
    return driver.kernel_version or driver.userspace_version


def driver_usable(facts: Facts) -> bool:
    return bool(facts.driver.kernel_module_loaded or facts.container.wsl)


def capabilities(facts: Facts, devices: Iterable[FrameworkDevice] = ()) -> list[str]:
    """Compute capabilities of the GPUs: the framework's own view first, then the driver's, then the KB's."""
    found = [d.compute_capability for d in devices if d.compute_capability]
    if found:
        return sorted(set(found))
    return sorted({g.compute_capability for g in facts.gpus if g.compute_capability})


def gpu_names(facts: Facts) -> str:
    names = [g.name for g in facts.gpus if g.name]
    if not names:
        census = facts.gpu_census
        count = census.count
        if count:
            where = census.shown_by[0] if census.shown_by else "the evidence"
            where = "on the bus" if where == "the PCI bus" else f"(shown by {where})"
            return f"{count} NVIDIA GPU{'s' if count != 1 else ''} {where}"
        return f"an NVIDIA GPU ({census.implied_by})" if census.implied_by else "no NVIDIA GPU"
    distinct = sorted(set(names))
    if len(distinct) == 1:
        return f"{len(names)}× {distinct[0]}" if len(names) > 1 else distinct[0]
    return ", ".join(names)


# --------------------------------------------------------------------------- probe statuses


def probe_status_outcome(framework: str, fw: FrameworkFacts) -> Outcome | None:
    """The outcome when the framework could not be probed at all; None when it imported fine."""
    label = LABELS[framework]
    run = fw.run
    where = python_words(fw.python)
    evidence = evidence_names(framework, fw)
    data: dict[str, Any] = {"status": run.status, "python": fw.python.executable if fw.python else None}
    if run.status in ("ok", "from_report"):
        return None
    if run.status == "not_collected":
        return not_applicable(f"{label} was not probed (no --python target, or probes were skipped)", data)
    if run.status == "not_installed":
        return not_applicable(f"{label} is not installed in {where}", data)
    tail = run.output_tail or ""
    data["output_tail"] = tail
    last_line = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
    module = MODULES[framework]
    debug = Fix("Run the import by hand to see the whole output.", (f"{_python(fw.python)} -c 'import {module}'",))
    if run.status == "timed_out":
        # The runner names what hung (the interpreter itself, or the import); its words win over a guess.
        message = (
            f"{run.error} ({where})"
            if run.error
            else f"importing {module} in {where} did not finish within the probe timeout "
            f"({run.duration_s or 0:.0f} s): it hangs, often on a stuck GPU or a slow network file system"
        )
        return Outcome(message, [Finding(Severity.PROBLEM, message, debug, evidence)], data)
    if run.status == "crashed":
        message = f"the {label} probe crashed in {where}: {run.error or 'no result'}"
        if last_line and last_line not in message:
            message += f" (last output: {last_line[:200]})"
        return Outcome(message, [Finding(Severity.PROBLEM, message, debug, evidence)], data)
    # import_error
    error = run.error or last_line or "unknown error"
    message = f"`import {module}` fails in {where}: {error[:300]}"
    fix = import_error_fix(framework, fw, error)
    return Outcome(message, [Finding(Severity.PROBLEM, message, fix, evidence, cause=import_error_cause(error))], data)


def _shadowed(error: str) -> bool:
    return "__nvJitLink" in error or "libnvJitLink" in error or ("undefined symbol" in error and "/nvidia/" in error)


def import_error_cause(error: str) -> str:
    """The causes-table id an import error names: a shadowed or a missing CUDA library; "" for anything else."""
    if _shadowed(error):
        return "ld-library-path-conflict"
    if "cannot open shared object file" in error:
        return "cuda-libs-missing"
    return ""


def _python(python: PythonTarget | None) -> str:
    executable = python.executable if python is not None else None
    return shlex.quote(executable) if executable else "python"


def import_error_fix(framework: str, fw: FrameworkFacts, error: str) -> Fix:
    module = MODULES[framework]
    if _shadowed(error):
        return shadowing_fix(fw)
    if "cannot open shared object file" in error:
        return Fix(
            f"A CUDA library {module} needs is missing; reinstalling pulls its pip nvidia-* libraries back.",
            (f"{pip(fw.python)} install --force-reinstall --no-deps {module}", f"{pip(fw.python)} check"),
        )
    return Fix(
        f"Reinstall {module} in this environment and check its dependencies.",
        (f"{pip(fw.python)} install --force-reinstall {module}", f"{pip(fw.python)} check"),
    )


def shadowing_fix(fw: FrameworkFacts) -> Fix:
    return Fix(
        "A system CUDA on LD_LIBRARY_PATH shadows the pip nvidia-* libraries the wheel was built with. "
        "Drop the CUDA directories from LD_LIBRARY_PATH (for this shell and in ~/.bashrc).",
        ('export LD_LIBRARY_PATH=$(echo "$LD_LIBRARY_PATH" | tr : "\\n" | grep -v -E "/cuda[^/]*/" | paste -sd:)',),
    )


# --------------------------------------------------------------------------- fixes that choose a wheel


def torch_wheel_fix(
    facts: Facts, torch: TorchFacts, summary: str, uninstall_first: bool
) -> tuple[Fix | None, WheelChoice]:
    """The pip commands that install the PyTorch wheel this machine needs, and the KB's choice behind them."""
    os_name, machine = os_and_machine(torch.python)
    choice = kb.choose_torch_wheel(
        driver_version=driver_version(facts),
        compute_capabilities=capabilities(facts, torch.devices),
        python_version=torch.python.version if torch.python is not None else None,
        os=os_name,
        machine=machine,
        torch_version=torch.base_version,
    )
    if choice.status != "ok" or not choice.requirement:
        notes = [n for n in (choice.python_note, "; ".join(choice.reasons) or None) if n]
        return Fix(summary + " No published wheel fits: " + (" ".join(notes) or "see the reasons above."), ()), choice
    commands = []
    if uninstall_first:
        if torch.origin.installer == "conda" or (torch.origin.conda_channel and torch.source != "collect_env"):
            commands.append("conda remove -y pytorch torchvision torchaudio cpuonly")
        else:
            commands.append(f"{pip(torch.python)} uninstall -y torch torchvision torchaudio")
    index = f" --index-url {choice.index_url}" if choice.index_url else ""
    commands.append(f'{pip(torch.python)} install "{choice.requirement}"{index}')
    variant = choice.variant or ""
    cuda = f" (CUDA {variant[2:-1]}.{variant[-1]})" if re.fullmatch(r"cu\d{3}", variant) else ""
    text = f"{summary} Chosen: torch {choice.torch} {choice.variant}{cuda}, the newest build this driver, GPU and Python run."
    if choice.python_note:
        text += f" {choice.python_note}"
    if choice.upgrade_driver_to:
        text += f" A driver ≥ {choice.upgrade_driver_to} would allow newer builds."
    text += " Reinstall torchvision/torchaudio from the same index if you use them."
    return Fix(text, tuple(commands)), choice


def torch_origin_words(torch: TorchFacts) -> str | None:
    """Where torch came from, in words that claim no more than the environment records: the direct URL of a
    local wheel or folder, a VCS checkout or a file URL when there is one; otherwise the build its version
    names ("a download.pytorch.org/whl/cpu build": only that index builds "+cpu" wheels, but pip does not
    record which index or mirror, or which --find-links folder, this copy came through)."""
    origin = torch.origin
    if origin.url:
        local = local_path(origin.url)
        return f"installed from the local file {local}" if local else f"installed from {origin.url}"
    hint = origin.index_hint
    if not hint:
        return None
    if hint.startswith("download.pytorch.org/"):
        return f"a {hint} build"
    if hint == "pypi":
        return "a PyPI build"
    return f"from {hint}"


def local_path(url: str) -> str | None:
    """The path of a ``file:`` URL (a wheel or folder on this machine), else None."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    return unquote(parts.path) or None if parts.scheme.lower() == "file" else None


def local_install_note(facts: Facts, torch: TorchFacts) -> Finding | None:
    """A note for torch installed from a local file: it came from there, not from download.pytorch.org or
    PyPI, whatever its version tag says; PyTorch's index command is the way to the build this machine needs."""
    local = local_path(torch.origin.url) if torch.origin.url else None
    if local is None:
        return None
    tag = torch.version.split("+", 1)[1] if torch.version and "+" in torch.version else None
    build = f" (a +{tag} build, as download.pytorch.org/whl/{tag} publishes them)" if tag else ""
    what = f"torch {torch.version}" if torch.version else "torch"
    message = f"{what} was installed from the local file {local}{build}, not from a package index"
    fix, _ = torch_wheel_fix(
        facts, torch, "To get the build this machine needs from PyTorch's own index instead:", uninstall_first=False
    )
    return Finding(Severity.INFO, message, fix, (probe_file("torch"),))


def choice_data(choice: WheelChoice | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    return {
        "status": choice.status,
        "torch": choice.torch,
        "variant": choice.variant,
        "index_url": choice.index_url,
        "requirement": choice.requirement,
        "reasons": list(choice.reasons),
        "python_note": choice.python_note,
        "upgrade_driver_to": choice.upgrade_driver_to,
    }
