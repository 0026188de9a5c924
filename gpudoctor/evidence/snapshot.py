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
import os
import tarfile
import tempfile
import time

from gpudoctor import __version__
from gpudoctor.errors import UsageError
from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.evidence.redact import redact
from gpudoctor.evidence.sniff import guess_source_name
from gpudoctor.evidence.sources import MANIFEST_NAME, SOURCE_NAMES, source_by_name

MANIFEST_SCHEMA = 1
# No single evidence file is anywhere near this; a bigger member is not ours.
_MAX_MEMBER_BYTES = 64 * 1024 * 1024


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
        files[name] = redact(text) if redacted else text
    files[MANIFEST_NAME] = json.dumps(_manifest(evidence, redacted), indent=1, sort_keys=True)
    return files


def write_snapshot(evidence: Evidence, path: str, redacted: bool = True, force: bool = False) -> str:
    """Write a directory, or a ``.tar.gz`` when ``path`` ends so.  Refuses to overwrite unless ``force``."""
    if os.path.lexists(path) and not force:
        raise SnapshotError(f"{path} already exists; choose another path or pass --force to replace it")
    files = _members(evidence, redacted)
    if path.endswith((".tar.gz", ".tgz")):
        _write_archive(files, path)
    else:
        _write_directory(files, path, force)
    return path


def _write_archive(files: dict[str, str], path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    top = os.path.basename(path).removesuffix(".tar.gz").removesuffix(".tgz") or "snapshot"
    # Written beside the target and renamed, so an interrupted write never leaves half an archive.
    handle, temporary = tempfile.mkstemp(prefix=".gpudoctor-", suffix=".tar.gz", dir=directory)
    os.close(handle)
    try:
        with tarfile.open(temporary, "w:gz") as archive:
            for name, text in files.items():
                data = text.encode("utf-8")
                info = tarfile.TarInfo(f"{top}/{name}")
                info.size = len(data)
                info.mtime = int(time.time())
                info.mode = 0o644
                archive.addfile(info, io.BytesIO(data))
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _write_directory(files: dict[str, str], path: str, force: bool) -> None:
    if os.path.exists(path) and not os.path.isdir(path):
        raise SnapshotError(f"{path} exists and is not a directory; refusing to replace it")
    os.makedirs(path, exist_ok=force)
    for name, text in files.items():
        with open(os.path.join(path, name), "w", encoding="utf-8") as handle:
            handle.write(text)


STDIN = "-"


def read_snapshot(path: str) -> Evidence:
    """Evidence from a snapshot directory, a ``.tar.gz``, a single evidence file, or a paste (``-``: stdin)."""
    if path == STDIN:
        import sys

        evidence = paste_evidence(sys.stdin.buffer.read(_MAX_MEMBER_BYTES), "standard input")
        evidence.origin = {"kind": "snapshot", "path": "<stdin>"}
        return evidence
    if not os.path.exists(path):
        raise SnapshotError(f"{path} does not exist")
    if os.path.isdir(path):
        files = _read_directory(path)
    elif _looks_like_archive(path):
        files = _read_archive(path)
    else:
        files = {}
    evidence = _evidence_from_files(files) if files else _read_single_file(path)
    evidence.origin = {"kind": "snapshot", "path": os.path.abspath(path)}
    return evidence


def _looks_like_archive(path: str) -> bool:
    if path.endswith((".tar.gz", ".tgz", ".tar")):
        return True
    try:
        with open(path, "rb") as handle:
            if handle.read(2) == b"\x1f\x8b":  # gzip magic: a (possibly damaged) compressed archive
                return True
        return tarfile.is_tarfile(path)
    except (OSError, EOFError, tarfile.TarError):
        return False


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
        try:
            with open(os.path.join(path, name), "rb") as handle:
                files[name] = _decode(handle.read(_MAX_MEMBER_BYTES))
        except OSError as exc:
            raise SnapshotError(f"cannot read {os.path.join(path, name)}: {exc.strerror or exc}") from None
    if not files:
        raise SnapshotError(f"{path} holds no gpudoctor evidence files (see 'Snapshot files' in the README)")
    return files


def _read_archive(path: str) -> dict[str, str]:
    files: dict[str, str] = {}
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                name = os.path.basename(member.name)
                if not member.isfile() or (name not in SOURCE_NAMES and name != MANIFEST_NAME):
                    continue
                if member.size > _MAX_MEMBER_BYTES:
                    raise SnapshotError(f"{path}: member {member.name} is too large to be gpudoctor evidence")
                extracted = archive.extractfile(member)
                if extracted is not None:
                    files[name] = _decode(extracted.read())
    except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SnapshotError(f"{path} is not a readable snapshot archive ({reason})") from None
    if not files:
        raise SnapshotError(f"{path} holds no gpudoctor evidence files (see 'Snapshot files' in the README)")
    return files


def _read_single_file(path: str) -> Evidence:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_MEMBER_BYTES)
    except OSError as exc:
        raise SnapshotError(f"cannot read {path}: {exc.strerror or exc}") from None
    name = os.path.basename(path)
    if name == MANIFEST_NAME:
        raise SnapshotError(f"{path} is a manifest alone; pass the snapshot directory that holds it")
    if name in SOURCE_NAMES and name != EvidenceKey.PASTE:
        return _evidence_from_files({name: _decode(data)})
    return paste_evidence(data, path)


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
    try:
        manifest: object = json.loads(files[MANIFEST_NAME])
    except ValueError:
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
            item.argv = [str(word) for word in argv] if isinstance(argv, list) else None
            item.exit_code = exit_code if isinstance(exit_code, int) else None
            item.stderr = stderr if isinstance(stderr, str) else ""
            item.duration_s = duration if isinstance(duration, (int, float)) else None
            item.timed_out = bool(entry.get("timed_out"))
            item.error = error if isinstance(error, str) else None
            # The file holds stderr when stdout was empty; don't count the same text twice.
            if item.text is not None and item.text == item.stderr:
                item.stderr = ""
        evidence.add(item)
    return evidence
