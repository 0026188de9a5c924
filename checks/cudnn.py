"""cuDNN checks: which system-wide cuDNN versions are installed."""

from __future__ import annotations

from gpudoctor.api import CheckContext, Finding, Severity, check, not_applicable
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome


@check("CUDNN001", area="cudnn", title="cuDNN on the system")
def cudnn_installed(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: system-wide cuDNN: libraries in the loader cache and the usual directories, and the
    version in cudnn_version.h; several majors side by side; a header whose major has no library.

    Why it matters: PyTorch and TensorFlow[and-cuda] wheels bundle their own cuDNN, but programs built
    against the system toolkit (and TensorFlow installed without [and-cuda]) load the system one. cuDNN 8
    and 9 have different library names (libcudnn.so.8 vs .9), so a binary built for one will not load the
    other; an older library found first causes "Loaded runtime CuDNN library: X but source was compiled
    with: Y".

    How to fix: install the cuDNN major your software was built for (`nvidia-cudnn-cu12` from pip, or
    NVIDIA's `cudnn9-cuda-12` packages) and remove stale copies from the loader path.
    """
    if not facts.collected(Ev.CUDNN) and not facts.collected(Ev.LDCONFIG):
        return not_applicable("cuDNN not collected (`ldconfig -p | grep libcudnn` shows it)")
    installs = facts.cudnn
    if not installs:
        return not_applicable(
            "no system-wide cuDNN (not needed by pip/conda PyTorch or TensorFlow[and-cuda], which bring their own)"
        )
    data = {
        "installs": [
            {"version": i.version, "major": i.major, "header": i.header, "libraries": i.libraries[:20]}
            for i in installs
        ]
    }
    described = ", ".join(f"cuDNN {i.version or i.major or '?'}" for i in installs)
    findings = []
    majors = sorted({i.major for i in installs if i.major is not None})
    if len(majors) > 1:
        findings.append(
            Finding(
                Severity.INFO,
                f"several cuDNN majors installed side by side ({', '.join(map(str, majors))}); "
                "each program loads the one its build names",
            )
        )
    for install in installs:
        if install.header and not install.libraries:
            findings.append(
                Finding(
                    Severity.WARNING,
                    f"cuDNN {install.version} header at {install.header} but no "
                    f"libcudnn.so.{install.major} library: builds will link but not run",
                    None,
                    (Ev.CUDNN,),
                    cause="cudnn-missing",
                )
            )
    return Outcome(described, findings, data)
