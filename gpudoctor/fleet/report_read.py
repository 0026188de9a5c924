"""Finding and reading node reports for ``fleet report``: one file at a time, boiled down at once.

A folder stands for its ``*.json`` files (sorted by name; ``fleet-missing.json``, the gatherer's list of
nodes that did not answer, is read as that list, not as a report); a file stands for itself.  A node's
name is its file's stem (``node7.json`` -> ``node7``): data to show, never used as a path.  Whatever a
file holds, reading it gives a :class:`NodeSummary` or an :class:`Unreadable` saying why; nothing stops
the run.  Each report is parsed, summarised and dropped before the next one, so memory follows the
summaries, not the reports; with many files the parsing (what dominates) is spread over a process pool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

from gpudoctor.errors import UsageError
from gpudoctor.fleet.gather import MISSING_FILE
from gpudoctor.fleet.report_model import NodeSummary, Unreadable
from gpudoctor.fleet.report_summary import summarize, text

MAX_REPORT_BYTES = 64 * 1024 * 1024  # a node report is ~60 KB; anything this large is not one
POOL_MIN_FILES = 200  # below this a process pool costs more to start than it saves
POOL_CHUNK = 64  # files per task handed to a worker: few round trips, small results

Read = Union[NodeSummary, Unreadable]


@dataclass
class Inputs:
    """What the paths given to ``fleet report`` stand for."""

    reports: list[str] = field(default_factory=list)  # node report files, in the order to read them
    missing_lists: list[str] = field(default_factory=list)  # fleet-missing.json files
    unreadable: list[Unreadable] = field(default_factory=list)  # paths that are neither


def find_inputs(paths: list[str]) -> Inputs:
    """The report files behind the given folders and files; a path that does not exist (a typo) or no
    report at all is a usage error."""
    inputs = Inputs()
    for path in paths:
        if os.path.isdir(path):
            try:
                names = sorted(e.name for e in os.scandir(path) if e.name.endswith(".json") and e.is_file())
            except OSError as exc:
                inputs.unreadable.append(Unreadable(path, f"cannot list the folder: {exc.strerror or exc}"))
                continue
            for name in names:
                target = inputs.missing_lists if name == MISSING_FILE else inputs.reports
                target.append(os.path.join(path, name))
        elif os.path.basename(path) == MISSING_FILE:
            inputs.missing_lists.append(path)
        elif os.path.isfile(path):
            inputs.reports.append(path)
        elif not os.path.lexists(path):
            raise UsageError(f"{path}: no such file or folder")
        else:
            inputs.unreadable.append(Unreadable(path, "not a file or folder"))
    if not inputs.reports and not inputs.missing_lists:
        where = ", ".join(paths[:3]) + (" ..." if len(paths) > 3 else "")
        raise UsageError(f"no node reports (*.json) in {where}; 'gpudoctor fleet run -o DIR' writes them")
    return inputs


def node_name(path: str) -> str:
    """``/x/node7.json`` -> ``node7`` (a file without a stem keeps its whole name)."""
    base = os.path.basename(path)
    stem = os.path.splitext(base)[0]
    return stem or base


def _load(path: str) -> object | Unreadable:
    """The parsed JSON of ``path``, or why it cannot be had."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_REPORT_BYTES:
                return Unreadable(path, f"{size} bytes: larger than a node report can be ({MAX_REPORT_BYTES} max)")
            raw = handle.read(MAX_REPORT_BYTES + 1)
    except OSError as exc:
        return Unreadable(path, f"cannot read it: {exc.strerror or exc}")
    if len(raw) > MAX_REPORT_BYTES:
        return Unreadable(path, f"larger than a node report can be ({MAX_REPORT_BYTES} bytes max)")
    if not raw.strip():
        return Unreadable(path, "empty file")
    try:
        parsed: object = json.loads(raw)  # bytes: no decoded copy of the text (UTF-8/16/32 told apart by json)
        return parsed
    except UnicodeDecodeError:
        return Unreadable(path, "not UTF-8 text, so not a gpudoctor report")
    except (ValueError, RecursionError) as exc:
        found = last_report_in_log(raw)
        return found if found is not None else Unreadable(path, f"not JSON ({str(exc)[:120]})")


def last_report_in_log(raw: bytes) -> dict[str, object] | None:
    """The newest report in a log that holds reports between other lines: ``kubectl logs`` of the
    ``gpudoctor-check`` DaemonSet (``fleet k8s``) prints a pretty JSON report, then a status line, each round.
    A report starts with "{" at the start of a line; the last one that parses whole and names its schema wins.
    """
    text = raw.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    starts = [0] if text.startswith("{") else []
    at = text.find("\n{")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n{", at + 1)
    for start in reversed(starts):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "schema_version" in value:
            return value
    return None


def read_report(path: str) -> Read:
    """One file -> its summary, or why it is not a node report.  Never raises."""
    data = _load(path)
    if isinstance(data, Unreadable):
        return data
    return summarize(node_name(path), path, data)


def read_missing_list(path: str) -> list[tuple[str, str]] | Unreadable:
    """``fleet-missing.json``: ``{"missing": [{"node": ..., "why": ...}]}`` -> [(node, why)]."""
    data = _load(path)
    if isinstance(data, Unreadable):
        return data
    entries = data.get("missing") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return Unreadable(path, 'not a fleet-missing.json list (no "missing" list)')
    missing = []
    for entry in entries:
        node = text(entry.get("node"), 255) if isinstance(entry, dict) else None
        if node is not None:
            assert isinstance(entry, dict)
            missing.append((node, text(entry.get("why")) or "no report"))
    return missing


def read_reports(paths: list[str], workers: int | None = None) -> Iterator[Read]:
    """Every file's summary in the order given, one report in memory per worker at a time.

    A ``concurrent.futures`` process pool, not ``multiprocessing.Pool``: a worker that dies (the OOM killer, a
    signal) breaks the executor with an error instead of leaving the reader waiting for ever, and what was not
    read yet is then read here.  (``Pool``'s shutdown also hung one benchmark run for minutes.)
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers < 2 or len(paths) < POOL_MIN_FILES:
        yield from map(read_report, paths)
        return
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    done = 0
    try:
        with ProcessPoolExecutor(min(workers, len(paths) // POOL_CHUNK + 1)) as pool:
            for read in pool.map(read_report, paths, chunksize=POOL_CHUNK):
                yield read
                done += 1
    except (OSError, BrokenProcessPool):  # no semaphores or /dev/shm (some containers), or a worker died
        yield from map(read_report, paths[done:])
