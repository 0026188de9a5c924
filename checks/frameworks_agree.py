"""FW005: the frameworks of one Python agree on the pip CUDA libraries (``nvidia-*`` wheels) they pin.

deepo-style environments hold PyTorch, TensorFlow and JAX in one Python.  Each framework's wheel declares exact
(or bounded) versions of the ``nvidia-*`` wheels it was built with; the one installed last wins, and pip leaves
the other framework with a cuDNN or NCCL it was not built for.  This check compares every pin the knowledge base
(``gpudoctor/kb/pip_pins.py``) holds for the installed builds with what the probes found installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpudoctor.api import CheckContext, Finding, Fix, Severity, check, not_applicable, ok
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.framework_model import JaxFacts, TensorflowFacts, TorchFacts
from gpudoctor.kb.pip_pins import PinnedBuild, pinned_builds
from gpudoctor.results import Outcome
from gpudoctor.words import counted
from gpudoctor_checks._frameworks import PIP_INDEX, FrameworkFacts, evidence_names, os_and_machine, pip, source_of

# The statuses whose probe record names the installed version and the environment's nvidia-* wheels: an import
# that failed is often this very disagreement ("undefined symbol" in cuDNN), so it is compared too.  A pasted
# report is named as not checked.
_RECORDED = ("ok", "import_error", "from_report")
_CPU_BUILD = "a CPU build pins no CUDA libraries"
_CUDA_SUFFIX = re.compile(r"-cu(\d+)$")
_FIRST = re.compile(r"cudnn|nccl")


@dataclass(frozen=True)
class _Pinned:
    """A framework whose installed build the knowledge base has the pins of."""

    name: str  # "torch", "tensorflow", "jax"
    words: str  # "torch 2.10.0+cu128", "tensorflow 2.19.0", "jax 0.12.0 (cuda12)"
    build: PinnedBuild
    fw: FrameworkFacts
    requirement: str  # what reinstalls this build: 'torch==2.10.0+cu128' --index-url ...


@dataclass(frozen=True)
class _Comparison:
    pinned: _Pinned
    package: str
    required: str
    installed: str | None
    satisfied: bool | None  # None: the version or the specifier could not be read


def _canonical(name: str) -> str:
    """ "nvidia_cudnn_cu12" and "NVIDIA-cuDNN-cu12" -> "nvidia-cudnn-cu12" (PEP 503)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name))


def _installed(frameworks: dict[str, FrameworkFacts]) -> dict[str, str]:
    """The nvidia-* wheels the probes of this Python found, by normalised name."""
    found: dict[str, str] = {}
    for fw in frameworks.values():
        if source_of(fw) == "probe":
            for name, version in fw.nvidia_packages.items():
                found.setdefault(_canonical(name), version)
    return dict(sorted(found.items()))


def _pins_major(build: PinnedBuild) -> int | None:
    """The CUDA major of a build's pins, from their package suffix (nvidia-cudnn-cu12 -> 12)."""
    majors = {int(m.group(1)) for name, _ in build.requires if (m := _CUDA_SUFFIX.search(name))}
    return majors.pop() if len(majors) == 1 else build.cuda_major


def _rows(framework: str, version: str | None) -> list[PinnedBuild]:
    return [row for row in pinned_builds() if row.framework == framework and row.version == version]


def _not_read(framework: str, version: str | None) -> str:
    return f"the knowledge base has no pins for {framework} {version}"


def _torch(torch: TorchFacts) -> PinnedBuild | str:
    """torch's row: the build its local label names ("+cu128"), else PyPI's build of that version when the installed
    torch's CUDA major is the one the pins' packages are for; a string says why there is none."""
    tag = (torch.local_tag or "").lower()
    if tag == "cpu" or torch.cpu_only:
        return _CPU_BUILD
    if torch.hip or tag.startswith("rocm"):
        return "a ROCm build pins no nvidia-* libraries"
    if torch.xpu_built or tag.startswith("xpu"):
        return "an Intel XPU build pins no nvidia-* libraries"
    rows = _rows("torch", torch.base_version)
    if not rows:
        return _not_read("torch", torch.base_version)
    if tag:
        row = next((r for r in rows if r.build == tag), None)
        builds = ", ".join(r.build for r in rows)
        return row or f"the knowledge base has the pins of torch {torch.base_version}'s {builds} build, not +{tag}"
    major = torch.cuda.split(".", 1)[0] if torch.cuda else None
    if major is None:
        # An import that failed does not say its CUDA; a PyPI install of a version is the very wheel the KB read.
        if torch.origin.index_hint == "pypi" and len(rows) == 1:
            return rows[0]
        return f"torch {torch.base_version} did not say which CUDA it was built for"
    fits = [r for r in rows if str(_pins_major(r)) == major]
    exact = [r for r in fits if r.build == "cu" + (torch.cuda or "").replace(".", "")]
    if exact or len(fits) == 1:
        return (exact or fits)[0]
    pins = ", ".join(f"{r.build} (-cu{_pins_major(r)} packages)" for r in rows)
    return f"a CUDA {torch.cuda} build; the knowledge base has the pins of its {pins} build only"


def _with_extra(row: PinnedBuild, installed: dict[str, str], explained: set[str], extra: str) -> PinnedBuild | str:
    """The row, when the environment shows the framework was installed with its CUDA extra: a wheel only that
    extra pins (not one the torch build pins) is installed.  Without it, the framework pins nothing."""
    own = {_canonical(name) for name, _ in row.requires} - explained
    if own & set(installed):
        return row
    return f"installed without the [{extra}] extra (no nvidia-* wheel only that extra brings is here), so it pins none"


def _tensorflow(tf: TensorflowFacts, installed: dict[str, str], explained: set[str]) -> PinnedBuild | str:
    distribution = _canonical(tf.distribution or "tensorflow")
    if distribution in ("tensorflow-cpu", "tensorflow-intel") or tf.built_with_cuda is False:
        return _CPU_BUILD
    if tf.rocm_build:
        return "a ROCm build pins no nvidia-* libraries"
    if distribution != "tensorflow":
        return f"the knowledge base has the pins of the tensorflow distribution, not {distribution}"
    row = next((r for r in _rows("tensorflow", tf.version) if r.build == "and-cuda"), None)
    if row is None:
        return _not_read("tensorflow", tf.version)
    return _with_extra(row, installed, explained, "and-cuda")


def _jax(jax: JaxFacts, installed: dict[str, str], explained: set[str]) -> PinnedBuild | str:
    plugins = [m.group(1) for name in jax.plugins if (m := re.fullmatch(r"jax-(cuda\d+)-plugin", _canonical(name)))]
    if not plugins:
        return "no CUDA plugin: JAX on the CPU pins no CUDA libraries"
    row = next((r for r in _rows("jax", jax.version) if r.build == plugins[0]), None)
    if row is None:
        return _not_read(f"jax[{plugins[0]}]", jax.version)
    return _with_extra(row, installed, explained, plugins[0])


def _requirement(name: str, row: PinnedBuild, torch_tag: str | None) -> str:
    """The pip arguments that reinstall exactly this build; only knowledge-base values reach the command."""
    if name == "torch":
        if torch_tag == row.build:
            return f'"torch=={row.version}+{row.build}" --index-url {PIP_INDEX}/{row.build}'
        return f'"torch=={row.version}"'
    if name == "tensorflow":
        return f'"tensorflow[and-cuda]=={row.version}"'
    return f'"jax[{row.build}]=={row.version}"'


def _pinned(frameworks: dict[str, FrameworkFacts], installed: dict[str, str]) -> tuple[list[_Pinned], dict[str, str]]:
    """The frameworks whose pins are known, and why each other one is not checked."""
    pinned: list[_Pinned] = []
    skipped: dict[str, str] = {}
    explained: set[str] = set()
    for name, fw in frameworks.items():
        words = f"{_canonical(fw.distribution or name) if isinstance(fw, TensorflowFacts) else name} {fw.version}"
        os_name, machine = os_and_machine(fw.python)
        if source_of(fw) != "probe":
            skipped[words] = "from a pasted report, which does not list every nvidia-* wheel"
            continue
        if (os_name, machine) != ("linux", "x86_64"):
            skipped[words] = f"the knowledge base read the pins of Linux x86_64 wheels, not {os_name} {machine}"
            continue
        if isinstance(fw, TorchFacts):
            found = _torch(fw)
        elif isinstance(fw, TensorflowFacts):
            found = _tensorflow(fw, installed, explained)
        elif isinstance(fw, JaxFacts):
            found = _jax(fw, installed, explained)
        else:
            continue
        if isinstance(found, str):
            skipped[words] = found
            continue
        if isinstance(fw, JaxFacts):
            words = f"jax {fw.version} ({found.build})"
        tag = fw.local_tag if isinstance(fw, TorchFacts) else None
        pinned.append(_Pinned(name, words, found, fw, _requirement(name, found, tag)))
        if isinstance(fw, TorchFacts):
            explained |= {_canonical(package) for package, _ in found.requires}
    return pinned, skipped


def _compare(pinned: _Pinned, installed: dict[str, str]) -> list[_Comparison]:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    rows = []
    for package, spec in pinned.build.requires:
        name = _canonical(package)
        version = installed.get(name)
        satisfied: bool | None = False
        if version is not None:
            try:
                satisfied = SpecifierSet(spec).contains(Version(version), prereleases=True)
            except (InvalidSpecifier, InvalidVersion):
                satisfied = None
        rows.append(_Comparison(pinned, name, spec, version, satisfied))
    return rows


def _accepts(other: _Pinned, package: str, version: str) -> str | None:
    """ "pins" / "accepts (<10,>=9.3)" when ``other``'s build is content with ``version`` of ``package``."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    spec = next((s for n, s in other.build.requires if _canonical(n) == package), None)
    if spec is None:
        return None
    try:
        if not SpecifierSet(spec).contains(Version(version), prereleases=True):
            return None
    except (InvalidSpecifier, InvalidVersion):
        return None
    return "pins" if spec.startswith("==") else f"accepts ({spec})"


def _finding(row: _Comparison, pinned: list[_Pinned]) -> Finding:
    who = row.pinned
    need = f"{who.words} needs {row.package}{row.required}"
    others = [(p, _accepts(p, row.package, row.installed)) for p in pinned if p is not who and row.installed]
    holder = next(((p, verb) for p, verb in others if verb), None)
    if row.installed is None:
        message = f"{need}; it is not installed"
    else:
        message = f"{need}; {row.installed} is installed"
        if holder is not None:
            message += f", which {holder[0].words} {holder[1]}"
    pip_of = pip(who.fw.python)
    commands = [f"{pip_of} install --force-reinstall {who.requirement}", f"{pip_of} check"]
    text = f"Reinstall {who.words} so pip puts back the nvidia-* wheels it was built with."
    if len(pinned) > 1:
        names = ",".join(dict.fromkeys(p.name for p in pinned))
        commands.insert(0, f"gpudoctor dockerfile --framework {names}")
        text = (
            "Frameworks whose CUDA libraries disagree cannot share one Python: give each its own venv "
            f"(`gpudoctor dockerfile --framework {names}` writes an image whose frameworks agree, one venv each "
            f"where no single set fits), or reinstall {who.words} so pip puts its pins back, which breaks the "
            "other framework's in turn."
        )
    evidence = evidence_names(who.name, who.fw) + (evidence_names(holder[0].name, holder[0].fw) if holder else ())
    return Finding(Severity.PROBLEM, message, Fix(text, tuple(commands)), tuple(dict.fromkeys(evidence)))


def _data(
    pinned: list[_Pinned], rows: list[_Comparison], skipped: dict[str, str], installed: dict[str, str]
) -> dict[str, Any]:
    return {
        "compared": [
            {
                "framework": p.name,
                "installed": p.words,
                "pins_of": p.build.label,
                "source": p.build.source,
                "requirements": {
                    r.package: {"required": r.required, "installed": r.installed, "satisfied": r.satisfied}
                    for r in rows
                    if r.pinned is p
                },
            }
            for p in pinned
        ],
        "not_checked": dict(skipped),
        "nvidia_packages": dict(installed),
    }


@check("FW005", area="frameworks", title="Frameworks in one Python agree on their CUDA libraries")
def frameworks_agree(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: for each framework in the probed Python whose build the knowledge base has the pip pins
    of (PyTorch by version and CUDA variant, `tensorflow[and-cuda]`, `jax[cuda12]`/`jax[cuda13]`), whether every
    `nvidia-*` wheel it requires (cuDNN, NCCL, cuBLAS, ...) is installed in a version its requirement accepts,
    and which other framework's pins put the installed version there.

    Why it matters: several frameworks in one environment (deepo-style images) share one copy of each
    `nvidia-*` wheel; installing TensorFlow after PyTorch (or the reverse) swaps cuDNN or NCCL under the one
    installed first, which then fails at import ("undefined symbol") or at its first convolution or collective.

    How to fix: give each framework its own venv (`gpudoctor dockerfile --framework torch,tensorflow` writes an
    image whose frameworks agree, one venv each where no single set of libraries fits), or reinstall the
    framework's build with `pip install --force-reinstall` so pip restores its pins; the finding prints both.
    """
    every: dict[str, FrameworkFacts] = {"torch": facts.torch, "tensorflow": facts.tensorflow, "jax": facts.jax}
    frameworks: dict[str, FrameworkFacts] = {
        name: fw for name, fw in every.items() if fw.run.status in _RECORDED and fw.version
    }
    if not frameworks:
        return not_applicable("no PyTorch, TensorFlow or JAX was probed in the target Python")
    installed = _installed(frameworks)
    pinned, skipped = _pinned(frameworks, installed)
    reasons = "; ".join(f"{words}: {why}" for words, why in skipped.items())
    if not pinned:
        return not_applicable(
            f"no installed framework build with known nvidia-* pins ({reasons})", _data([], [], skipped, installed)
        )
    if not installed:
        return not_applicable(
            "the probes recorded no pip nvidia-* wheel in this Python, so there is nothing to compare the "
            + ", ".join(p.words for p in pinned)
            + " pins with",
            _data(pinned, [], skipped, installed),
        )
    rows = [row for p in pinned for row in _compare(p, installed)]
    data = _data(pinned, rows, skipped, installed)
    # A version the build does not accept is the clash; cuDNN and NCCL first: the libraries whose swap fails at the
    # first convolution or collective.  A wheel that is not installed at all is no clash: the framework then loads
    # the system's copy (jax[cuda13-local], a CUDA toolkit on the loader path), as the recorded H100 VM's JAX did.
    clashes = [row for row in rows if row.satisfied is False and row.installed is not None]
    clashes.sort(key=lambda row: not _FIRST.search(row.package))
    findings = [_finding(row, pinned) for row in clashes]
    not_checked = f"; not checked: {reasons}" if reasons else ""
    if findings:
        more = f" (and {counted(len(findings) - 1, 'more unmet pin')})" if len(findings) > 1 else ""
        return Outcome(findings[0].message + more, findings, data)
    compared = sum(1 for row in rows if row.satisfied)
    return ok(
        f"{', '.join(p.words for p in pinned)}: {counted(compared, 'pinned nvidia-* wheel')} installed as required"
        + not_checked,
        data,
        [_absent_note(p, rows) for p in pinned if any(r.pinned is p and r.installed is None for r in rows)],
    )


def _absent_note(pinned: _Pinned, rows: list[_Comparison]) -> Finding:
    """The wheels a build's pins name that are not installed: the framework loads the system's copies instead."""
    absent = [r.package for r in rows if r.pinned is pinned and r.installed is None]
    return Finding(
        Severity.INFO,
        f"{pinned.words}'s pins also name {', '.join(absent)}, not installed in this Python: it loads the system's "
        f"copies instead (a CUDA toolkit on the loader path), which works while they are there "
        f"(`{pip(pinned.fw.python)} install {pinned.requirement}` installs its own)",
    )


__all__ = ["frameworks_agree"]
