"""Which cloud this machine is an instance of, and its instance type: from DMI, cloud-init's instance data and
(only with ``--cloud-metadata``) the metadata service's answers.  Tolerant: any input, never raises.

Trust, most first: the metadata service's answer (the provider says it), cloud-init's instance data (cloud-init
read it from the same service at boot), AWS Nitro's DMI product name (the instance type, when it looks like one).
Which DMI strings name which cloud is knowledge: ``kb.cloud_providers``.
"""

from __future__ import annotations

import dataclasses
import json
import re

from gpudoctor.facts.json_values import json_dict, json_int, json_list, json_text
from gpudoctor.facts.platform_model import CloudInstance, DmiIdentity, MetadataAnswer

_DMI_FIELDS = tuple(f.name for f in dataclasses.fields(DmiIdentity))
# An EC2 instance type as AWS spells it: family (letters, digits, "-flex" ...), a dot, a size ("g5.xlarge",
# "p4d.24xlarge", "trn1.32xlarge", "c6g.metal", "c7i.metal-24xl", "u-6tb1.metal").  "HVM domU" is not one.
_EC2_TYPE = re.compile(r"^[a-z][a-z0-9-]{0,24}\.(?:nano|micro|small|medium|large|\d{0,3}xlarge|metal(?:-\d{1,3}xl)?)$")
# What a value read from the metadata service may look like to be used: one short token, no spaces or controls.
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,199}$")
_ASK_HINT = "`gpudoctor check --cloud-metadata` asks the metadata service"


def parse_dmi_identity(record: object) -> DmiIdentity:
    """The ``dmi`` record of ``platform.json`` (or of an old ``pci-devices.json``)."""
    dmi = json_dict(record)
    return DmiIdentity(**{name: json_text(dmi.get(name)) for name in _DMI_FIELDS})


def looks_like_ec2_type(text: str | None) -> bool:
    return bool(text) and _EC2_TYPE.match(text or "") is not None


def _token(value: object) -> str | None:
    text = json_text(value)
    return text if text is not None and _TOKEN.match(text) else None


def _last_segment(value: object) -> str | None:
    """GCE answers with a path: "projects/123/machineTypes/a2-highgpu-1g" -> "a2-highgpu-1g"."""
    text = _token(value)
    return _token(text.rsplit("/", 1)[-1]) if text else None


def _answers(record: dict[str, object]) -> dict[str, str]:
    """path -> body of each request answered with HTTP 200."""
    found: dict[str, str] = {}
    for raw in json_list(record.get("requests")):
        entry = json_dict(raw)
        path, body = entry.get("path"), entry.get("body")
        if json_int(entry.get("status")) == 200 and isinstance(path, str) and isinstance(body, str):
            found[path] = body
    return found


def _failure(record: dict[str, object]) -> str | None:
    """The first failed request in words ("HTTP 401 from PUT /latest/api/token"), or the record's own error."""
    own = json_text(record.get("error"))
    if own:
        return own[:300]
    for raw in json_list(record.get("requests")):
        entry = json_dict(raw)
        status = json_int(entry.get("status"))
        where = f"{json_text(entry.get('method')) or '?'} {json_text(entry.get('path')) or '?'}"
        if json_text(entry.get("error")):
            return f"{where}: {json_text(entry.get('error'))}"[:300]
        if status is not None and status != 200:
            return f"HTTP {status} from {where}"[:300]
    return None


def _json_body(text: str | None) -> dict[str, object]:
    if not text or len(text) > 1_000_000:
        return {}
    try:
        return json_dict(json.loads(text))
    except (ValueError, RecursionError):
        return {}


def _by_suffix(answers: dict[str, str], suffix: str) -> str | None:
    return next((body for path, body in answers.items() if path.split("?", 1)[0].endswith(suffix)), None)


def _azure_image(compute: dict[str, object]) -> str | None:
    reference = json_dict(json_dict(compute.get("storageProfile")).get("imageReference"))
    parts = [json_text(reference.get(k)) for k in ("publisher", "offer", "sku", "version")]
    if all(parts):
        return _token(":".join(p for p in parts if p))
    return _token(reference.get("id"))


def _read_answer(provider: str, answers: dict[str, str]) -> dict[str, str | None]:
    if provider == "aws":
        return {
            "instance_type": _token(_by_suffix(answers, "/meta-data/instance-type")),
            "region": _token(_by_suffix(answers, "/placement/region")),
            "zone": _token(_by_suffix(answers, "/placement/availability-zone")),
            "image": _token(_by_suffix(answers, "/meta-data/ami-id")),
        }
    if provider == "gcp":
        zone = _last_segment(_by_suffix(answers, "/instance/zone"))
        # A GCE zone is its region and a letter: "us-central1-a" is in "us-central1".
        region = zone.rsplit("-", 1)[0] if zone and zone.count("-") >= 2 else None
        return {
            "instance_type": _last_segment(_by_suffix(answers, "/instance/machine-type")),
            "region": region,
            "zone": zone,
            "image": _token(_by_suffix(answers, "/instance/image")),
        }
    if provider == "azure":
        compute = json_dict(_json_body(_by_suffix(answers, "/metadata/instance")).get("compute"))
        return {
            "instance_type": _token(compute.get("vmSize")),
            "region": _token(compute.get("location")),
            "zone": _token(compute.get("zone")),
            "image": _azure_image(compute),
        }
    if provider == "oci":
        body = _json_body(_by_suffix(answers, "/opc/v2/instance/"))
        return {
            "instance_type": _token(body.get("shape")),
            "region": _token(body.get("canonicalRegionName")) or _token(body.get("region")),
            "zone": _token(body.get("availabilityDomain")),
            "image": _token(body.get("image")),
        }
    return {}


def parse_cloud_metadata(record: object) -> MetadataAnswer:
    """``cloud-metadata.json``; not asked (None, or not a record) -> ``MetadataAnswer(asked=False)``."""
    if not isinstance(record, dict):
        return MetadataAnswer()
    provider = json_text(record.get("provider"))
    values = _read_answer(provider or "", _answers(record))
    instance_type = values.get("instance_type")
    error = None if instance_type else (_failure(record) or "the metadata service did not name the instance type")
    return MetadataAnswer(
        asked=True,
        provider=provider,
        ok=instance_type is not None,
        error=error,
        instance_type=instance_type,
        region=values.get("region"),
        zone=values.get("zone"),
        image=values.get("image"),
    )


def _why_unknown(provider_dmi_words: str, type_words: str, dmi: DmiIdentity, names_type: bool) -> str:
    if names_type and dmi.product_name:
        return f'DMI product_name "{dmi.product_name}" is not {type_words} (an older, Xen-based instance)'
    if names_type:
        return f"DMI product_name is empty, so it does not name {type_words}"
    return f"{provider_dmi_words} does not name {type_words}"


def identify_cloud(dmi: DmiIdentity, cloud_init: object, metadata: MetadataAnswer) -> CloudInstance | None:
    """The provider and instance type; None where nothing says this is a cloud instance."""
    from gpudoctor.evidence.cloud_metadata import PROVIDERS
    from gpudoctor.kb.cloud_providers import provider_for_cloud_init, provider_for_dmi

    fields = {name: getattr(dmi, name) for name in _DMI_FIELDS}
    init = json_dict(cloud_init)
    cloud_name = json_text(init.get("cloud_name"))
    evidence: list[str] = []
    hit = provider_for_dmi(fields)
    if hit is not None:
        found, marker = hit
        evidence.append(marker.quoted)
    else:
        named = provider_for_cloud_init(cloud_name)
        if named is None:
            return None
        found = named
    if cloud_name and provider_for_cloud_init(cloud_name) is found:
        evidence.append(f'cloud-init cloud_name "{cloud_name}"')
    from_metadata = metadata.ok and metadata.provider == found.key
    init_type = _token(init.get("instance_type"))
    dmi_type = dmi.product_name if found.dmi_names_type and looks_like_ec2_type(dmi.product_name) else None
    instance_type, source = next(
        (
            (value, where)
            for value, where in (
                (metadata.instance_type if from_metadata else None, "metadata"),
                (init_type, "cloud-init"),
                (dmi_type, "dmi"),
            )
            if value
        ),
        (None, None),
    )
    if source == "dmi":
        evidence.append(f'product_name "{dmi_type}"')
    why = None
    if instance_type is None:
        why = _why_unknown(found.dmi_words, found.type_words, dmi, found.dmi_names_type)
        if metadata.asked and metadata.error:
            why += f"; the metadata service was asked: {metadata.error}"
        elif found.key in PROVIDERS:
            why += f"; {_ASK_HINT}"
        else:
            why += "; cloud-init's instance data does not name it either, and gpudoctor does not ask this provider"
    return CloudInstance(
        provider=found.key,
        provider_name=found.name,
        instance_type=instance_type,
        type_source=source,
        region=(metadata.region if from_metadata else None) or _token(init.get("region")),
        zone=(metadata.zone if from_metadata else None) or _token(init.get("availability_zone")),
        why_unknown=why,
        evidence=tuple(evidence),
    )
