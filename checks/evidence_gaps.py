"""Unknown is not healthy: a GPU is expected, but the evidence cannot clear the machine.

A paste or a partial snapshot often shows that the machine should have a working GPU (a CUDA build of a
framework, GPU models listed, an ``nvidia-smi`` that ran) without showing that it does.  Each check then
says "not collected" for what it could not see, and a report of nothing but "n/a" reads as a clean bill of
health.  This check says what is unknown and which command settles it.
"""

from __future__ import annotations

from gpudoctor.api import CheckContext, Fix, check, not_applicable, ok, warning
from gpudoctor.facts.expectations import gpu_expectation, unsettled_facts
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Outcome


@check("COL002", area="collection", title="The evidence clears the GPU stack it shows")
def evidence_clears_gpu(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: when the evidence shows that a GPU is expected (a CUDA build of PyTorch or
    TensorFlow, GPU models listed, an nvidia-smi that ran, NVIDIA errors in a log), whether it also
    establishes the facts needed to call the GPU stack working: the driver is loaded and sees the GPUs,
    and the framework shown can use CUDA.

    Why it matters: from a paste or a partial snapshot most checks can only say "not collected". Missing
    evidence is not a healthy machine: this check turns the gaps into one warning that says what is unknown.

    How to fix: run the commands it lists on the machine, or `gpudoctor collect -o snapshot.tar.gz` there
    and `gpudoctor check --from snapshot.tar.gz`, which collects everything at once.
    """
    expectation = gpu_expectation(facts)
    if expectation is None:
        return not_applicable("the evidence does not show that a GPU is expected")
    unsettled = unsettled_facts(facts)
    if not unsettled:
        return ok(f"a GPU is expected ({expectation}) and the evidence shows it working")
    listed = "; ".join(f"{fact.what} ({fact.why})" for fact in unsettled)
    commands = tuple(dict.fromkeys(command for fact in unsettled for command in fact.commands))
    return warning(
        f"a GPU is expected ({expectation}) but not shown working: unknown {listed}",
        Fix(
            "Run these on the machine (or `gpudoctor collect -o snapshot.tar.gz` there, then "
            "`gpudoctor check --from snapshot.tar.gz`) to settle what is unknown.",
            (*commands, "gpudoctor collect -o snapshot.tar.gz"),
        ),
        data={"expected_because": expectation, "unknown": [fact.what for fact in unsettled]},
        cause="gpu-stack-unverified",
    )
