"""The driver's side of Ray: import it, attach to an existing cluster quietly, list its nodes.

Ray is optional: imported here, inside functions, only when ``fleet run --ray`` runs.  Attaching never starts
a cluster (an explicit address makes ``ray.init`` connect or fail) and fails fast: Ray itself retries an
unreachable address for minutes, printing warnings, so the address is tried over TCP first, and its retries
are cut down for an address that answers but is no Ray cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gpudoctor.errors import UsageError

# How long the address may take to accept a TCP connection before it counts as unreachable.
TCP_CHECK_S = 5.0
# Ray's own connect loop: one try (of about 40 s in Ray 2.60) instead of 20, unless the user set it.
_RAY_CONNECT_ENV = {"RAY_gcs_server_port_wait_time_s": "1"}


@dataclass(frozen=True)
class RayNode:
    """One node as Ray's GCS lists it."""

    node_id: str
    hostname: str  # NodeManagerHostname: the raylet's host name ("" when Ray has none)
    ip: str  # NodeManagerAddress
    alive: bool


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            f"fleet run --ray needs the ray package ({exc.msg}): pip install 'ray==<the cluster's version>'"
        ) from None
    return ray


def tcp_target(address: str) -> tuple[str, int] | None:
    """``host:port`` of ADDRESS (``ray://`` or not) to try first; None for ``auto`` (Ray finds the cluster)."""
    if address == "auto":
        return None
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(
            f"--ray {address!r}: give the head's host:port (GCS, 6379 by default), ray://host:port or auto"
        )
    return host, int(port)


def check_reachable(address: str, timeout: float = TCP_CHECK_S) -> None:
    """A UsageError naming the address when nothing listens there (refused, no route, unknown host)."""
    target = tcp_target(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError since 3.10
            why = f"no answer within {timeout:g} s"
        raise UsageError(f"cannot reach the Ray cluster at {address}: {why}") from None


def connect(ray: Any, address: str) -> None:
    """Attach this process as a driver of the cluster at ADDRESS; a UsageError (one line) if it can't."""
    check_reachable(address)
    for name, value in _RAY_CONNECT_ENV.items():
        os.environ.setdefault(name, value)
    try:
        with _stderr_silenced():
            ray.init(
                address=address,
                logging_level=logging.ERROR,
                log_to_driver=False,  # the workers' output is ours to read, never to echo
                configure_logging=True,
            )
    except Exception as exc:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError (versions), ValueError
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise UsageError(f"cannot attach to the Ray cluster at {address}: {first_line(exc)}") from None


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Ray's C++ core writes its retry warnings straight to file descriptor 2 while it connects; the one line
    gpudoctor prints instead says it better.  Only for the call: nothing of gpudoctor's is written meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def list_nodes(ray: Any) -> list[RayNode]:
    """Every node the GCS knows, alive or dead, sorted by address then id (a stable order for the output)."""
    found = []
    for record in ray.nodes():
        if not isinstance(record, dict):
            continue
        node_id = record.get("NodeID")
        if not isinstance(node_id, str) or not node_id:
            continue
        found.append(
            RayNode(
                node_id=node_id,
                hostname=_text(record.get("NodeManagerHostname")),
                ip=_text(record.get("NodeManagerAddress")),
                alive=record.get("Alive") is True,
            )
        )
    return sorted(found, key=lambda n: (n.ip, n.node_id))


def first_line(exc: BaseException) -> str:
    """An exception as one short line (Ray's messages run to pages: a traceback, hints, the worker's log)."""
    text = str(exc).strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return (line or type(exc).__name__)[:300]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
