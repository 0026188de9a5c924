"""Memory gates on the numbers people use (issue 17): sizes as marketed, the failed gate as the next step.

The GPUs come from REAL captured outputs in the shared corpus (read in place): an H100 80GB HBM3 whose
driver reports 81559 MiB (79.6 GiB), 8x Tesla V100S-PCIE-32GB at 32510 MiB, an L40S at 46068 MiB.
"""

from __future__ import annotations

import pytest

from gpudoctor.api import CheckContext
from gpudoctor.facts.facts import Facts
from gpudoctor.kb.gpu_specs import MEMORY_SHORTFALL_FRACTION, memory_rule_text, memory_verdict
from gpudoctor.registry import load_registry
from gpudoctor.results import CheckResult, Finding, Fix, Report, Severity, Status
from gpudoctor.runner import run_checks
from gpudoctor_checks import gates
from tests.helpers.fixtures import fixture_text
from tests.synthetic.evidence import make_evidence, run

H100_TABLE = "C/gpuexporter-h100-sxm-590.48.01-idle.txt"
V100S_XML = "A/datakit-8x-tesla-v100s-pcie-460.73.01-v11.txt"
L40S_TABLE = "C/gpuexporter-l40s-595.80-idle.txt"


def _h100():
    return make_evidence(nvidia_smi_txt=fixture_text(H100_TABLE))


def _v100s():
    return make_evidence(nvidia_smi_q_x_xml=fixture_text(V100S_XML))


@pytest.mark.parametrize(
    "evidence, wanted, status",
    [
        (_h100, 80, Status.OK),  # 79.6 GiB reported: sold as 80GB
        (_h100, 79.5, Status.OK),
        (_h100, 81, Status.PROBLEM),  # the spec sheet says 80: no tolerance above the marketed size
        (_v100s, 32, Status.OK),  # 31.7 GiB; the table has no V100S, so the tolerance rule counts it
        (_v100s, 40, Status.PROBLEM),
    ],
    ids=["h100-80", "h100-79.5", "h100-81", "v100s-32", "v100s-40"],
)
def test_min_gpu_memory_counts_marketed_sizes(evidence, wanted, status):
    outcome = run(gates.min_gpu_memory, evidence(), min_gpu_memory=float(wanted))
    assert outcome.status is status, outcome.summary
    if status is Status.PROBLEM:
        assert outcome.findings[0].fix is not None
        assert f"{wanted:g} GB" in outcome.findings[0].fix.summary


def test_the_h100_summary_says_what_was_reported_and_what_it_counts_as():
    outcome = run(gates.min_gpu_memory, _h100(), min_gpu_memory=80.0)
    assert "79.6 GiB reported, counted as 80 GB (marketed)" in outcome.summary
    assert outcome.data["rule"] == memory_rule_text()


def test_an_ecc_gddr_board_counts_as_its_marketed_size():
    outcome = run(gates.min_gpu_memory, make_evidence(nvidia_smi_txt=fixture_text(L40S_TABLE)), min_gpu_memory=48.0)
    assert outcome.status is Status.OK, outcome.summary


def test_memory_verdict_rule_and_garbage():
    h100 = memory_verdict("NVIDIA H100 80GB HBM3", 81559, 80)
    assert h100 is not None and h100.meets and h100.counted_gb == 80 and h100.from_spec
    # A known GPU far below every size it is sold with (a vGPU slice, say) is counted as reported.
    sliced = memory_verdict("NVIDIA H100 80GB HBM3", 40960, 80)
    assert sliced is not None and not sliced.meets and sliced.counted_gb == 40
    # Unknown products: at most the tolerance below the size asked for.
    edge = 32 * (1 - MEMORY_SHORTFALL_FRACTION) * 1024
    assert memory_verdict("Tesla V100S-PCIE-32GB", edge, 32).meets  # type: ignore[union-attr]
    assert not memory_verdict("Tesla V100S-PCIE-32GB", edge - 1, 32).meets  # type: ignore[union-attr]
    for junk in (None, "12", float("nan"), -5, True):
        assert memory_verdict("NVIDIA H100 80GB HBM3", junk, 80) is None
    assert memory_verdict(None, 81559, 80) is not None


def test_the_gate_explanation_quotes_the_rule_from_the_knowledge_base():
    spec = next(c for c in load_registry().checks if c.code == "GATE004")
    assert " ".join(memory_rule_text().split()) in " ".join(spec.doc.split())
    assert "{memory_rule}" not in spec.doc


def test_a_failed_gate_is_the_next_step_in_a_real_run():
    facts = Facts(_h100())
    report = Report(run_checks(load_registry().checks, facts, CheckContext({"min_gpu_memory": 96.0})), {"kind": "x"})
    step = report.next_step()
    assert step is not None and step.code == "GATE004", step
    assert report.exit_code() == 1


def test_a_failed_gate_outranks_a_problem_lower_in_the_stack():
    """SYNTHETIC results: a driver problem with a fix, and a failed gate."""
    driver = CheckResult(
        "DRV001", "driver", "d", Status.PROBLEM, "s", [Finding(Severity.PROBLEM, "driver", Fix("fix driver"))]
    )
    gate = CheckResult(
        "GATE004", "gates", "g", Status.PROBLEM, "s", [Finding(Severity.PROBLEM, "too small", Fix("bigger GPUs"))]
    )
    step = Report([driver, gate], {"kind": "live"}).next_step()
    assert step is not None and (step.code, step.fix.summary) == ("GATE004", "bigger GPUs")
