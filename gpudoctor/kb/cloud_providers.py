"""The clouds gpudoctor recognises and how each names itself in DMI and cloud-init (``data/cloud_providers.json``,
a source on every row): the one home of "this DMI means that cloud".

The markers are the ones cloud-init's ``ds-identify`` checks before it makes any network call (so they are
safe to trust offline), plus the AWS strings systemd and public captures show.  ``Microsoft Corporation`` /
``Virtual Machine`` is deliberately not a marker: an on-premises Hyper-V guest reads the same; only Azure's
chassis asset tag names Azure.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "cloud_providers.json"


@dataclass(frozen=True)
class DmiMarker:
    """One DMI string that names a cloud: ``field`` compared by ``rule`` ("equals", "prefix", "contains") with
    ``value``; ``and_field``/``and_value`` a second field that must also equal its value."""

    field: str
    rule: str
    value: str
    source: str = ""
    and_field: str | None = None
    and_value: str | None = None

    def matches(self, dmi: Mapping[str, str | None]) -> bool:
        if not _field_matches(dmi.get(self.field), self.rule, self.value):
            return False
        return self.and_field is None or _field_matches(dmi.get(self.and_field), "equals", self.and_value or "")

    @property
    def quoted(self) -> str:
        """'sys_vendor "Amazon EC2"': what identified the cloud, for messages."""
        verb = {"equals": "", "prefix": "starting with ", "contains": "containing "}.get(self.rule, "")
        words = f'{self.field} {verb}"{self.value}"'
        if self.and_field:
            words += f' and {self.and_field} "{self.and_value}"'
        return words


def _field_matches(actual: str | None, rule: str, value: str) -> bool:
    text = actual.strip() if isinstance(actual, str) else ""
    if not text or not value:
        return False
    if rule == "equals":
        return text == value
    if rule == "prefix":
        return text.startswith(value)
    if rule == "contains":
        return value.lower() in text.lower()
    return False


@dataclass(frozen=True)
class CloudProvider:
    key: str  # "aws", "gcp", "azure", "oci", "alibaba", ...
    name: str  # "AWS", "Google Cloud", "Azure", "Oracle Cloud", ...
    source: str = ""
    markers: tuple[DmiMarker, ...] = ()
    cloud_init_names: tuple[str, ...] = ()  # v1.cloud_name values cloud-init reports on this cloud
    dmi_names_type: bool = False  # True where DMI product_name is the instance type (AWS Nitro)
    type_words: str = "the instance type"  # what the provider calls it: "the machine type", "the VM size"
    dmi_words: str = ""  # "Google Compute Engine's DMI"
    metadata_source: str = ""  # the source key of the provider's metadata-service documentation


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _marker(raw: object) -> DmiMarker | None:
    row = as_dict(raw)
    field = _text(row.get("field"))
    for rule in ("equals", "prefix", "contains"):
        value = _text(row.get(rule))
        if field and value:
            and_field = _text(row.get("and_field")) or None
            return DmiMarker(
                field, rule, value, _text(row.get("source")), and_field, _text(row.get("and_equals")) or None
            )
    return None


@functools.lru_cache(maxsize=1)
def providers() -> tuple[CloudProvider, ...]:
    """Every provider in the table, in the table's order (the first whose marker matches wins)."""
    rows = []
    for raw in as_list(_load(DATA_FILE).get("providers")):
        row = as_dict(raw)
        key, name = _text(row.get("key")), _text(row.get("name"))
        if not key or not name:
            continue
        markers = tuple(m for m in (_marker(r) for r in as_list(row.get("markers"))) if m is not None)
        names = tuple(n for n in as_list(row.get("cloud_init_names")) if isinstance(n, str) and n)
        rows.append(
            CloudProvider(
                key=key,
                name=name,
                source=_text(row.get("source")),
                markers=markers,
                cloud_init_names=names,
                dmi_names_type=row.get("dmi_names_type") is True,
                type_words=_text(row.get("type_words")) or "the instance type",
                dmi_words=_text(row.get("dmi_words")) or f"{name}'s DMI",
                metadata_source=_text(row.get("metadata_source")),
            )
        )
    return tuple(rows)


def provider(key: str) -> CloudProvider | None:
    return next((p for p in providers() if p.key == key), None)


def provider_for_dmi(dmi: Mapping[str, str | None]) -> tuple[CloudProvider, DmiMarker] | None:
    """The provider whose DMI marker these strings carry, and the marker; None where DMI names no known cloud."""
    for candidate in providers():
        for marker in candidate.markers:
            if marker.matches(dmi):
                return candidate, marker
    return None


def provider_for_cloud_init(name: str | None) -> CloudProvider | None:
    """The provider cloud-init's ``v1.cloud_name`` ("aws", "gce", "azure", "oracle", ...) names."""
    wanted = (name or "").strip().lower()
    if not wanted:
        return None
    return next((p for p in providers() if wanted in p.cloud_init_names), None)


def sources() -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(_load(DATA_FILE).get("sources")).items()}


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
