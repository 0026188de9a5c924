"""Where this machine runs, merged from its evidence: ``platform.json`` (DMI, cloud-init, marker files), the
environment (``env.json``), ``cloud-metadata.json`` (only with ``--cloud-metadata``) and free text (an NGC
container's banner in a paste or a log).

Each part has its own parser: the cloud (``cloud_identity``), the notebook platform (``notebook``), the container
image (``container_image``) and its banner (``ngc_banner``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.json_values import json_dict, json_list
from gpudoctor.facts.platform_model import CloudInstance, DmiIdentity, MetadataAnswer, NotebookPlatform, PlatformFacts

if TYPE_CHECKING:
    from gpudoctor.facts.facts import Facts


def _notebook_marked(facts: Facts, exists: tuple[str, ...], files: dict[str, str]) -> bool:
    """Whether anything a notebook platform leaves was recorded: the knowledge base reads only these markers (a test
    proves it), so without any of them its table need not even be loaded."""
    from gpudoctor.evidence import markers_notebook

    env = facts.env
    names = markers_notebook.ENV_VALUES + markers_notebook.ENV_PRESENCE
    paths = markers_notebook.FILES_EXIST + markers_notebook.FILES_READ
    return any(name in env.variables or name in env.present for name in names) or any(
        path in exists or path in files for path in paths
    )


def _notebook(facts: Facts, exists: tuple[str, ...], files: dict[str, str]) -> NotebookPlatform | None:
    if not _notebook_marked(facts, exists, files):
        return None
    from gpudoctor.facts.notebook import identify_notebook

    return identify_notebook(facts.env, exists, files)


def _cloud(dmi: DmiIdentity, cloud_init: object, metadata: MetadataAnswer) -> CloudInstance | None:
    # Nothing named at all (a container without /sys/class/dmi, a paste): no provider table to consult.
    if not any(dataclasses.astuple(dmi)) and not cloud_init and not metadata.asked:
        return None
    from gpudoctor.facts.cloud_identity import identify_cloud

    return identify_cloud(dmi, cloud_init, metadata)


def platform_facts(facts: Facts) -> PlatformFacts:
    from gpudoctor.facts.cloud_identity import parse_cloud_metadata, parse_dmi_identity
    from gpudoctor.facts.container_image import identify_image
    from gpudoctor.facts.ngc_banner import container_banner

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
        cloud=_cloud(dmi, cloud_init, metadata),
        metadata=metadata,
        notebook=_notebook(facts, exists, files),
        image=identify_image(facts.env, exists, files, dirs),
        banner=container_banner(facts.free_texts),
    )
