"""The part of the model read from free text: known error messages, stated versions, pasted commands.

A mixin of :class:`gpudoctor.facts.facts.Facts`, kept apart because it reads the evidence as text (a paste,
logs, tracebacks) rather than parsing one tool's output: every property here works on whatever a person
handed in, and on a live machine's logs alike.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.evidence.model import Evidence
    from gpudoctor.facts.pasted_commands import PastedContainers
    from gpudoctor.facts.signature_scan import SignatureMatch
    from gpudoctor.facts.stated import StatedFacts


class TextFacts:
    evidence: Evidence

    @cached_property
    def free_texts(self) -> tuple[tuple[str, str], ...]:
        """(source name, text) for every free text of the evidence (outputs, stderr, JSON string values), read
        once for every reader: the error signatures, the NGC banner."""
        from gpudoctor.facts.signature_scan import evidence_texts

        return tuple(evidence_texts(self.evidence))

    @cached_property
    def signature_matches(self) -> tuple[SignatureMatch, ...]:
        """The known error messages in every free text of the evidence (``gpudoctor.kb.signatures``)."""
        from gpudoctor.facts.signature_scan import scan_texts

        return scan_texts(self.free_texts)

    @cached_property
    def stated(self) -> StatedFacts:
        """Every version and GPU name the evidence states, structured sources first, then free text."""
        from gpudoctor.facts.stated import stated_facts

        return stated_facts(self)  # type: ignore[arg-type]  # always a Facts: this is its mixin

    @cached_property
    def pasted_containers(self) -> PastedContainers:
        """The container commands and CUDA images a paste names (empty for collected evidence)."""
        from gpudoctor.facts.pasted_commands import pasted_containers

        return pasted_containers(self.evidence)

    @cached_property
    def pasted_platform(self) -> str | None:
        """ "wsl", "windows", "macos" or "linux" as a paste shows it, else None."""
        from gpudoctor.facts.pasted_commands import pasted_platform

        return pasted_platform(self.evidence)
