"""``ask_cloud_metadata`` against real HTTP servers on 127.0.0.1 (reached through GPUDOCTOR_CLOUD_METADATA_URL)
that serve the recorded answers in tests/captured/cloud and enforce each provider's headers: the IMDSv2 token
flow, the one deadline across all requests, and failures recorded, never raised."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpudoctor.evidence.cloud_metadata import AWS_TOKEN_HEADER, BODY_LIMIT, ENDPOINT_OVERRIDE_ENV, ask_cloud_metadata
from gpudoctor.evidence.model import EvidenceItem
from gpudoctor.facts.cloud_identity import parse_cloud_metadata

CAPTURED = Path(__file__).resolve().parents[1] / "captured" / "cloud"
# Synthetic: a made-up IMDSv2 session token (AWS's are opaque strings).
SYNTHETIC_TOKEN = "AQAEAsynthetic-imdsv2-token=="


def _captured(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


def _aws_routes() -> dict[str, str]:
    document = json.loads(_captured("aws-instance-identity-document-docs-example.json"))
    return {
        "/latest/meta-data/instance-type": document["instanceType"],
        "/latest/meta-data/placement/region": document["region"],
        "/latest/meta-data/placement/availability-zone": document["availabilityZone"],
        "/latest/meta-data/ami-id": _captured("aws-imds-ami-id-docs-example.txt").strip(),
    }


class Recorded:
    """What the test server saw: (method, path, headers) per request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []


Reply = tuple[int, dict[str, str], bytes]
Route = Callable[[str, str, dict[str, str]], Reply]


def metadata_route(provider: str, delay_s: float = 0.0) -> Route:
    """Each provider's service as its documentation describes it, answering the recorded bodies."""

    def route(method: str, path: str, headers: dict[str, str]) -> Reply:
        time.sleep(delay_s)
        if provider == "aws":
            if method == "PUT" and path == "/latest/api/token":
                if not headers.get("x-aws-ec2-metadata-token-ttl-seconds"):
                    return 400, {}, b"Missing or Invalid Parameters"
                return 200, {}, SYNTHETIC_TOKEN.encode()
            if headers.get(AWS_TOKEN_HEADER.lower()) != SYNTHETIC_TOKEN:
                return 401, {}, b"Unauthorized"
            body = _aws_routes().get(path)
        elif provider == "gcp":
            if headers.get("metadata-flavor") != "Google":
                return 403, {}, b"Missing Metadata-Flavor:Google header."
            # Synthetic bodies in Google's documented format: no verbatim capture was found (SOURCES.md).
            body = {
                "/computeMetadata/v1/instance/machine-type": "projects/123456789012/machineTypes/a2-highgpu-1g",
                "/computeMetadata/v1/instance/zone": "projects/123456789012/zones/us-central1-a",
                "/computeMetadata/v1/instance/image": "projects/debian-cloud/global/images/debian-12-bookworm-v20240110",
            }.get(path)
        elif provider == "azure":
            if headers.get("metadata") != "true":
                return 400, {}, b'{"error": "Bad request. Required metadata header not specified"}'
            body = (
                _captured("azure-imds-instance-docs-example-linux.json")
                if path.startswith("/metadata/instance?api-version=")
                else None
            )
        else:
            if headers.get("authorization") != "Bearer Oracle":
                return 401, {}, b"Unauthorized"
            body = _captured("oci-opc-instance-cloud-init-test-oracle.json") if path == "/opc/v2/instance/" else None
        if body is None:
            return 404, {}, b"Not Found"
        return 200, {}, body.encode()

    return route


class QuietServer(ThreadingHTTPServer):
    """A client that stopped listening (the deadline) is expected here, not an error to print."""

    def handle_error(self, request: object, client_address: object) -> None:
        return


@pytest.fixture
def serve() -> Iterator[Callable[[Route], tuple[str, Recorded]]]:
    servers: list[ThreadingHTTPServer] = []

    def start(route: Route) -> tuple[str, Recorded]:
        seen = Recorded()

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                seen.requests.append((self.command, self.path, headers))
                status, extra, body = route(self.command, self.path, headers)
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PUT = _answer

            def log_message(self, format: str, *args: object) -> None:
                return

        server = QuietServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        servers.append(server)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}", seen

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _ask(provider: str, url: str, timeout_s: float = 0.5) -> tuple[EvidenceItem, dict[str, object], float]:
    started = time.monotonic()
    item = ask_cloud_metadata(provider, timeout_s=timeout_s, environ={ENDPOINT_OVERRIDE_ENV: url})
    elapsed = time.monotonic() - started
    record = item.json()
    assert isinstance(record, dict)
    return item, record, elapsed


# --------------------------------------------------------------------------- each provider, as documented


def test_aws_imdsv2_token_first_then_every_get_carries_it(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, seen = serve(metadata_route("aws"))
    item, record, _ = _ask("aws", url)
    assert item.name == "cloud-metadata.json" and item.kind == "json" and item.error is None
    methods = [(method, path) for method, path, _ in seen.requests]
    assert methods[0] == ("PUT", "/latest/api/token")
    assert seen.requests[0][2]["x-aws-ec2-metadata-token-ttl-seconds"] == "60"
    assert [path for _, path in methods[1:]] == list(_aws_routes())
    assert all(headers.get("x-aws-ec2-metadata-token") == SYNTHETIC_TOKEN for _, _, headers in seen.requests[1:])
    # The token is a credential: used, never recorded.
    assert SYNTHETIC_TOKEN not in (item.text or "")
    answer = parse_cloud_metadata(record)
    assert (answer.ok, answer.instance_type, answer.region, answer.zone, answer.image) == (
        True,
        "t2.micro",
        "us-west-2",
        "us-west-2b",
        "ami-0abcdef1234567890",
    )


def test_the_test_server_refuses_a_get_without_the_token(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    import http.client

    url, _ = serve(metadata_route("aws"))
    connection = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=2)
    connection.request("GET", "/latest/meta-data/instance-type")
    assert connection.getresponse().status == 401
    connection.close()


def test_aws_without_a_token_sends_no_get_and_says_why(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, seen = serve(lambda method, path, headers: (403, {}, b"Forbidden"))
    _, record, _ = _ask("aws", url)
    assert [m for m, _, _ in seen.requests] == ["PUT"]
    assert parse_cloud_metadata(record).error == "HTTP 403 from PUT /latest/api/token"


@pytest.mark.parametrize(
    ("provider", "header", "value", "instance_type"),
    [
        ("gcp", "metadata-flavor", "Google", "a2-highgpu-1g"),
        ("azure", "metadata", "true", "Standard_A3"),
        ("oci", "authorization", "Bearer Oracle", "VM.Standard2.1"),
    ],
)
def test_each_provider_is_asked_with_its_header(
    serve: Callable[[Route], tuple[str, Recorded]], provider: str, header: str, value: str, instance_type: str
) -> None:
    url, seen = serve(metadata_route(provider))
    item, record, _ = _ask(provider, url)
    assert seen.requests and all(headers.get(header) == value for _, _, headers in seen.requests)
    assert item.error is None and parse_cloud_metadata(record).instance_type == instance_type


# --------------------------------------------------------------------------- bounded, recorded, never raised


def test_a_service_that_never_answers_costs_the_timeout_and_no_more() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # connections complete in the backlog; nothing ever reads or answers them
    try:
        item, record, elapsed = _ask("gcp", f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=0.5)
    finally:
        listener.close()
    assert elapsed < 1.0
    assert item.timed_out and item.error == "timed out after 0.5 s" and record["error"] == item.error
    requests = record["requests"]
    assert isinstance(requests, list) and len(requests) == 1  # the first request used the whole budget


def test_the_deadline_spans_all_requests(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, seen = serve(metadata_route("aws", delay_s=0.2))  # each answer in time, all of them not
    item, _, elapsed = _ask("aws", url, timeout_s=0.5)
    assert elapsed < 1.0 and item.timed_out
    assert len(seen.requests) < 1 + len(_aws_routes())


def test_garbage_instead_of_http_is_recorded() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def babble() -> None:
        connection, _ = listener.accept()
        connection.recv(4096)
        connection.sendall(b"\x00\xffnot http at all\r\n\r\n")
        connection.close()

    thread = threading.Thread(target=babble, daemon=True)
    thread.start()
    try:
        item, record, _ = _ask("azure", f"http://127.0.0.1:{listener.getsockname()[1]}")
    finally:
        thread.join(2)
        listener.close()
    assert item.error is not None and "GET /metadata/instance" in item.error
    assert parse_cloud_metadata(record).ok is False


def test_connection_refused_is_recorded() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    item, _, _ = _ask("oci", f"http://127.0.0.1:{port}")
    assert item.error == "GET /opc/v2/instance/: connection refused"


def test_http_errors_are_recorded_with_their_status(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, _ = serve(lambda method, path, headers: (500, {}, b"Internal Server Error"))
    item, record, _ = _ask("gcp", url)
    assert item.error is None  # the exchange worked; the facts judge the statuses
    assert parse_cloud_metadata(record).error == "HTTP 500 from GET /computeMetadata/v1/instance/machine-type"


def test_redirects_are_not_followed(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, seen = serve(lambda method, path, headers: (302, {"Location": "http://127.0.0.1:1/elsewhere"}, b""))
    _, record, _ = _ask("azure", url)
    assert len(seen.requests) == 1
    assert parse_cloud_metadata(record).error == "HTTP 302 from GET /metadata/instance?api-version=2021-02-01"


def test_bodies_are_capped(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, _ = serve(lambda method, path, headers: (200, {}, b"x" * (BODY_LIMIT * 3)))
    _, record, _ = _ask("gcp", url)
    requests = record["requests"]
    assert isinstance(requests, list)
    assert len(requests[0]["body"]) == BODY_LIMIT and requests[0]["truncated"] is True


def test_proxy_settings_are_never_used(
    serve: Callable[[Route], tuple[str, Recorded]], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # the discard port: a request sent there would fail
    url, seen = serve(metadata_route("azure"))
    item, _, _ = _ask("azure", url)
    assert item.error is None and len(seen.requests) == 1


@pytest.mark.parametrize("endpoint", ["https://127.0.0.1:1", "ftp://x", "http://", "not a url", "http://[::1"])
def test_a_bad_override_sends_nothing(endpoint: str) -> None:
    item = ask_cloud_metadata("aws", environ={ENDPOINT_OVERRIDE_ENV: endpoint})
    record = item.json()
    assert isinstance(record, dict) and record["requests"] == [] and "not an http:// URL" in (item.error or "")


def test_an_unknown_provider_sends_nothing() -> None:
    item = ask_cloud_metadata("hetzner", environ={ENDPOINT_OVERRIDE_ENV: "http://127.0.0.1:9"})
    record = item.json()
    assert isinstance(record, dict) and record["requests"] == [] and "does not know how" in (item.error or "")


@pytest.mark.parametrize(
    ("provider", "secrets"),
    [
        ("azure", ["publicKeys", "ssh-rsa 0", "subscriptionId", "resourceGroupName", "baz:bash", "osProfile"]),
        ("oci", ["ssh_authorized_keys", "user_data", "IyEvYmluL3NoCnRvdWNoIC90bXAvZm9v", "compartmentId"]),
    ],
)
def test_instance_documents_keep_only_type_place_and_image(
    serve: Callable[[Route], tuple[str, Recorded]], provider: str, secrets: list[str]
) -> None:
    url, _ = serve(metadata_route(provider))
    item, record, _ = _ask(provider, url)
    text = item.text or ""
    assert not [secret for secret in secrets if secret in text]
    requests = record["requests"]
    assert isinstance(requests, list) and "filtered" in requests[0]
    assert parse_cloud_metadata(record).ok


def test_an_instance_document_that_is_no_json_is_not_kept(serve: Callable[[Route], tuple[str, Recorded]]) -> None:
    url, _ = serve(lambda method, path, headers: (200, {}, b"userData=c2VjcmV0 and more"))
    _, record, _ = _ask("azure", url)
    requests = record["requests"]
    assert isinstance(requests, list) and requests[0]["body"] is None and "c2VjcmV0" not in json.dumps(record)
