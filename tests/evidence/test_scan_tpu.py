"""The TPU runtime scan over a SYNTHETIC file tree (a temporary root standing for /)."""

from __future__ import annotations

import os
import pathlib

from gpudoctor.evidence.scan_tpu import scan_tpu_runtime


def test_no_lock_file_and_no_tpu_node_is_one_small_record(tmp_path: pathlib.Path) -> None:
    record = scan_tpu_runtime(str(tmp_path))
    assert record == {"lockfile": {"path": "/tmp/libtpu_lockfile", "exists": False}}


def test_lock_file_with_owner_age_and_a_holder(tmp_path: pathlib.Path) -> None:
    (tmp_path / "tmp").mkdir()
    lock = tmp_path / "tmp" / "libtpu_lockfile"
    lock.write_text("")
    os.utime(lock, (1_700_000_000, 1_700_000_000))
    # A process whose fd points at the lock file, and one that holds nothing of the TPU.
    holder = tmp_path / "proc" / "4242" / "fd"
    holder.mkdir(parents=True)
    os.symlink("/tmp/libtpu_lockfile", holder / "3")
    other = tmp_path / "proc" / "99" / "fd"
    other.mkdir(parents=True)
    os.symlink("/dev/null", other / "0")
    record = scan_tpu_runtime(str(tmp_path))
    lockfile = record["lockfile"]
    assert isinstance(lockfile, dict)
    assert lockfile["exists"] is True and lockfile["mtime"] == 1_700_000_000
    assert lockfile["uid"] == os.getuid()
    assert record["holders"] == [{"pid": 4242, "paths": ["/tmp/libtpu_lockfile"]}]


def test_a_tpu_node_alone_starts_the_holder_scan(tmp_path: pathlib.Path) -> None:
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "accel0").write_text("")  # synthetic stand-in for the character device
    fd = tmp_path / "proc" / "7" / "fd"
    fd.mkdir(parents=True)
    os.symlink("/dev/accel0", fd / "5")
    record = scan_tpu_runtime(str(tmp_path))
    assert record["holders"] == [{"pid": 7, "paths": ["/dev/accel0"]}]


def test_an_unreadable_root_does_not_raise(tmp_path: pathlib.Path) -> None:
    assert scan_tpu_runtime(str(tmp_path / "missing"))["lockfile"] == {"path": "/tmp/libtpu_lockfile", "exists": False}
