"""Ask a cloud's instance metadata service for this instance's type and place: only with ``--cloud-metadata``.

Never called by plain collection.  The command asks only after DMI has said which cloud this is (the facts
decide the provider; this module only knows how each provider is asked), with a short timeout on the whole
exchange, and records every request and its answer as evidence (``cloud-metadata.json``) for the facts to read.

``GPUDOCTOR_CLOUD_METADATA_URL`` replaces the service's base URL (tests serve recorded answers on 127.0.0.1).

How it is asked, and why so: ``http.client`` directly (it never reads ``http_proxy``: a metadata request must
never leave the machine through a proxy, and Azure's documentation says IMDS requests must bypass proxies); one
deadline across all requests, so a service that does not answer costs ``timeout_s`` at most; redirects are not
followed (a 3xx is recorded as it came); bodies are cut at 64 KiB.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.model import EvidenceItem

if TYPE_CHECKING:
    import http.client

DEFAULT_TIMEOUT_S = 0.5
ENDPOINT_OVERRIDE_ENV = "GPUDOCTOR_CLOUD_METADATA_URL"
# The providers this module knows how to ask (keys as the facts name them).
PROVIDERS: tuple[str, ...] = ("aws", "gcp", "azure", "oci")
# All four services answer on the link-local address.  GCE's documented name is metadata.google.internal; Google
# documents 169.254.169.254 as the same server, and an address needs no DNS lookup.
DEFAULT_ENDPOINT = "http://169.254.169.254"
BODY_LIMIT = 64 * 1024
_CHUNK = 8192

# AWS IMDSv2, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html: a session
# token from ``PUT /latest/api/token`` (header X-aws-ec2-metadata-token-ttl-seconds, 1 to 21600), then every GET
# carries it in X-aws-ec2-metadata-token.  The categories are listed in instancedata-data-categories.html.
AWS_TOKEN_PATH = "/latest/api/token"
AWS_TOKEN_TTL_HEADER = "X-aws-ec2-metadata-token-ttl-seconds"
AWS_TOKEN_HEADER = "X-aws-ec2-metadata-token"
AWS_PATHS = (
    "/latest/meta-data/instance-type",
    "/latest/meta-data/placement/region",
    "/latest/meta-data/placement/availability-zone",
    "/latest/meta-data/ami-id",
)
# Google Compute Engine, https://cloud.google.com/compute/docs/metadata/querying-metadata: every request carries
# ``Metadata-Flavor: Google``; keys from https://cloud.google.com/compute/docs/metadata/predefined-metadata-keys.
GCE_HEADERS = {"Metadata-Flavor": "Google"}
GCE_PATHS = (
    "/computeMetadata/v1/instance/machine-type",
    "/computeMetadata/v1/instance/zone",
    "/computeMetadata/v1/instance/image",
)
# Azure IMDS, https://learn.microsoft.com/azure/virtual-machines/instance-metadata-service: ``Metadata: true`` and
# an api-version; the answer's ``compute`` holds vmSize, location, zone and storageProfile.imageReference.
AZURE_HEADERS = {"Metadata": "true"}
AZURE_PATH = "/metadata/instance?api-version=2021-02-01"
# Oracle Cloud IMDSv2, https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm: ``/opc/v2/``
# with ``Authorization: Bearer Oracle`` (cloud-init's DataSourceOracle asks the same); shape, region,
# canonicalRegionName, availabilityDomain, image.
OCI_HEADERS = {"Authorization": "Bearer Oracle"}
OCI_PATH = "/opc/v2/instance/"


# Azure's and Oracle's instance documents also carry what must never reach a snapshot someone shares: user data,
# SSH keys, subscription and resource ids, tags.  Of a JSON answer only these keys are kept (as cloud-init's
# instance data is read: the few keys that say the type and the place); the record says it was filtered.
KEEP_KEYS: dict[str, dict[str, object]] = {
    "azure": {
        "compute": {
            "azEnvironment": None,
            "location": None,
            "zone": None,
            "vmSize": None,
            "storageProfile": {"imageReference": None},
        }
    },
    "oci": {
        "shape": None,
        "region": None,
        "canonicalRegionName": None,
        "availabilityDomain": None,
        "ociAdName": None,
        "faultDomain": None,
        "image": None,
    },
}


def _kept(value: object, keep: dict[str, object]) -> dict[str, object]:
    if not isinstance(value, dict):
        return {}
    kept: dict[str, object] = {}
    for key, inner in keep.items():
        if key not in value:
            continue
        kept[key] = _kept(value[key], inner) if isinstance(inner, dict) else value[key]
    return kept


def _filter_body(provider: str, entry: dict[str, object]) -> None:
    """Keep only KEEP_KEYS of a JSON document answer; of anything else (cut at the cap, or no JSON object) only
    its size is kept: it could still hold what KEEP_KEYS leaves out."""
    keep = KEEP_KEYS.get(provider)
    body = entry.get("body")
    if keep is None or not isinstance(body, str):
        return
    try:
        document = None if entry.get("truncated") else json.loads(body)
    except (ValueError, RecursionError):
        document = None
    if isinstance(document, dict):
        entry["body"] = json.dumps(_kept(document, keep), indent=1)
        entry["filtered"] = "only the keys that name the type, place and image are kept"
    else:
        entry["body"] = None
        entry["filtered"] = f"the answer ({len(body)} characters) is no whole JSON object; it is not kept"


class _Deadline(Exception):
    """The whole exchange ran out of its time."""


class _Session:
    """Requests to one base URL, all inside one deadline; each is appended to ``requests``."""

    def __init__(self, host: str, port: int, prefix: str, deadline: float, timeout_s: float) -> None:
        self.host, self.port, self.prefix = host, port, prefix
        self.deadline, self.timeout_s = deadline, timeout_s
        self.requests: list[dict[str, object]] = []

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Deadline
        return left

    def send(self, method: str, path: str, headers: Mapping[str, str]) -> dict[str, object]:
        """One request; its record (status and body, or the error).  Raises _Deadline when time ran out."""
        import http.client
        import socket

        entry: dict[str, object] = {"method": method, "path": path, "status": None, "body": None, "error": None}
        started = time.monotonic()
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.remaining())
        try:
            connection.connect()
            connection.request(method, self.prefix + path, headers=dict(headers))
            if connection.sock is not None:
                connection.sock.settimeout(self.remaining())
            response = connection.getresponse()
            entry["status"] = response.status
            body, truncated = self._read(connection, response)
            entry["body"] = body.decode("utf-8", errors="replace")
            if truncated:
                entry["truncated"] = True
        except _Deadline:
            entry["error"] = f"timed out after {self.timeout_s:g} s"
            raise
        except (TimeoutError, socket.timeout):
            entry["error"] = f"timed out after {self.timeout_s:g} s"
            raise _Deadline from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            entry["error"] = _error_words(exc)
        finally:
            entry["duration_s"] = round(time.monotonic() - started, 4)
            self.requests.append(entry)
            connection.close()
        return entry

    def _read(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> tuple[bytes, bool]:
        # read1 does one receive at most, so each wait is bounded by what is left of the deadline.
        chunks: list[bytes] = []
        size = 0
        while size <= BODY_LIMIT:
            if connection.sock is not None:
                connection.sock.settimeout(self.remaining())
            chunk = response.read1(_CHUNK)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)[:BODY_LIMIT], True


def _error_words(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    text = str(exc) or type(exc).__name__
    return text[:300]


def _split_endpoint(endpoint: str) -> tuple[str, int, str] | None:
    """(host, port, path prefix) of an ``http://`` URL; None for anything else (https is not what IMDS speaks)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        port = parts.port or 80
    except ValueError:
        return None
    if parts.scheme != "http" or not parts.hostname:
        return None
    return parts.hostname, port, parts.path.rstrip("/")


def _ask_aws(session: _Session) -> None:
    token = session.send("PUT", AWS_TOKEN_PATH, {AWS_TOKEN_TTL_HEADER: "60"})
    body = token.get("body")
    if token.get("status") != 200 or not isinstance(body, str) or not body.strip():
        return  # the facts say why: the token request's status or error is recorded
    # The token is a credential: it is used, never recorded.
    token["body"] = "(token received, not recorded)"
    for path in AWS_PATHS:
        session.send("GET", path, {AWS_TOKEN_HEADER: body.strip()})


def _ask(provider: str, session: _Session) -> None:
    if provider == "aws":
        _ask_aws(session)
    elif provider == "gcp":
        for path in GCE_PATHS:
            session.send("GET", path, GCE_HEADERS)
    elif provider == "azure":
        _filter_body(provider, session.send("GET", AZURE_PATH, AZURE_HEADERS))
    elif provider == "oci":
        _filter_body(provider, session.send("GET", OCI_PATH, OCI_HEADERS))


def _first_error(requests: list[dict[str, object]]) -> str | None:
    for entry in requests:
        if entry.get("error"):
            return f"{entry.get('method')} {entry.get('path')}: {entry.get('error')}"
    return None


def ask_cloud_metadata(
    provider: str, timeout_s: float = DEFAULT_TIMEOUT_S, environ: Mapping[str, str] | None = None
) -> EvidenceItem:
    """The ``cloud-metadata.json`` item for ``provider``: each request with its status and body (capped), or the
    error that stopped it.  Never raises."""
    env = os.environ if environ is None else environ
    started = time.monotonic()
    endpoint = (env.get(ENDPOINT_OVERRIDE_ENV) or "").strip() or DEFAULT_ENDPOINT
    record: dict[str, object] = {"provider": provider, "endpoint": endpoint, "requests": [], "error": None}
    try:
        if provider not in PROVIDERS:
            record["error"] = f"gpudoctor does not know how to ask the metadata service of {provider!r}"
        elif (split := _split_endpoint(endpoint)) is None:
            record["error"] = f"{ENDPOINT_OVERRIDE_ENV} is not an http:// URL: {endpoint[:200]!r}"
        else:
            host, port, prefix = split
            session = _Session(host, port, prefix, started + max(0.01, float(timeout_s)), timeout_s)
            record["requests"] = session.requests
            try:
                _ask(provider, session)
            except _Deadline:
                record["error"] = f"timed out after {timeout_s:g} s"
            else:
                record["error"] = _first_error(session.requests)
    except Exception as exc:  # noqa: BLE001 - evidence records what went wrong; it never raises
        record["error"] = f"{type(exc).__name__}: {_error_words(exc)}"
    error = record["error"]
    return EvidenceItem(
        name=Ev.CLOUD_METADATA.value,
        kind="json",
        text=json.dumps(record, indent=1),
        duration_s=time.monotonic() - started,
        timed_out=isinstance(error, str) and error.startswith("timed out"),
        error=error if isinstance(error, str) else None,
    )


def not_asked_item(reason: str) -> EvidenceItem:
    """The item for ``--cloud-metadata`` where nothing was sent: the record says why (the report shows it)."""
    record: dict[str, object] = {"provider": None, "endpoint": None, "requests": [], "error": reason, "sent": False}
    return EvidenceItem(name=Ev.CLOUD_METADATA.value, kind="json", text=json.dumps(record, indent=1), error=reason)
