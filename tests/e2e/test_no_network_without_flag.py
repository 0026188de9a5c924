"""No network call without ``--cloud-metadata``: the commands run as a user runs them (subprocesses) with an audit
hook (a ``sitecustomize`` on PYTHONPATH) that writes every ``socket.connect`` and ``socket.getaddrinfo`` to a file.

With the flag, requests go only where DMI names a cloud gpudoctor knows, and only to the endpoint it was given
(here a server on 127.0.0.1); a snapshot (``check --from``) is never asked for more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from gpudoctor.evidence.cloud_metadata import ENDPOINT_OVERRIDE_ENV
from gpudoctor.evidence.scan_platform import scan_dmi
from gpudoctor.kb.cloud_providers import provider_for_dmi

REPO = Path(__file__).resolve().parents[2]
UNSENT = "DMI names no cloud whose metadata service gpudoctor knows"

SITECUSTOMIZE = """
import json, os, sys

_LOG = os.environ.get("GPUDOCTOR_TEST_AUDIT_LOG")


def _hook(event, args):
    if _LOG and event in ("socket.connect", "socket.getaddrinfo"):
        where = args[1] if event == "socket.connect" else [args[0], args[1]]
        try:
            where = json.loads(json.dumps(where, default=str))
        except Exception:
            where = repr(where)
        with open(_LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "where": where, "pid": os.getpid()}) + "\\n")


sys.addaudithook(_hook)
"""


@pytest.fixture
def audited(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment for an audited subprocess, and the file its network events land in."""
    hook_dir = tmp_path / "hook"
    hook_dir.mkdir()
    (hook_dir / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    log = tmp_path / "network-events.jsonl"
    env = {k: v for k, v in os.environ.items() if k != ENDPOINT_OVERRIDE_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(hook_dir), str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["GPUDOCTOR_TEST_AUDIT_LOG"] = str(log)
    return env, log


def network_events(log: Path) -> list[dict[str, object]]:
    """Connects to an address (not a local unix socket) and name lookups."""
    if not log.exists():
        return []
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    return [e for e in events if e["event"] == "socket.getaddrinfo" or isinstance(e["where"], list)]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
        check=False,
    )


class _Counting(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]]

    def do_GET(self) -> None:
        self._answer()

    def do_PUT(self) -> None:
        self._answer()

    def _answer(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        body = b"synthetic-token" if self.command == "PUT" else b"g5.xlarge"  # synthetic answers
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def metadata_server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Handler", (_Counting,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def _live_dmi_names_a_known_cloud() -> bool:
    return provider_for_dmi(scan_dmi()) is not None


def test_check_makes_no_network_call(audited: tuple[dict[str, str], Path]) -> None:
    env, log = audited
    result = run(["check", "--format", "json", "--frameworks", "none"], env)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    json.loads(result.stdout)
    assert network_events(log) == []


def test_collect_makes_no_network_call_and_writes_no_metadata(
    audited: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, log = audited
    snapshot = tmp_path / "snap"
    result = run(["collect", "-o", str(snapshot), "--frameworks", "none"], env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (snapshot / "manifest.json").exists()
    assert not (snapshot / "cloud-metadata.json").exists()
    assert network_events(log) == []


def test_the_hook_does_see_a_connect(
    audited: tuple[dict[str, str], Path], metadata_server: tuple[str, list[str]]
) -> None:
    # The audit hook itself works: a child that does connect is recorded (else the tests above prove nothing).
    env, log = audited
    url, _ = metadata_server
    code = f"import urllib.request; urllib.request.urlopen({url!r} + '/x', timeout=5).read()"
    subprocess.run([sys.executable, "-c", code], env={**env, "no_proxy": "*"}, check=True, timeout=60)
    events = network_events(log)
    assert any(e["event"] == "socket.connect" and e["where"][0] == "127.0.0.1" for e in events)  # type: ignore[index]


def test_with_the_flag_only_a_known_cloud_is_asked(
    audited: tuple[dict[str, str], Path], metadata_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    env, log = audited
    url, seen = metadata_server
    env = {**env, ENDPOINT_OVERRIDE_ENV: url}
    snapshot = tmp_path / "snap"
    collected = run(["collect", "--cloud-metadata", "-o", str(snapshot), "--frameworks", "none"], env)
    checked = run(["check", "--cloud-metadata", "--format", "json", "--frameworks", "none"], env)
    assert collected.returncode == 0, collected.stderr[-2000:]
    assert checked.returncode in (0, 1), checked.stderr[-2000:]
    # Wherever this runs, nothing but the given endpoint is ever contacted.
    assert all(e["event"] == "socket.connect" and e["where"][0] == "127.0.0.1" for e in network_events(log))  # type: ignore[index]
    record = json.loads((snapshot / "cloud-metadata.json").read_text(encoding="utf-8"))
    if _live_dmi_names_a_known_cloud():
        pytest.skip("this machine's DMI names a cloud: its metadata service was asked (through the test server)")
    # Here DMI names no cloud: nothing is sent, and the snapshot says why.
    assert seen == [] and network_events(log) == []
    assert record["requests"] == [] and record["error"].startswith(UNSENT)


def test_a_snapshot_is_never_asked(
    audited: tuple[dict[str, str], Path], metadata_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    env, log = audited
    url, seen = metadata_server
    snapshot = tmp_path / "snap"
    assert run(["collect", "-o", str(snapshot), "--frameworks", "none"], env).returncode == 0
    # A snapshot from an AWS Nitro instance (synthetic DMI): a live run would ask; --from never does.
    platform = json.loads((snapshot / "platform.json").read_text(encoding="utf-8"))
    platform["dmi"].update(sys_vendor="Amazon EC2", product_name="g5.xlarge")
    (snapshot / "platform.json").write_text(json.dumps(platform), encoding="utf-8")
    result = run(
        ["check", "--from", str(snapshot), "--cloud-metadata", "--format", "json"], {**env, ENDPOINT_OVERRIDE_ENV: url}
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert seen == [] and network_events(log) == []


LIVE_PATH = """
import argparse, json, os
from gpudoctor.commands.live import ask_cloud_metadata_if_asked
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.facts import Facts

evidence = Evidence()
# Synthetic: the platform.json of an AWS Nitro instance.
platform = {"dmi": {"sys_vendor": "Amazon EC2", "product_name": "g4dn.xlarge"}, "cloud_init": None,
            "exists": [], "files": {}, "dirs": {}}
evidence.add(EvidenceItem("platform.json", "json", text=json.dumps(platform)))
item = ask_cloud_metadata_if_asked(evidence, argparse.Namespace(cloud_metadata=FLAG))
cloud = Facts(evidence).platform.cloud
print(json.dumps({"item": item is not None, "error": item and item.error, "type": cloud.instance_type,
                  "source": cloud.type_source}))
"""


def test_the_live_path_asks_the_cloud_dmi_names(
    audited: tuple[dict[str, str], Path], metadata_server: tuple[str, list[str]]
) -> None:
    env, log = audited
    url, seen = metadata_server
    result = subprocess.run(
        [sys.executable, "-c", LIVE_PATH.replace("FLAG", "True")],
        env={**env, ENDPOINT_OVERRIDE_ENV: url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    answer = json.loads(result.stdout)
    # The server's (synthetic) answer outranks DMI's product name.
    assert answer == {"item": True, "error": None, "type": "g5.xlarge", "source": "metadata"}
    assert seen[0] == "PUT /latest/api/token" and "GET /latest/meta-data/instance-type" in seen
    events = network_events(log)
    assert events and all(e["event"] in ("socket.connect", "socket.getaddrinfo") for e in events)
    assert {str(e["where"][0]) for e in events} == {"127.0.0.1"}  # type: ignore[index]
    without_flag = LIVE_PATH.replace("FLAG", "False")
    log.unlink()
    again = subprocess.run(
        [sys.executable, "-c", without_flag],
        env={**env, ENDPOINT_OVERRIDE_ENV: url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout) == {"item": False, "error": None, "type": "g4dn.xlarge", "source": "dmi"}
    assert network_events(log) == []
