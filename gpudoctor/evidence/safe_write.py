"""Writing a path a person named: atomically, never through a symbolic link, never over what they have.

Every file gpudoctor writes where a user told it to (a snapshot, a JUnit report, a Dockerfile, an
install script, an SVG) goes through this module, so the rules live in one place:

- Nothing that exists is replaced without ``force``; a symbolic link counts as existing even when it
  dangles, and gpudoctor never writes through one.
- With ``force`` a link the user named is itself replaced by the new file: its target is never opened,
  truncated or chmod-ed.  Devices, pipes and sockets are never replaced, ``force`` or not.
- The content goes to a temporary file in the same folder that is renamed over the path only once it
  is complete, so a failed or interrupted write leaves the old file (or nothing) and no partial file.
- The only mode set is the new file's own: the usual 0666 (0777 for a script) less the umask.
- A failure (disk full, read-only folder, permission denied, a directory in the way) is a
  :class:`FileWriteError`: one line for a person, exit code 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from typing import BinaryIO

from gpudoctor.errors import UsageError

_TEMPORARY_PREFIX = ".gpudoctor-"
_TEMPORARY_SUFFIX = ".partial"
# Filesystems without hard links answer link(2) with one of these; there the no-clobber rename
# falls back to a plain rename right after the existence check.
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK, errno.EXDEV}

# Links in or into these are the system's plumbing (/dev/stdout -> /proc/self/fd/1), never a user's file.
_SYSTEM_FOLDERS = ("/dev/", "/proc/", "/sys/")

Fill = Callable[[BinaryIO], object]


class FileWriteError(UsageError):
    """A path cannot be written, or must not be; the message is one line for a person."""


def _cannot_write(path: str, exc: OSError) -> FileWriteError:
    return FileWriteError(f"cannot write {path}: {exc.strerror or exc}")


def refuse_to_replace(path: str, force: bool, *, directory: bool = False) -> None:
    """Raise unless ``path`` may be written: absent, or (with ``force``) a file, a link, or a folder when ``directory``.

    Commands call this before slow work too, so a refusal comes before minutes of collecting.
    """
    if not path:
        raise FileWriteError("an empty path cannot be written")
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:  # e.g. a file where a folder of the path should be (ENOTDIR)
        raise _cannot_write(path, exc) from None
    mode = found.st_mode
    if stat.S_ISDIR(mode) and not directory:
        raise FileWriteError(f"{path} is a directory; name a file to write")
    if stat.S_ISLNK(mode):
        _refuse_link(path, force, directory)
    elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise FileWriteError(f"{path} is not a regular file; refusing to replace it (use - for standard output)")
    elif not force:
        raise FileWriteError(f"{path} already exists; choose another path or pass --force to replace it")
    elif directory and not stat.S_ISDIR(mode):
        raise FileWriteError(f"{path} exists and is not a directory; refusing to replace it")


def _refuse_link(path: str, force: bool, directory: bool) -> None:
    if not force:
        raise FileWriteError(
            f"{path} is a symbolic link; gpudoctor never writes through one: choose another path"
            " or pass --force to replace the link itself"
        )
    # /dev/stdout and friends are links too, to /proc/self/fd/N, which may well be a regular file;
    # replacing one of those is never what was meant.
    with contextlib.suppress(OSError):
        pointed = os.readlink(path)
        home = os.path.realpath(_folder_of(path))
        if pointed.startswith(_SYSTEM_FOLDERS) or (home + "/").startswith(_SYSTEM_FOLDERS):
            raise FileWriteError(f"{path} is a system link; refusing to replace it (use - for standard output)")
    try:
        target = os.stat(path)
    except OSError:
        return  # dangling: replacing the link touches nothing else
    if not (stat.S_ISREG(target.st_mode) or (directory and stat.S_ISDIR(target.st_mode))):
        raise FileWriteError(f"{path} is a link to something other than a file; refusing to replace it")


def write_file(path: str, content: str | bytes, *, force: bool, executable: bool = False) -> None:
    """Write ``content`` (text as UTF-8) to ``path`` by the rules above."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    write_file_with(path, lambda handle: handle.write(data), force=force, executable=executable)


def write_file_with(path: str, fill: Fill, *, force: bool, executable: bool = False) -> None:
    """Write whatever ``fill`` puts into the binary handle it is given (an archive, say) to ``path``."""
    refuse_to_replace(path, force)
    try:
        _write_atomically(path, fill, _new_file_mode(executable), replace=force)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def write_directory(path: str, files: Mapping[str, str | bytes], *, force: bool) -> None:
    """A folder holding ``files`` (name to content) at ``path``.

    A new folder is built beside ``path`` and renamed into place when complete.  An existing folder
    (only with ``force``) gets each file replaced in turn, each atomically; other files in it stay.
    """
    refuse_to_replace(path, force, directory=True)
    contents = {name: text.encode("utf-8") if isinstance(text, str) else text for name, text in files.items()}
    if os.path.isdir(path) and not os.path.islink(path):
        for name, data in contents.items():
            write_file(os.path.join(path, name), data, force=True)
        return
    try:
        temporary = tempfile.mkdtemp(prefix=_TEMPORARY_PREFIX, suffix=_TEMPORARY_SUFFIX, dir=_folder_of(path))
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        os.chmod(temporary, 0o777 & ~_umask())  # mkdtemp's 0700 would hide a snapshot from its group
        for name, data in contents.items():
            _write_atomically(os.path.join(temporary, name), _writer(data), _new_file_mode(False), replace=False)
        if os.path.islink(path):
            os.unlink(path)  # the link itself (named with --force), never what it points to
        os.rename(temporary, path)
    except OSError as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        raise _cannot_write(path, exc) from None
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def _writer(data: bytes) -> Fill:
    return lambda handle: handle.write(data)


def _folder_of(path: str) -> str:
    return os.path.dirname(path) or "."


def _write_atomically(path: str, fill: Fill, mode: int, *, replace: bool) -> None:
    """The temporary file beside ``path``, filled, flushed, then renamed; removed on every failure."""
    handle_fd, temporary = tempfile.mkstemp(prefix=_TEMPORARY_PREFIX, suffix=_TEMPORARY_SUFFIX, dir=_folder_of(path))
    try:
        with os.fdopen(handle_fd, "wb") as handle:
            fill(handle)
            handle.flush()
            os.fchmod(handle.fileno(), mode)  # the new file's own mode: nothing else is touched
            os.fsync(handle.fileno())
        _put_in_place(temporary, path, replace)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _put_in_place(temporary: str, path: str, replace: bool) -> None:
    if replace:
        # rename(2) replaces the directory entry: a link named here is replaced, its target left alone.
        os.replace(temporary, path)
        return
    try:
        # link(2) never replaces anything, not even a dangling link created since the check.
        os.link(temporary, path, follow_symlinks=False)
    except FileExistsError:
        raise FileWriteError(f"{path} already exists; choose another path or pass --force to replace it") from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if os.path.lexists(path):
            raise FileWriteError(f"{path} already exists; choose another path or pass --force to replace it") from None
        os.replace(temporary, path)
        return
    os.unlink(temporary)


def _new_file_mode(executable: bool) -> int:
    return (0o777 if executable else 0o666) & ~_umask()


def _umask() -> int:
    # Reading it from /proc avoids os.umask's set-and-restore, which races with threads creating files.
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii", errors="replace") as status,
    ):
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    current = os.umask(0o022)
    os.umask(current)
    return current
