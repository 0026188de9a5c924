"""The clouds gpudoctor recognises and how each names itself in DMI and cloud-init (``data/cloud_providers.json``,
a source on every row): the one home of "this DMI means that cloud"."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CloudProvider:
    key: str  # "aws", "gcp", "azure", "oci", "alibaba", ...
    name: str  # "AWS", "Google Cloud", "Azure", "Oracle Cloud", ...
    source: str = ""


def provider(key: str) -> CloudProvider | None:
    raise NotImplementedError  # helper H1


def providers() -> tuple[CloudProvider, ...]:
    raise NotImplementedError  # helper H1
