"""A damaged `nvidia-smi -q -x` output is reported as damaged, never read as a clean machine (issue 16)."""

from __future__ import annotations

from gpudoctor.api import CheckContext
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts
from gpudoctor.results import Status
from gpudoctor_checks.collection import sources_answered
from tests.helpers.fixtures import fixture_text


def _facts(xml: str) -> Facts:
    evidence = Evidence()
    evidence.add(EvidenceItem(name=Ev.NVIDIA_SMI_XML.value, kind="command", text=xml, exit_code=0))
    return Facts(evidence)


def test_a_cut_off_xml_is_a_warning_naming_the_damage() -> None:
    real = fixture_text("A/telegraf-a100-sxm4-80gb-535.54.03-v12.txt")
    damaged = real[: len(real) // 2]  # SYNTHETIC damage: the real output cut in half, as a full disk leaves it
    outcome = sources_answered.func(_facts(damaged), CheckContext({}))
    assert outcome.status is Status.WARNING
    assert "damaged" in outcome.findings[0].message and Ev.NVIDIA_SMI_XML.value in outcome.findings[0].evidence


def test_a_whole_xml_is_not_called_damaged() -> None:
    outcome = sources_answered.func(
        _facts(fixture_text("A/telegraf-a100-sxm4-80gb-535.54.03-v12.txt")), CheckContext({})
    )
    assert outcome.status is Status.OK
