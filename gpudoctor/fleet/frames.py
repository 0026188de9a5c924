"""A node's report carried over a scheduler's standard output, and taken back apart.

``srun`` forwards every task's stdout to the one ``srun`` process, interleaving the tasks, and may cut
very long lines.  So a node prints its report as short ASCII lines, each tagged with its node and its place
(``GDFLEET <node> <i>/<n> <chunk>``), and a header line carrying the exit code and the report's SHA-256;
the gatherer joins each node's chunks in order and keeps the report only if its hash matches.  Whatever
else is on the stream (a scheduler's own messages, a task label like ``0: ``) is ignored.  JSON escapes
every non-ASCII character, so the text is ASCII and cut anywhere safely; the gatherer writes it back out
exactly as ``check --format json`` does.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

TAG = "GDFLEET"
# Short enough that no scheduler's line buffer (Slurm's is 1 KiB and more) ever splits one.
CHUNK_CHARS = 512
_HEADER = re.compile(
    rf"{TAG} (?P<node>\S+) header exit=(?P<exit>-?\d+) chunks=(?P<n>\d+) sha256=(?P<sha>[0-9a-f]{{64}})"
)
_CHUNK = re.compile(rf"{TAG} (?P<node>\S+) (?P<i>\d+)/(?P<n>\d+) (?P<data>[\x21-\x7e ]*)$")
# A node whose gpudoctor could not make a report (its --from snapshot is missing there, bad input) says why.
_FAILED = re.compile(rf"{TAG} (?P<node>\S+) failed exit=(?P<exit>-?\d+) (?P<why>[\x20-\x7e]*)$")


def encode(node: str, exit_code: int, report: dict[str, Any]) -> Iterator[str]:
    """The lines (without newlines) a node prints for its report (compact, ASCII-only JSON)."""
    data = json.dumps(report, separators=(",", ":"), ensure_ascii=True, default=str)
    chunks = [data[i : i + CHUNK_CHARS] for i in range(0, len(data), CHUNK_CHARS)] or [""]
    sha = hashlib.sha256(data.encode("ascii")).hexdigest()
    yield f"{TAG} {node} header exit={exit_code} chunks={len(chunks)} sha256={sha}"
    for i, chunk in enumerate(chunks):
        yield f"{TAG} {node} {i}/{len(chunks)} {chunk}"


def encode_failure(node: str, exit_code: int, why: str) -> str:
    """The one line a node prints when it has no report to send: why, as printable ASCII."""
    flat = " ".join(why.split()).encode("ascii", errors="backslashreplace").decode("ascii")
    printable = "".join(ch if " " <= ch <= "~" else "?" for ch in flat)[:500]
    return f"{TAG} {node} failed exit={exit_code} {printable}"


@dataclass
class Received:
    """What came back from one node: its report's text when every chunk arrived and the hash matched."""

    node: str
    exit_code: int | None = None
    report_text: str | None = None
    error: str | None = None
    _chunks: dict[int, str] = field(default_factory=dict, repr=False)
    _expected: int | None = field(default=None, repr=False)
    _sha: str | None = field(default=None, repr=False)
    _failure: str | None = field(default=None, repr=False)


def decode(lines: Iterable[str]) -> dict[str, Received]:
    """Each node's report from a stream holding any number of nodes' frames, in any interleaving."""
    nodes: dict[str, Received] = {}
    for raw in lines:
        at = raw.find(TAG + " ")
        if at < 0:
            continue
        line = raw[at:].rstrip("\r\n")
        header = _HEADER.match(line)
        if header:
            got = nodes.setdefault(header["node"], Received(header["node"]))
            got.exit_code = int(header["exit"])
            got._expected = int(header["n"])
            got._sha = header["sha"]
            continue
        failed = _FAILED.match(line)
        if failed:
            got = nodes.setdefault(failed["node"], Received(failed["node"]))
            got.exit_code = int(failed["exit"])
            got._failure = f"gpudoctor on the node failed: {failed['why']}"
            continue
        chunk = _CHUNK.match(line)
        if chunk:
            got = nodes.setdefault(chunk["node"], Received(chunk["node"]))
            got._chunks[int(chunk["i"])] = chunk["data"]
    for got in nodes.values():
        _finish(got)
    return nodes


def _finish(got: Received) -> None:
    if got._failure is not None and got._expected is None:
        got.error = got._failure
        return
    if got._expected is None:
        got.error = "its output had no report header (the node's gpudoctor did not finish)"
        return
    missing = [i for i in range(got._expected) if i not in got._chunks]
    if missing:
        got.error = f"{len(missing)} of {got._expected} parts of its report did not arrive"
        return
    text = "".join(got._chunks[i] for i in range(got._expected))
    if hashlib.sha256(text.encode("ascii", errors="replace")).hexdigest() != got._sha:
        got.error = "its report arrived damaged (checksum mismatch)"
        return
    try:
        report = json.loads(text)
    except ValueError:
        got.error = "its report is not JSON"
        return
    if not isinstance(report, dict):
        got.error = "its report is not a JSON object"
        return
    got.report_text = report_text(report)


def report_text(report: dict[str, Any]) -> str:
    """The report as ``check --format json`` writes it (so a gathered ``<node>.json`` reads the same)."""
    return json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n"
