"""Where this machine runs, merged from its evidence: ``platform.json`` (DMI, cloud-init, marker files), the
environment (``env.json``), ``cloud-metadata.json`` (only with ``--cloud-metadata``) and free text (an NGC
container's banner in a paste or a log).

Each part has its own parser: the cloud (``cloud_identity``), the notebook platform (``notebook``), the container
image (``container_image``) and its banner (``ngc_banner``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.json_values import json_dict, json_list
from gpudoctor.facts.platform_model import PlatformFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def platform_facts(facts: Facts) -> PlatformFacts:
    from gpudoctor.facts.cloud_identity import identify_cloud, parse_cloud_metadata, parse_dmi_identity
    from gpudoctor.facts.container_image import identify_image
    from gpudoctor.facts.ngc_banner import container_banner
    from gpudoctor.facts.notebook import identify_notebook

    record = json_dict(facts.evidence.json(Ev.PLATFORM.value))
    collected = bool(record)
    # A snapshot from before platform.json kept the two DMI strings in pci-devices.json.
    dmi_record = record.get("dmi") if collected else json_dict(facts.evidence.json(Ev.PCI_DEVICES.value)).get("dmi")
    dmi = parse_dmi_identity(dmi_record)
    cloud_init = record.get("cloud_init")
    exists = tuple(path for path in json_list(record.get("exists")) if isinstance(path, str))
    files = {k: v for k, v in json_dict(record.get("files")).items() if isinstance(v, str)}
    dirs = {
        k: tuple(name for name in json_list(v) if isinstance(name, str))
        for k, v in json_dict(record.get("dirs")).items()
    }
    metadata = parse_cloud_metadata(facts.evidence.json(Ev.CLOUD_METADATA.value))
    missing = facts.missing(Ev.PLATFORM)
    return PlatformFacts(
        collected=collected,
        why_not_collected=None if collected else (missing.words() if missing else "platform.json is not readable"),
        dmi=dmi,
        cloud=identify_cloud(dmi, cloud_init, metadata),
        metadata=metadata,
        notebook=identify_notebook(facts.env, exists, files),
        image=identify_image(facts.env, exists, files, dirs),
        banner=container_banner(facts.evidence),
    )
