"""Read a TPU VM's runtime state into a JSON-able record: the libtpu lock file and who holds it.

libtpu takes ``/tmp/libtpu_lockfile`` when a process opens the TPU; a second process is refused ("The TPU is
already in use by process with pid N"), and a process that crashed can leave the file behind, after which every
start is refused (https://github.com/jax-ml/jax/issues/10192). The TPU environment variables are in
``env.json`` already. Files only: nothing is run. The holder scan (which processes have the lock file or a
``/dev/accelN`` / ``/dev/vfio/N`` node open) runs only where there is a lock file or a TPU node, and sees
other users' processes only as root.
"""

from __future__ import annotations

import os
import re

LOCKFILE = "/tmp/libtpu_lockfile"
_TPU_NODE = re.compile(r"^/dev/(?:accel\d+|vfio/\d+)$")
_MAX_PROCESSES = 8192
_MAX_FDS = 4096
_MAX_HOLDERS = 32


def _under(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _lockfile(root: str) -> dict[str, object]:
    record: dict[str, object] = {"path": LOCKFILE, "exists": False}
    try:
        status = os.lstat(_under(root, LOCKFILE))
    except FileNotFoundError:
        return record
    except OSError as exc:
        record["error"] = f"{type(exc).__name__}: {exc.strerror or exc}"
        return record
    record.update(exists=True, mtime=status.st_mtime, uid=status.st_uid, size=status.st_size)
    return record


def _tpu_nodes(root: str) -> bool:
    try:
        names = os.listdir(_under(root, "/dev"))
    except OSError:
        return False
    return any(re.fullmatch(r"accel\d+", name) for name in names)


def _holders(root: str) -> list[dict[str, object]]:
    """Processes (readable to this user) with the lock file or a TPU node open."""
    proc = _under(root, "/proc")
    try:
        pids = [name for name in os.listdir(proc) if name.isdigit()][:_MAX_PROCESSES]
    except OSError:
        return []
    own = str(os.getpid())
    holders: list[dict[str, object]] = []
    for pid in pids:
        if pid == own:
            continue
        fd_dir = os.path.join(proc, pid, "fd")
        try:
            fds = os.listdir(fd_dir)[:_MAX_FDS]
        except OSError:
            continue  # another user's process (not root), or it ended
        paths = set()
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target == LOCKFILE or _TPU_NODE.match(target):
                paths.add(target)
        if paths:
            holders.append({"pid": int(pid), "paths": sorted(paths)})
            if len(holders) >= _MAX_HOLDERS:
                break
    return holders


def scan_tpu_runtime(root: str = "/") -> dict[str, object]:
    """/tmp/libtpu_lockfile (exists, owner, age) and the processes holding it or a TPU device node."""
    lockfile = _lockfile(root)
    record: dict[str, object] = {"lockfile": lockfile}
    if lockfile.get("exists") or _tpu_nodes(root):
        record["holders"] = _holders(root)
        record["holders_complete"] = hasattr(os, "geteuid") and os.geteuid() == 0
    return record
