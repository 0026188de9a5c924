"""Write evidence to a snapshot and read it back.

A snapshot is a directory (or a ``.tar.gz`` of one) holding one file per source
under its contract name plus ``manifest.json`` with each command's argv, exit
code, stderr, duration and whether it timed out.  Reading is forgiving about
*what* is there (a hand-made directory with two files, or one lone file, is fine:
whatever is missing is "not collected") and strict about *whether it can be
read* (a corrupt archive is a :class:`SnapshotError`, shown as one line, exit 2).
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import tarfile
import time
import zlib
from typing import BinaryIO

from gpudoctor import __version__
from gpudoctor.errors import UsageError
from gpudoctor.evidence.bounded_read import (
    MAX_INPUT_BYTES,
    MAX_JSON_DEPTH,
    describe_kind,
    json_too_deep,
    read_fifo,
    read_pipe_descriptor,
    read_regular_file,
)
from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.redact import redact, strip_url_credentials
from gpudoctor.evidence.safe_write import FileWriteError, write_directory, write_file_with
from gpudoctor.evidence.sniff import guess_source_name
from gpudoctor.evidence.sources import MANIFEST_NAME, SOURCE_NAMES, source_by_name

MANIFEST_SCHEMA = 1


class SnapshotError(UsageError):
    """The snapshot cannot be read or written; the message is one line for a person."""


def _file_text(item: EvidenceItem) -> str | None:
    # A command that failed before printing anything still leaves its error text
    # (nvidia-smi's "couldn't communicate" goes to stdout, other tools use stderr).
    if item.text:
        return item.text
    if item.stderr:
        return item.stderr
    return item.text


def _manifest(evidence: Evidence, redacted: bool) -> dict[str, object]:
    sources = {}
    for name, item in evidence.items.items():
        entry = item.manifest_entry()
        if redacted and item.stderr:
            entry["stderr"] = redact(item.stderr)
        if redacted and isinstance(entry.get("argv"), list):
            # The probed interpreter's path (argv) holds the user's home and name like any other text.
            entry["argv"] = [redact(word) for word in item.argv or []]
        sources[name] = entry
    return {
        "schema": MANIFEST_SCHEMA,
        "gpudoctor_version": __version__,
        "created_unix": int(time.time()),
        "redacted": redacted,
        "sources": sources,
    }


def _members(evidence: Evidence, redacted: bool) -> dict[str, str]:
    files: dict[str, str] = {}
    for name, item in evidence.items.items():
        text = _file_text(item)
        if text is None:
            continue
        # Credentials never leave the machine, not even with --no-redact (that keeps UUIDs, homes and names).
        files[name] = redact(text) if redacted else strip_url_credentials(text)
    files[MANIFEST_NAME] = json.dumps(_manifest(evidence, redacted), indent=1, sort_keys=True)
    return files


def write_snapshot(evidence: Evidence, path: str, redacted: bool = True, force: bool = False) -> str:
    """Write a directory, or a ``.tar.gz`` when ``path`` ends so.  Refuses to overwrite unless ``force``.

    Both are written beside ``path`` and renamed into place (never through a symbolic link), so an
    interrupted or failed write leaves no half snapshot; a failure is a :class:`SnapshotError`.
    """
    files = _members(evidence, redacted)
    try:
        if path.endswith((".tar.gz", ".tgz")):
            _write_archive(files, path, force)
        else:
            _write_directory(files, path, force)
    except FileWriteError as exc:
        raise SnapshotError(str(exc)) from None
    return path


def _write_archive(files: dict[str, str], path: str, force: bool) -> None:
    top = os.path.basename(path).removesuffix(".tar.gz").removesuffix(".tgz") or "snapshot"

    def fill(handle: BinaryIO) -> None:
        with tarfile.open(fileobj=handle, mode="w:gz") as archive:
            for name, text in files.items():
                data = text.encode("utf-8")
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size = len(data)
                info.mtime = int(time.time())
                info.mode = 0o644
                archive.addfile(info, io.BytesIO(data))

    write_file_with(path, fill, force=force)


def _write_directory(files: dict[str, str], path: str, force: bool) -> None:
    write_directory(path, dict(files), force=force)


STDIN = "-"


def read_snapshot(path: str) -> Evidence:
    """Evidence from a snapshot directory, a ``.tar.gz``, a single evidence file, a pipe, or ``-`` (stdin).

    Everything is read with a size limit, a pipe only while its writer writes; a device, a socket or an empty
    path is refused at once (a :class:`SnapshotError`, one line, exit 2).
    """
    if path == STDIN:
        evidence = _evidence_from_bytes(_read_stdin(), "standard input", name=None)
        evidence.origin = {"kind": "snapshot", "path": "<stdin>"}
        return _bounded(evidence)
    if not path.strip():
        raise SnapshotError("--from needs a path (a snapshot directory, a .tar.gz, an evidence file, or '-')")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise SnapshotError(f"{path} does not exist") from None
    except OSError as exc:
        raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from None
    kind = describe_kind(mode)
    if kind is not None:
        raise SnapshotError(f"{path} is {kind}, not a snapshot: pass a directory, a .tar.gz, a file or a pipe")
    if stat.S_ISDIR(mode):
        evidence = _evidence_from_files(_read_directory(path))
    elif stat.S_ISFIFO(mode):
        evidence = _evidence_from_bytes(read_fifo(path), path, name=None)
    else:
        evidence = _evidence_from_bytes(read_regular_file(path), path, name=os.path.basename(path))
    evidence.origin = {"kind": "snapshot", "path": os.path.abspath(path)}
    return _bounded(evidence)


def _read_stdin() -> bytes:
    import sys

    descriptor = sys.stdin.fileno() if sys.stdin is not None else -1
    if descriptor < 0:
        raise SnapshotError("standard input is closed: nothing to read with --from -")
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return read_pipe_descriptor(descriptor, "standard input")
    if not stat.S_ISREG(mode) and not os.isatty(descriptor):
        raise SnapshotError(f"standard input is {describe_kind(mode) or 'not a file'}, not a snapshot or a paste")
    # A file, or a terminal: a person pasting takes as long as it takes; either is still bounded in size.
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(descriptor, 1024 * 1024):
        size += len(chunk)
        if size > MAX_INPUT_BYTES:
            raise SnapshotError("standard input is larger than 64 MiB: not gpudoctor evidence")
        chunks.append(chunk)
    return b"".join(chunks)


def _bounded(evidence: Evidence) -> Evidence:
    """JSON nested past any real evidence is dropped here, before a recursive parser or walker meets it."""
    for item in evidence.items.values():
        if item.text and item.name.endswith(".json") and json_too_deep(item.text):
            item.text = None
            item.error = f"not read: nested deeper than {MAX_JSON_DEPTH} levels, which no gpudoctor evidence is"
    return evidence


def _looks_like_archive(data: bytes, name: str | None) -> bool:
    if name is not None and name.endswith((".tar.gz", ".tgz", ".tar")):
        return True
    if data.startswith(b"\x1f\x8b"):  # gzip magic: a (possibly damaged) compressed archive
        return True
    # A plain tar: "ustar" at offset 257 of the first header.
    return len(data) >= 512 and data[257:262] == b"ustar"


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _read_directory(path: str) -> dict[str, str]:
    files: dict[str, str] = {}
    try:
        names = os.listdir(path)
    except OSError as exc:
        raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from None
    for name in names:
        if name not in SOURCE_NAMES and name != MANIFEST_NAME:
            continue
        files[name] = _decode(read_regular_file(os.path.join(path, name)))
    if not files:
        raise SnapshotError(f"{path} holds no gpudoctor evidence files (see 'Snapshot files' in the README)")
    return files


def _read_archive(data: bytes, where: str) -> dict[str, str]:
    files: dict[str, str] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            for member in archive:
                name = os.path.basename(member.name)
                if not member.isfile() or (name not in SOURCE_NAMES and name != MANIFEST_NAME):
                    continue
                if member.size > MAX_INPUT_BYTES:
                    raise SnapshotError(f"{where}: member {member.name} is too large to be gpudoctor evidence")
                extracted = archive.extractfile(member)
                if extracted is not None:
                    files[name] = _decode(extracted.read(MAX_INPUT_BYTES))
    except (tarfile.TarError, OSError, EOFError, ValueError, zlib.error) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SnapshotError(f"{where} is not a readable snapshot archive ({reason})") from None
    if not files:
        raise SnapshotError(f"{where} holds no gpudoctor evidence files (see 'Snapshot files' in the README)")
    return files


def _evidence_from_bytes(data: bytes, where: str, name: str | None) -> Evidence:
    """One input's bytes: an archive, one evidence file under its own name, or else a paste."""
    if _looks_like_archive(data, name):
        return _evidence_from_files(_read_archive(data, where))
    if name == MANIFEST_NAME:
        raise SnapshotError(f"{where} is a manifest alone; pass the snapshot directory that holds it")
    if name in SOURCE_NAMES and name != EvidenceKey.PASTE:
        return _evidence_from_files({name: _decode(data)})
    return paste_evidence(data, where)


def paste_evidence(data: bytes, where: str) -> Evidence:
    """Evidence from whatever a person pasted: each tool's output found in it under its own name, and the
    whole text (scanned for known errors).  Only empty or binary input is refused."""
    from gpudoctor.evidence.paste_sections import PASTE_SECTION_KIND, split_paste
    from gpudoctor.evidence.paste_text import decode_paste, normalise_paste

    text = normalise_paste(decode_paste(data, where))
    evidence = Evidence()
    evidence.add(EvidenceItem(name=EvidenceKey.PASTE, kind="file", text=text))
    sections = split_paste(text)
    guessed = guess_source_name(text)
    if guessed is not None and guessed not in sections:
        sections[guessed] = text  # a lone output of a shape the splitter does not cut (XML, nvlink -s, ...)
    for name, section in sections.items():
        evidence.add(EvidenceItem(name=str(name), kind=PASTE_SECTION_KIND, text=section))
    return evidence


def _manifest_entries(files: dict[str, str]) -> dict[str, object]:
    """The manifest's ``sources`` (each entry still to be checked), empty without a manifest."""
    if MANIFEST_NAME not in files:
        return {}
    if json_too_deep(files[MANIFEST_NAME]):
        raise SnapshotError(f"manifest.json in the snapshot nests deeper than {MAX_JSON_DEPTH} levels: not ours")
    try:
        manifest: object = json.loads(files[MANIFEST_NAME])
    except (ValueError, RecursionError):
        raise SnapshotError("manifest.json in the snapshot is not valid JSON") from None
    entries = manifest.get("sources", {}) if isinstance(manifest, dict) else None
    if not isinstance(entries, dict):
        raise SnapshotError("manifest.json in the snapshot does not have the expected shape")
    return entries


def _evidence_from_files(files: dict[str, str]) -> Evidence:
    entries = _manifest_entries(files)
    evidence = Evidence()
    for name in SOURCE_NAMES:
        entry = entries.get(name)
        if name not in files and not isinstance(entry, dict):
            continue
        source = source_by_name(name)
        item = EvidenceItem(name=name, kind=source.kind if source else "file", text=files.get(name))
        if isinstance(entry, dict) and entry:
            argv, exit_code, stderr = entry.get("argv"), entry.get("exit_code"), entry.get("stderr")
            duration, error = entry.get("duration_s"), entry.get("error")
            # A hand-edited manifest may hold anything: only values of the right type are taken.
            strings = isinstance(argv, list) and all(isinstance(word, str) for word in argv)
            item.argv = list(argv) if strings and isinstance(argv, list) else None
            valid_code = isinstance(exit_code, int) and not isinstance(exit_code, bool) and -256 < exit_code < 256
            item.exit_code = exit_code if valid_code and isinstance(exit_code, int) else None
            item.stderr = stderr if isinstance(stderr, str) else ""
            finite = isinstance(duration, (int, float)) and not isinstance(duration, bool) and math.isfinite(duration)
            item.duration_s = float(duration) if finite and isinstance(duration, (int, float)) else None
            item.timed_out = entry.get("timed_out") is True
            item.error = error if isinstance(error, str) else None
            # The file holds stderr when stdout was empty; don't count the same text twice.
            if item.text is not None and item.text == item.stderr:
                item.stderr = ""
        evidence.add(item)
    return evidence
