"""Which cloud this machine is an instance of, and its instance type: from DMI, cloud-init's instance data and
(only with ``--cloud-metadata``) the metadata service's answers.  Tolerant: any input, never raises."""

from __future__ import annotations

import dataclasses

from gpudoctor.facts.json_values import json_dict, json_text
from gpudoctor.facts.platform_model import CloudInstance, DmiIdentity, MetadataAnswer

_DMI_FIELDS = tuple(f.name for f in dataclasses.fields(DmiIdentity))


def parse_dmi_identity(record: object) -> DmiIdentity:
    """The ``dmi`` record of ``platform.json`` (or of an old ``pci-devices.json``)."""
    dmi = json_dict(record)
    return DmiIdentity(**{name: json_text(dmi.get(name)) for name in _DMI_FIELDS})


def parse_cloud_metadata(record: object) -> MetadataAnswer:
    """``cloud-metadata.json``; not asked (None, or not a record) -> ``MetadataAnswer(asked=False)``."""
    return MetadataAnswer()  # helper H1


def identify_cloud(dmi: DmiIdentity, cloud_init: object, metadata: MetadataAnswer) -> CloudInstance | None:
    """The provider and instance type; None where nothing says this is a cloud instance."""
    return None  # helper H1
