"""The smoke figures against what the cloud instance type promises: its host link for the bandwidth, its GPU model
for the measured device (``gpudoctor.kb.cloud_instances``, read through ``gpudoctor_checks.platform``)."""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from gpudoctor.api import Finding, Severity
from gpudoctor.facts.facts import Facts
from gpudoctor_checks._smoke import Link, device, device_words, finding, link_or_spec

if TYPE_CHECKING:
    from gpudoctor.facts.platform_model import CloudInstance
    from gpudoctor.facts.smoke_model import SmokeDevice, SmokeFacts
    from gpudoctor.kb.cloud_instances import InstanceType


_HOST_LINK = re.compile(r"Gen\s*(\d+)\D{0,20}?x\s*(\d+)", re.IGNORECASE)


def instance_link(row: InstanceType, cloud: CloudInstance) -> tuple[str, Link] | None:
    """("the AWS g6.xlarge's PCIe Gen4 x16 (...)", that link) where the knowledge base says which host link the
    type's GPUs train at: the provider's figure, else the GPU's own spec-sheet link (``row_host_link`` says
    which)."""
    from gpudoctor.kb.cloud_instances import row_host_link
    from gpudoctor_checks.platform import type_words

    host_link = row_host_link(row)
    match = _HOST_LINK.search(host_link) if host_link else None
    if host_link is None or match is None:
        return None
    gen, width = int(match.group(1)), int(match.group(2))
    link = Link(gen, width, gen, width, "instance type")
    return (f"the {type_words(cloud)}'s {host_link}", link) if link.rate_now else None


def choose_link(link: Link | None, typed: tuple[str, Link] | None) -> Link | None:
    """The link as read, unless it is unknown or reads lower than the instance type's (``typed``): a VM often
    reports an odd link, and the type says what the host gives the GPU."""
    if typed is None:
        return link
    words, expected = typed
    if link is None or link.rate_now is None or link.source == "spec sheet":
        why = "the link as trained is not in the evidence"
    else:
        read = link.rate_max or link.rate_now
        if expected.rate_now is None or read >= expected.rate_now:
            return link
        why = (
            f"the link reads {link.words()} (at most {link.words(link.gen_max, link.width_max)}), less than the "
            "type has: a VM often reports an odd link"
        )
    numa = link.numa_node if link is not None else None
    return dataclasses.replace(expected, numa_node=numa, note=f"judged against {words}: {why}")


def link_to_judge(facts: Facts, found: SmokeDevice | None) -> Link | None:
    """The link to judge a smoke device's host↔device bandwidth against: the one the evidence read, else the
    instance type's host link (when the kb has one) where the link is unknown or reads lower than the type's,
    else the product's spec sheet."""
    from gpudoctor_checks.platform import expected_instance

    row = expected_instance(facts)
    cloud = facts.platform.cloud
    typed = instance_link(row, cloud) if row is not None and cloud is not None else None
    return choose_link(link_or_spec(facts, found), typed)


def type_model_note(facts: Facts, smoke: SmokeFacts, device_id: str) -> Finding | None:
    """A note when the GPU a smoke device measured is not the model the instance type has."""
    from gpudoctor_checks.platform import expected_instance, model_matches, type_words

    row = expected_instance(facts)
    cloud = facts.platform.cloud
    found = device(smoke, device_id)
    if row is None or cloud is None or found is None or model_matches(found.name, row.gpu_model) is not False:
        return None
    return finding(
        Severity.INFO,
        f"{device_words(smoke, device_id)} is not the {row.gpu_model} that {type_words(cloud)} has: these "
        "figures are this GPU's, not the type's (PLAT002 says whether the type recorded is this machine's)",
    )
