"""Apple facts, merged from every source that names the devices.

(Stub: the Apple inventory fills this in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.facts.accelerators import Accelerator
from gpudoctor.facts.apple_model import AppleFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def apple_facts(facts: Facts) -> AppleFacts:
    return AppleFacts()


def apple_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    return ()
