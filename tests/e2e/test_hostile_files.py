"""Hostile paths for every file gpudoctor writes (issue 16, "Files"), run as a user runs it.

Each writer (``check --junit-xml``, ``dockerfile -o``, ``install-script -o``, ``collect -o`` as an
archive and as a folder) is pointed at a symbolic link to a victim file, a dangling link, a file that
merely contains our JUnit marker, a path under a file, a folder in the way, and a disk that fills up
mid-write.  The victim and the inputs are synthetic files made here; the faults are real ones
(symlinks, ENOTDIR, RLIMIT_FSIZE), not mocks.
"""

from __future__ import annotations

import os
import pathlib
import resource
import stat
import subprocess
import sys
from collections.abc import Callable

import pytest

from gpudoctor.evidence.safe_write import FileWriteError, write_file, write_file_with

SYNTHETIC_OS_RELEASE = 'NAME="Synthetic Linux"\nID=ubuntu\nVERSION_ID="22.04"\n'
SYNTHETIC_VICTIM = "synthetic victim: a user's own file that must survive\n"
VICTIM_MODE = 0o600


def gpudoctor(*args: str, limit_file_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")

    def limit() -> None:  # a real "disk full" for this process only: writes past the limit fail with EFBIG
        if limit_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))

    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit if limit_file_bytes is not None else None,
    )


@pytest.fixture
def synthetic_snapshot(tmp_path: pathlib.Path) -> str:
    path = tmp_path / "input" / "os-release"
    path.parent.mkdir()
    path.write_text(SYNTHETIC_OS_RELEASE)
    return str(path)


# Each writer as (name, argv builder given the input snapshot and the output path).
Writer = Callable[[str, str], list[str]]
WRITERS: dict[str, Writer] = {
    "junit": lambda source, out: ["check", "--from", source, "--junit-xml", out],
    "dockerfile": lambda source, out: ["dockerfile", "--from", source, "--for-driver", "550.54.15", "-o", out],
    "install-script": lambda source, out: ["install-script", "--from", source, "--for-driver", "550.54.15", "-o", out],
    "collect-archive": lambda source, out: ["collect", "--frameworks", "none", "--timeout", "5", "-o", out + ".tar.gz"],
}
FILE_WRITERS = sorted(WRITERS)


def _output(tmp_path: pathlib.Path, writer: str) -> pathlib.Path:
    """The path a writer really writes (collect's archive gets its suffix)."""
    return tmp_path / ("out.tar.gz" if writer == "collect-archive" else "out")


def _run(writer: str, source: str, tmp_path: pathlib.Path, *extra: str, limit: int | None = None):
    return gpudoctor(*WRITERS[writer](source, str(tmp_path / "out")), *extra, limit_file_bytes=limit)


def _make_victim(tmp_path: pathlib.Path) -> pathlib.Path:
    victim = tmp_path / "victim.txt"
    victim.write_text(SYNTHETIC_VICTIM)
    victim.chmod(VICTIM_MODE)
    return victim


def _assert_victim_intact(victim: pathlib.Path) -> None:
    assert victim.read_text() == SYNTHETIC_VICTIM
    assert stat.S_IMODE(victim.stat().st_mode) == VICTIM_MODE


def _assert_one_clear_line(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpudoctor: error: "), result.stderr


def _no_leftovers(folder: pathlib.Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith(".gpudoctor-"))


# --- symbolic links ------------------------------------------------------------------------------------


@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_link_to_a_victim_is_refused_without_force(writer, tmp_path, synthetic_snapshot):
    victim = _make_victim(tmp_path)
    _output(tmp_path, writer).symlink_to(victim)
    result = _run(writer, synthetic_snapshot, tmp_path)
    _assert_one_clear_line(result)
    assert "symbolic link" in result.stderr
    _assert_victim_intact(victim)
    assert _output(tmp_path, writer).is_symlink()


@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_force_replaces_the_link_itself_never_its_target(writer, tmp_path, synthetic_snapshot):
    victim = _make_victim(tmp_path)
    out = _output(tmp_path, writer)
    out.symlink_to(victim)
    result = _run(writer, synthetic_snapshot, tmp_path, "--force")
    assert result.returncode in (0, 1), result.stderr  # check's exit code is the report's
    _assert_victim_intact(victim)
    assert not out.is_symlink() and out.is_file() and out.stat().st_size > 0
    assert _no_leftovers(tmp_path) == []


@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_dangling_link_is_never_written_through(writer, tmp_path, synthetic_snapshot):
    target = tmp_path / "not-yet-there.txt"
    out = _output(tmp_path, writer)
    out.symlink_to(target)
    refused = _run(writer, synthetic_snapshot, tmp_path)
    _assert_one_clear_line(refused)
    assert not target.exists() and out.is_symlink()
    forced = _run(writer, synthetic_snapshot, tmp_path, "--force")
    assert forced.returncode in (0, 1), forced.stderr
    assert not target.exists()
    assert not out.is_symlink() and out.is_file()


def test_collect_folder_through_a_link_replaces_the_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "snap"
    out.symlink_to(elsewhere)
    refused = gpudoctor("collect", "--frameworks", "none", "--timeout", "5", "-o", str(out))
    _assert_one_clear_line(refused)
    forced = gpudoctor("collect", "--frameworks", "none", "--timeout", "5", "-o", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    assert os.listdir(elsewhere) == []
    assert not out.is_symlink() and (out / "manifest.json").is_file()


# --- JUnit: content proves nothing -------------------------------------------------------------------


def test_junit_refuses_a_user_file_that_contains_the_marker(tmp_path, synthetic_snapshot):
    user_file = tmp_path / "notes.xml"
    text = '<!-- synthetic user notes --><testsuites name="gpudoctor"/><thesis>years of work</thesis>\n'
    user_file.write_text(text)
    result = gpudoctor("check", "--from", synthetic_snapshot, "--junit-xml", str(user_file))
    _assert_one_clear_line(result)
    assert "--force" in result.stderr
    assert user_file.read_text() == text


# --- write errors: one line, exit 2 ------------------------------------------------------------------


@pytest.mark.parametrize("writer", [*FILE_WRITERS, "collect-folder"])
def test_path_under_a_file_is_one_line_and_exit_2(writer, tmp_path, synthetic_snapshot):
    blocker = tmp_path / "a-file"
    blocker.write_text("synthetic: a file where a folder was expected\n")
    out = str(blocker / "out")
    argv = (
        ["collect", "--frameworks", "none", "--timeout", "5", "-o", out]
        if writer == "collect-folder"
        else WRITERS[writer](synthetic_snapshot, out)
    )
    _assert_one_clear_line(gpudoctor(*argv))


@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_a_folder_in_the_way_is_one_line_and_exit_2(writer, tmp_path, synthetic_snapshot):
    _output(tmp_path, writer).mkdir()
    _assert_one_clear_line(_run(writer, synthetic_snapshot, tmp_path, "--force"))
    assert os.listdir(_output(tmp_path, writer)) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_read_only_folder_is_one_line_and_exit_2(writer, tmp_path, synthetic_snapshot):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        _assert_one_clear_line(_run(writer, synthetic_snapshot, folder))
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("writer", FILE_WRITERS)
def test_disk_full_midway_keeps_the_old_file_and_no_partial_one(writer, tmp_path, synthetic_snapshot):
    out = _output(tmp_path, writer)
    out.write_text(SYNTHETIC_VICTIM)
    result = _run(writer, synthetic_snapshot, tmp_path, "--force", limit=200)
    _assert_one_clear_line(result)
    assert "too large" in result.stderr.lower()
    assert out.read_text() == SYNTHETIC_VICTIM
    assert _no_leftovers(tmp_path) == []


def test_collect_folder_disk_full_leaves_nothing_behind(tmp_path):
    out = tmp_path / "snap"
    result = gpudoctor("collect", "--frameworks", "none", "--timeout", "5", "-o", str(out), limit_file_bytes=200)
    _assert_one_clear_line(result)
    assert not out.exists()
    assert _no_leftovers(tmp_path) == []


# --- the one helper, in process ----------------------------------------------------------------------


def test_interrupted_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text(SYNTHETIC_VICTIM)

    def interrupted(handle) -> None:  # Ctrl-C arriving halfway through the content
        handle.write(b"half of the new con")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_file_with(str(target), interrupted, force=True)
    assert target.read_text() == SYNTHETIC_VICTIM
    assert _no_leftovers(tmp_path) == []


def test_new_files_get_the_usual_mode_and_scripts_are_executable(tmp_path):
    old = os.umask(0o022)
    try:
        write_file(str(tmp_path / "plain"), "synthetic\n", force=False)
        write_file(str(tmp_path / "script.sh"), "#!/bin/sh\n", force=False, executable=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "script.sh").stat().st_mode) == 0o755


def test_pipes_and_links_to_standard_output_are_never_replaced(tmp_path):
    # Built in tmp_path, never the real /dev: a regression here must not break the machine running the tests.
    fifo = tmp_path / "synthetic-fifo"
    os.mkfifo(fifo)
    stdout_link = tmp_path / "synthetic-stdout"
    stdout_link.symlink_to("/proc/self/fd/1")
    for special in (fifo, stdout_link):
        with pytest.raises(FileWriteError):
            write_file(str(special), "synthetic\n", force=True)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert os.readlink(stdout_link) == "/proc/self/fd/1"
