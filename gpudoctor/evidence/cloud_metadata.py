"""Ask a cloud's instance metadata service for this instance's type and place: only with ``--cloud-metadata``.

Never called by plain collection.  The command asks only after DMI has said which cloud this is (the facts
decide the provider; this module only knows how each provider is asked), with a short timeout on the whole
exchange, and records every request and its answer as evidence (``cloud-metadata.json``) for the facts to read.

``GPUDOCTOR_CLOUD_METADATA_URL`` replaces the service's base URL (tests serve recorded answers on 127.0.0.1).
"""

from __future__ import annotations

from gpudoctor.evidence.model import EvidenceItem

DEFAULT_TIMEOUT_S = 0.5
ENDPOINT_OVERRIDE_ENV = "GPUDOCTOR_CLOUD_METADATA_URL"
# The providers this module knows how to ask (keys as the facts name them).
PROVIDERS: tuple[str, ...] = ("aws", "gcp", "azure", "oci")


def ask_cloud_metadata(
    provider: str, timeout_s: float = DEFAULT_TIMEOUT_S, environ: dict[str, str] | None = None
) -> EvidenceItem:
    """The ``cloud-metadata.json`` item for ``provider``: each request with its status and body (capped), or the
    error that stopped it.  Never raises."""
    raise NotImplementedError  # helper H1
