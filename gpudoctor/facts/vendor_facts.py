"""The part of the model each accelerator vendor brings: AMD, Intel, Apple and Google beside NVIDIA.

A mixin of :class:`gpudoctor.facts.facts.Facts`. Each vendor's facts come from that vendor's own module
(``facts/amd.py``, ``facts/intel.py``, ``facts/apple.py``, ``facts/tpu.py``), parsed on first use; the
vendor-neutral list every check and renderer counts from is :attr:`accelerators`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev

if TYPE_CHECKING:
    from gpudoctor.evidence.model import Evidence
    from gpudoctor.facts.accel_nodes import AccelNodes
    from gpudoctor.facts.accelerators import Accelerator
    from gpudoctor.facts.amd_model import AmdFacts
    from gpudoctor.facts.apple_model import AppleFacts
    from gpudoctor.facts.facts import Facts
    from gpudoctor.facts.intel_model import IntelFacts
    from gpudoctor.facts.model import PciDevice
    from gpudoctor.facts.tpu_model import TpuFacts


class VendorFacts:
    evidence: Evidence

    def _facts(self) -> Facts:
        return self  # type: ignore[return-value]  # always a Facts: this is its mixin

    @cached_property
    def pci_accelerators(self) -> list[PciDevice]:
        """Every vendor's GPU and TPU functions on the PCI bus (sysfs, then lspci), sorted by address."""
        from gpudoctor.facts.pci_accelerators import accelerator_functions

        return accelerator_functions(self.evidence.json(Ev.PCI_DEVICES.value), self.evidence.text(Ev.LSPCI.value))

    @cached_property
    def vendors_in_evidence(self) -> frozenset[str]:
        """The vendors other than NVIDIA ("amd", "intel", "apple", "google") anything in the evidence names: only
        theirs are parsed, and only their checks run (``check(vendor=...)``)."""
        from gpudoctor.facts.vendor_presence import vendors_in_evidence

        return vendors_in_evidence(self._facts())

    @cached_property
    def accel_nodes(self) -> AccelNodes:
        """/dev/kfd, /dev/dri/renderD*, /dev/accel*, /dev/vfio/* and this user's groups."""
        from gpudoctor.facts.accel_nodes import parse_accel_nodes

        return parse_accel_nodes(self.evidence.json(Ev.ACCEL_DEVICE_NODES.value))

    @cached_property
    def amd(self) -> AmdFacts:
        from gpudoctor.facts.amd import amd_facts

        return amd_facts(self._facts())

    @cached_property
    def intel(self) -> IntelFacts:
        from gpudoctor.facts.intel import intel_facts

        return intel_facts(self._facts())

    @cached_property
    def apple(self) -> AppleFacts:
        from gpudoctor.facts.apple import apple_facts

        return apple_facts(self._facts())

    @cached_property
    def tpu(self) -> TpuFacts:
        from gpudoctor.facts.tpu import tpu_facts

        return tpu_facts(self._facts())

    @cached_property
    def accelerators(self) -> tuple[Accelerator, ...]:
        """Every vendor's accelerators: NVIDIA's first, then AMD, Intel, Apple and Google TPUs (each vendor only
        where the evidence names it, so a machine without one never loads its parsers)."""
        from gpudoctor.facts.accelerators import nvidia_accelerators

        facts = self._facts()
        found = nvidia_accelerators(facts.gpus, facts.pci_gpus)
        named = self.vendors_in_evidence
        if "amd" in named:
            from gpudoctor.facts.amd import amd_accelerators

            found += amd_accelerators(facts)
        if "intel" in named:
            from gpudoctor.facts.intel import intel_accelerators

            found += intel_accelerators(facts)
        if "apple" in named:
            from gpudoctor.facts.apple import apple_accelerators

            found += apple_accelerators(facts)
        if "google" in named:
            from gpudoctor.facts.tpu import tpu_accelerators

            found += tpu_accelerators(facts)
        return found
