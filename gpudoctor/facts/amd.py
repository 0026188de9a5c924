"""AMD's facts, merged from every source that names the GPUs: amd-smi, rocm-smi, rocminfo, KFD, the PCI bus.

(Stub: the AMD inventory fills this in.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.facts.accelerators import Accelerator
from gpudoctor.facts.amd_model import AmdFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def amd_facts(facts: Facts) -> AmdFacts:
    return AmdFacts()


def amd_accelerators(facts: Facts) -> tuple[Accelerator, ...]:
    return ()
