"""Tpu facts, merged from every source that names the devices.

(Stub: the Tpu inventory fills this in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.facts.accelerators import Accelerator
from gpudoctor.facts.tpu_model import TpuFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def tpu_facts(facts: Facts) -> TpuFacts:
    return TpuFacts()


def tpu_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    return ()
