"""Apple GPUs: MPS built and available, the macOS it needs, Rosetta, TensorFlow's Metal plug-in.

Every check here is about a Mac and says "not applicable" anywhere else: nothing in it fires on Linux.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, judged, not_applicable, ok
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.kb import apple_mps
from gpudoctor.kb.torch_wheels import torch_release
from gpudoctor.results import Outcome
from gpudoctor_checks._frameworks import evidence_names, pip

if TYPE_CHECKING:
    from gpudoctor.facts.apple_model import MacPlatform

_TORCH_PAGE = "https://developer.apple.com/metal/pytorch/"
_TF_METAL_PAGE = "https://developer.apple.com/metal/tensorflow-plugin/"


def _mac(facts: Facts) -> MacPlatform | None:
    return facts.apple.platform


def _evidence(facts: Facts, *framework: str) -> tuple[str, ...]:
    names: list[str] = [Ev.MACOS] if facts.collected(Ev.MACOS) else []
    for name in framework:
        fw = facts.torch if name == "torch" else facts.tensorflow
        names.extend(evidence_names(name, fw))
    return tuple(dict.fromkeys(names))


def rosetta_fix() -> Fix:
    """An arm64 Python (Apple's arm64 Miniconda installer), checked, then PyTorch in it."""
    commands = apple_mps.arm64_python_commands() + (
        'python -c "import platform; print(platform.machine())"  # must print arm64',
        "python -m pip install torch",
    )
    return Fix(
        "Install a native arm64 Python (Apple's arm64 Miniconda installer), check that it says arm64, and install "
        "PyTorch in it; an x86_64 Python under Rosetta cannot use MPS.",
        commands,
        url=_TORCH_PAGE,
    )


def _rosetta_finding(facts: Facts, mac: MacPlatform, what: str, evidence: tuple[str, ...]) -> Finding:
    because = mac.translated_because or "the target Python runs translated by Rosetta"
    seen = (
        f"; it reads macOS as {mac.python_macos}" if mac.python_macos and mac.python_macos != mac.macos_version else ""
    )
    return Finding(
        Severity.PROBLEM,
        f"{because}{seen}: {what}",
        rosetta_fix(),
        evidence,
        cause="python-under-rosetta",
    )


@check("MPS001", area="mps", title="PyTorch's MPS backend built and available", vendor="apple")
def mps_available(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a Mac, that the PyTorch of the target Python was built with MPS
    (`torch.backends.mps.is_built()`) and can use it (`torch.backends.mps.is_available()`); when it cannot, which
    reason fits: macOS older than that PyTorch needs (12.3 when MPS launched with 1.12, 13.0 for 2.5, 14.0 from
    2.10; the knowledge base keeps the (torch, macOS) pairs with their sources), an x86_64 Python under Rosetta,
    or an Intel Mac.

    Why it matters: without MPS every tensor stays on the CPU, and PyTorch says so only when `device="mps"` is
    asked for, with a message whose macOS number has lagged behind the real requirement.

    How to fix: upgrade macOS (or install an older PyTorch whose floor this macOS meets); under Rosetta install a
    native arm64 Python and PyTorch in it; on an Intel Mac the last x86_64 PyTorch wheels are 2.2.x.
    """
    torch = facts.torch
    state = _torch_state(facts)
    if state is None:
        return not_applicable("nothing says this is a Mac")
    mac, version, built, available = state
    if torch.run.status == "import_error":
        return not_applicable("PyTorch does not import in the target Python (the PyTorch checks and MPS090 say why)")
    if not version and built is None and available is None:
        return not_applicable("PyTorch is not installed or was not probed in the target Python")
    evidence = _evidence(facts, "torch") + ((Ev.PASTE,) if facts.apple.repl and facts.collected(Ev.PASTE) else ())
    data: dict[str, Any] = {
        "torch": version,
        "macos": mac.macos_version,
        "mps_built": built,
        "mps_available": available,
    }
    named = f"torch {version}" if version else "PyTorch"
    if available:
        return ok(f"MPS available ({named}, macOS {mac.macos_version or '?'})", data)
    if mac.translated:
        return judged([_rosetta_finding(facts, mac, "MPS is not available to it", evidence)], data, "")
    if mac.apple_silicon is False:
        return _intel_mac(named, data, evidence)
    floor = apple_mps.mps_macos_floor(version) if version else None
    if version and floor is None:
        return not_applicable(f"{named} predates the MPS backend (1.12)", data)
    data["macos_floor"] = floor.macos if floor else None
    below = apple_mps.macos_older_than(mac.macos_version, floor.macos) if floor else None
    if floor and below:
        return judged([_too_old(facts, named, mac, floor, evidence, Severity.PROBLEM)], data, "")
    if built is False:
        fix = Fix(
            "Install the PyPI build of PyTorch, which has MPS on Apple silicon.",
            (f"{pip(torch.python)} install --force-reinstall torch",),
            url=_TORCH_PAGE,
        )
        return judged([Finding(Severity.PROBLEM, f"{named} was built without MPS", fix, evidence)], data, "")
    later = floor.next_floor if floor else None
    if floor and below is False and not floor.exact and later and available is False:
        if apple_mps.macos_older_than(mac.macos_version, later.macos):
            return judged([_too_old(facts, named, mac, floor, evidence, Severity.WARNING)], data, "")
    if available is False and below is None:
        return judged([_unknown_macos(named, floor, evidence)], data, "")
    if available is False:
        message = f"MPS is built but not available ({named}, macOS {mac.macos_version}), for no reason gpudoctor knows"
        repro = Fix(
            "See what PyTorch says when asked for the MPS device.",
            ("python -c \"import torch; torch.ones(1, device='mps')\"",),
            url=_TORCH_PAGE,
        )
        return judged([Finding(Severity.WARNING, message, repro, evidence)], data, "")
    # A pasted collect_env prints no MPS line: the versions alone are all there is to judge.
    if floor is None or below is None:
        return not_applicable(f"{named}; the macOS version is not known, nor whether MPS works", data)
    return ok(
        f"{named} on macOS {mac.macos_version} meets the MPS floor ({floor.macos}); "
        "whether MPS is available was not reported",
        data,
    )


def _torch_state(facts: Facts) -> tuple[MacPlatform, str | None, bool | None, bool | None] | None:
    """The Mac, torch's version and its MPS flags: from the probe or a collect_env report, else a pasted session.

    None when nothing says this is a Mac (a session that asked torch about MPS says so: MPS exists only there).
    """
    torch, repl = facts.torch, facts.apple.repl
    mac = _mac(facts)
    if mac is None and not (repl and (repl.mps_built or repl.macos_or_newer)):
        return None
    probed = torch.run.status in ("ok", "from_report") and torch.version is not None
    version = torch.version if probed else (repl.torch_version if repl else None)
    built = torch.mps_built if torch.mps_built is not None else (repl.mps_built if repl else None)
    available = torch.mps_available if torch.mps_available is not None else (repl.mps_available if repl else None)
    from gpudoctor.facts.apple_model import MacPlatform  # a Mac's model, only where something says it is one

    return mac or MacPlatform(), version, built, available


def _unknown_macos(named: str, floor: apple_mps.MacosFloor | None, evidence: tuple[str, ...]) -> Finding:
    need = (
        f"macOS {floor.macos}" if floor and floor.exact else f"at least macOS {floor.macos}" if floor else "macOS 12.3"
    )
    check_it = Fix(
        "Find the macOS version and the Python's architecture: MPS needs a new enough macOS and an arm64 Python.",
        ('python -c "import platform; print(platform.mac_ver()[0], platform.machine())"',),
        url=_TORCH_PAGE,
    )
    message = (
        f"MPS is built but not available ({named}); the macOS version is not known: the MPS backend needs {need} "
        "and a native arm64 Python"
    )
    return Finding(Severity.WARNING, message, check_it, evidence, cause="mps-macos-too-old")


def _too_old(
    facts: Facts,
    named: str,
    mac: MacPlatform,
    floor: apple_mps.MacosFloor,
    evidence: tuple[str, ...],
    severity: Severity,
) -> Finding:
    if severity is Severity.PROBLEM:
        need = f"macOS {floor.macos}" if floor.exact else f"at least macOS {floor.macos}"
        message = f"{named}'s MPS backend needs {need}; this Mac runs macOS {mac.macos_version}"
    else:
        later = floor.next_floor
        message = (
            f"{named}'s MPS may need a newer macOS than {mac.macos_version}: {floor.torch} needed "
            f"{floor.macos}, {later.torch if later else 'later releases'} needs {later.macos if later else 'more'}"
        )
    older = _torch_for(mac.macos_version, facts.torch.python.version if facts.torch.python else None)
    commands = ("sw_vers -productVersion", "softwareupdate --list") + (
        (f'{pip(facts.torch.python)} install "torch=={older}.*"',) if older else ()
    )
    fix = Fix(
        f"Upgrade macOS to {floor.macos} or later"
        + (f", or install torch {older}, whose MPS backend runs on this macOS." if older else "."),
        commands,
        url=_TORCH_PAGE,
    )
    return Finding(severity, message, fix, evidence, cause="mps-macos-too-old")


def _torch_for(macos: str | None, python: str | None) -> str | None:
    """The newest torch release whose known MPS floor this macOS meets (an exact row of the knowledge base) and that
    publishes wheels for this Python (its release row in the PyTorch table says so)."""
    best: str | None = None
    for candidate in ("1.12", "2.5", "2.10", "2.11"):
        floor = apple_mps.mps_macos_floor(candidate)
        release = torch_release(candidate)
        if floor is None or not floor.exact or apple_mps.macos_older_than(macos, floor.macos) is not False:
            continue
        if release is not None and release.supports_python(python) is not False:
            best = candidate
    return best


def _intel_mac(named: str, data: dict[str, Any], evidence: tuple[str, ...]) -> Outcome:
    last = apple_mps.intel_mac_last_torch()
    words = f"; the last x86_64 macOS wheels of PyTorch are {last[0]}.x" if last else ""
    message = f"an Intel Mac: PyTorch's MPS backend is for Apple silicon{words}"
    finding = Finding(Severity.INFO, message, None, evidence, cause="mps-intel-mac")
    return ok(f"{named} on an Intel Mac: MPS not available", data, [finding])


@check("MPS002", area="mps", title="A native arm64 Python on Apple silicon", vendor="apple")
def native_python(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on an Apple-silicon Mac, that the target Python is a native arm64 process, not an x86_64
    one translated by Rosetta (`sysctl.proc_translated`, or an x86_64 Python next to an "Apple M…" chip, as in a
    collect_env report that says `OS: macOS 15.3 (x86_64)` and `CPU: Apple M2 Pro`).

    Why it matters: an x86_64 Python (the x86_64 Anaconda of pytorch/pytorch#146236, say) reads macOS as "10.16",
    installs x86_64 wheels and cannot use MPS; the reverse mix, an x86_64 torch in an arm64 Python,
    fails at import with "incompatible architecture (have 'x86_64', need 'arm64')" (signature MPS090).

    How to fix: install a native arm64 Python (Apple's PyTorch page gives the arm64 Miniconda installer:
    `curl -O https://repo.anaconda.com/miniconda/Miniconda3-latest-MacOSX-arm64.sh` and
    `sh Miniconda3-latest-MacOSX-arm64.sh`), check `python -c "import platform; print(platform.machine())"` prints
    arm64, and install PyTorch in it.
    """
    mac = _mac(facts)
    if mac is None:
        return _macos_as_torch_reads_it(facts)
    data: dict[str, Any] = {"chip": mac.chip, "python_arch": mac.python_arch, "translated": mac.translated}
    if mac.apple_silicon is False:
        return not_applicable("an Intel Mac: x86_64 is its native architecture", data)
    evidence = _evidence(facts, "torch") if facts.torch.python is not None else _evidence(facts)
    if mac.translated:
        return judged([_rosetta_finding(facts, mac, "MPS and arm64 wheels are out of its reach", evidence)], data, "")
    misread = _misread_macos(facts, mac)
    if misread is not None:
        message = (
            f"PyTorch reads this macOS as older than {misread} (is_macos_or_newer is False) though it runs "
            f"{mac.macos_version}: what an x86_64 Python under Rosetta sees"
        )
        finding = Finding(Severity.WARNING, message, rosetta_fix(), (*evidence, Ev.PASTE), cause="python-under-rosetta")
        return judged([finding], data, "")
    if mac.translated is False and mac.python_arch == "arm64":
        return ok(f"arm64 Python, native on {mac.chip or 'Apple silicon'}", data)
    if mac.apple_silicon is None:
        return not_applicable("whether this Mac has Apple silicon is not known", data)
    return not_applicable("the target Python's architecture is not known", data)


def _macos_as_torch_reads_it(facts: Facts) -> Outcome:
    """Only a pasted ``is_macos_or_newer`` session: the macOS torch reads, and how to tell whether that is Rosetta's
    "10.16"-style misreading (an x86_64 Python reads an older macOS than the Mac runs)."""
    repl = facts.apple.repl
    answers = repl.macos_or_newer if repl else ()
    if not answers:
        return not_applicable("nothing says this is a Mac")
    at_least = [release for release, answer in answers if answer]
    below = [release for release, answer in answers if not answer]
    words = ", ".join([f"{r} or newer" for r in at_least[:1]] + [f"older than {r}" for r in below[-1:]])
    message = (
        f"PyTorch reads this macOS as {words} (is_macos_or_newer); if the Mac runs a newer macOS, this Python is "
        "an x86_64 one under Rosetta"
    )
    fix = Fix(
        "Compare the Mac's own macOS with what PyTorch reads, and the Python's architecture (arm64 is native).",
        ("sw_vers -productVersion", "python -c 'import platform; print(platform.machine())'"),
    )
    return ok(message, {"macos_or_newer": dict(answers)}, [Finding(Severity.INFO, message, fix, (Ev.PASTE,))])


def _misread_macos(facts: Facts, mac: MacPlatform) -> str | None:
    """The macOS release a pasted ``is_macos_or_newer(major, minor)`` denied although this Mac runs it or newer."""
    repl = facts.apple.repl
    for release, answer in repl.macos_or_newer if repl else ():
        if answer is False and apple_mps.macos_older_than(mac.macos_version, release) is False:
            return release
    return None


@check("MPS003", area="mps", title="TensorFlow's Metal plug-in on a Mac", vendor="apple")
def tensorflow_metal(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a Mac with Apple silicon or an AMD GPU, that TensorFlow in the target Python has Apple's
    tensorflow-metal plug-in beside it, and that TensorFlow then lists a GPU.

    Why it matters: TensorFlow on macOS runs on the CPU only; its GPU is reached through the tensorflow-metal
    PluggableDevice (Apple: macOS 12.0 or later, Apple silicon or AMD GPUs).

    How to fix: `python -m pip install tensorflow-metal` (Apple's "Get started with tensorflow-metal"); a plug-in
    that is installed but lists no GPU usually does not match the TensorFlow release (install a pair released
    together).
    """
    mac = _mac(facts)
    tf = facts.tensorflow
    if mac is None:
        return not_applicable("nothing says this is a Mac")
    if tf.run.status != "ok" or not tf.version:
        return not_applicable("TensorFlow is not installed or was not probed in the target Python")
    if mac.apple_silicon is False and not any(g.vendor == "amd" for g in facts.apple.gpus):
        return not_applicable("an Intel Mac without an AMD GPU: tensorflow-metal has no GPU to use")
    evidence = _evidence(facts, "tensorflow")
    data: dict[str, Any] = {"tensorflow": tf.version, "metal_plugin": tf.metal_plugin, "gpus": len(tf.gpus)}
    metal = apple_mps.tensorflow_metal()
    if tf.metal_plugin is None:
        fix = Fix(
            "Install Apple's Metal plug-in for TensorFlow.",
            (f"{pip(tf.python)} install {metal[0] if metal else 'tensorflow-metal'}",),
            url=_TF_METAL_PAGE,
        )
        message = f"TensorFlow {tf.version} has no tensorflow-metal plug-in beside it: it runs on the CPU only"
        return ok(
            f"TensorFlow {tf.version} on the CPU",
            data,
            [Finding(Severity.INFO, message, fix, evidence, cause="tf-metal-missing")],
        )
    if tf.gpus_listed and not tf.gpus:
        fix = Fix(
            "Install a TensorFlow / tensorflow-metal pair released together.",
            (f"{pip(tf.python)} list 2>/dev/null | grep -i tensorflow",),
            url=_TF_METAL_PAGE,
        )
        message = f"tensorflow-metal {tf.metal_plugin} is installed but TensorFlow {tf.version} lists no GPU"
        return judged([Finding(Severity.WARNING, message, fix, evidence, cause="tf-metal-plugin")], data, "")
    gpus = f", {len(tf.gpus)} GPU" if tf.gpus else ""
    return ok(f"TensorFlow {tf.version} with tensorflow-metal {tf.metal_plugin}{gpus}", data)
