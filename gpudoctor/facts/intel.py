"""Intel facts, merged from every source that names the devices.

(Stub: the Intel inventory fills this in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.facts.accelerators import Accelerator
from gpudoctor.facts.intel_model import IntelFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def intel_facts(facts: Facts) -> IntelFacts:
    return IntelFacts()


def intel_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    return ()
