"""Hostile and odd inputs, run as a user would (real subprocesses): one clear line and exit 2, never a hang,
never a traceback (exit 3).

Every input here is synthetic, made by the test: a FIFO nobody writes to, ``/dev/zero``, a socket, an empty
path, JSON nested thousands deep, a manifest with the wrong types, out-of-range numbers, an ASCII-only stdout
and a missing temporary directory.
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

# Far above what any case needs: a case that reaches it is a hang, which is what these tests exist to catch.
HANG_S = 30
# A synthetic `nvidia-smi -L` line with a non-ASCII GPU name (U+2603), the smallest evidence a check reads.
SYNTHETIC_LIST = "GPU 0: NVIDIA Synthetic \u2603 GPU (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"


def gpudoctor(
    *args: str, env: dict[str, str] | None = None, stdin: int | None = subprocess.DEVNULL
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=environment,
        stdin=stdin,
        timeout=HANG_S,
    )


def assert_one_line_usage_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


@pytest.fixture
def synthetic_snapshot(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "synthetic-snapshot"
    folder.mkdir()
    (folder / "nvidia-smi-L.txt").write_text(SYNTHETIC_LIST, encoding="utf-8")
    return folder


# ---------------------------------------------------------------- --from: what the path is


@pytest.mark.parametrize("command", [["check"], ["topo"], ["dockerfile"], ["install-script", "--distro", "debian12"]])
def test_an_empty_from_path_is_refused_not_taken_for_this_machine(command: list[str]) -> None:
    result = gpudoctor(*command, "--from", "")
    assert_one_line_usage_error(result, "--from", "empty path")
    assert result.stdout == ""


def test_a_device_is_refused_at_once() -> None:
    result = gpudoctor("check", "--from", "/dev/zero")  # reading it would never end: the helper's timeout guards
    assert_one_line_usage_error(result, "/dev/zero", "device")


def test_a_socket_is_refused_at_once(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "synthetic.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        result = gpudoctor("check", "--from", path)
    assert_one_line_usage_error(result, "socket")


def test_a_fifo_nobody_writes_to_ends_with_a_clear_error(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "synthetic-fifo"
    os.mkfifo(fifo)
    result = gpudoctor("check", "--from", str(fifo))  # the message proves it gave up, not the clock
    assert_one_line_usage_error(result, "pipe", "sent nothing")


def test_a_fifo_planted_in_a_snapshot_directory_is_refused_not_waited_on(synthetic_snapshot: pathlib.Path) -> None:
    os.mkfifo(synthetic_snapshot / "nvml.json")
    result = gpudoctor("check", "--from", str(synthetic_snapshot))
    assert_one_line_usage_error(result, "nvml.json", "not an evidence file")


def test_standard_input_from_a_silent_writer_ends_with_a_clear_error() -> None:
    read_end, write_end = os.pipe()  # the write end stays open and silent: a writer that never writes
    try:
        result = gpudoctor("check", "--from", "-", stdin=read_end)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert_one_line_usage_error(result, "standard input", "sent nothing")


def test_process_substitution_is_read(tmp_path: pathlib.Path) -> None:
    evidence = tmp_path / "synthetic-list.txt"
    evidence.write_text(SYNTHETIC_LIST, encoding="utf-8")
    line = '"$0" -m gpudoctor check --from <(cat "$1") --format json'
    result = subprocess.run(
        ["bash", "-c", line, sys.executable, str(evidence)], capture_output=True, text=True, timeout=HANG_S
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "NVIDIA Synthetic" in result.stdout


def test_a_snapshot_archive_on_standard_input_is_read(tmp_path: pathlib.Path, synthetic_snapshot) -> None:
    import tarfile

    archive = tmp_path / "synthetic.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(synthetic_snapshot, arcname="synthetic")
    with open(archive, "rb") as handle:
        result = gpudoctor("check", "--from", "-", "--format", "json", stdin=handle.fileno())
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "NVIDIA Synthetic" in result.stdout


# ---------------------------------------------------------------- JSON nested deep, manifests of the wrong shape


def _deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("name", ["framework-torch.json", "smoke.json", "nvml.json", "env.json"])
@pytest.mark.parametrize("depth", [990, 100_000])
def test_json_nested_past_any_evidence_crashes_nothing(synthetic_snapshot: pathlib.Path, name: str, depth: int) -> None:
    (synthetic_snapshot / name).write_text(_deep_object(depth), encoding="utf-8")
    result = gpudoctor("check", "--from", str(synthetic_snapshot), "--format", "json")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["summary"]["counts"]["crashed"] == 0, [r["summary"] for r in report["results"]]


def test_a_manifest_nested_too_deep_is_one_line(synthetic_snapshot: pathlib.Path) -> None:
    (synthetic_snapshot / "manifest.json").write_text(
        '{"sources": {"nvidia-smi-L.txt": {"argv": ' + "[" * 5000 + "]" * 5000 + "}}}", encoding="utf-8"
    )
    result = gpudoctor("check", "--from", str(synthetic_snapshot))
    assert_one_line_usage_error(result, "manifest.json", "nests deeper")


def test_a_manifest_with_values_of_the_wrong_types_is_read(synthetic_snapshot: pathlib.Path) -> None:
    synthetic_manifest = {
        "schema": 1,
        "sources": {
            "nvidia-smi-L.txt": {
                "argv": [1, None, ["nvidia-smi"], {"a": 2}],
                "exit_code": True,
                "duration_s": "slow",
                "timed_out": "yes",
                "stderr": 5,
            },
            "nvidia-smi.txt": {"argv": "nvidia-smi", "exit_code": 10**30, "duration_s": 1e308},
        },
    }
    (synthetic_snapshot / "manifest.json").write_text(json.dumps(synthetic_manifest), encoding="utf-8")
    for output in ("text", "json", "markdown"):
        result = gpudoctor("check", "--from", str(synthetic_snapshot), "--format", output, "-v")
        assert result.returncode in (0, 1), result.stderr[-2000:]
        assert "CRSH" not in result.stdout and "Traceback" not in result.stderr


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("check", "--timeout", "1e8"),
        ("check", "--timeout", "inf"),
        ("check", "--timeout", "nan"),
        ("check", "--timeout", "-1"),
        ("check", "--timeout", "1e400"),
        ("check", "--probe-timeout", "inf"),
        ("check", "--smoke-budget", "inf"),
        ("check", "--min-gpu-memory", "inf"),
        ("check", "--min-gpu-memory", "1e300"),
        ("check", "--min-gpus", "10000000000"),
        ("topo", "--timeout", "inf"),
        ("collect", "--timeout", "1e8"),
        ("smoke", "--budget", "inf"),
        ("smoke", "--timeout", "nan"),
        ("dockerfile", "--timeout", "inf"),
    ],
)
def test_numbers_out_of_range_are_one_line(
    synthetic_snapshot: pathlib.Path, command: str, option: str, value: str
) -> None:
    from_snapshot = ["--from", str(synthetic_snapshot)] if command in ("check", "topo", "dockerfile") else []
    result = gpudoctor(command, *from_snapshot, f"{option}={value}")
    assert_one_line_usage_error(result, option)


# ---------------------------------------------------------------- the environment it runs in


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_a_stdout_that_cannot_take_utf8_gets_escapes(synthetic_snapshot: pathlib.Path, output: str) -> None:
    result = gpudoctor(
        "check", "--from", str(synthetic_snapshot), "--format", output, env={"PYTHONIOENCODING": "ascii"}
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "NVIDIA Synthetic \\u2603 GPU" in result.stdout
    if output == "json":
        assert isinstance(json.loads(result.stdout), dict)  # the escapes are JSON's own: still valid JSON


@pytest.mark.parametrize("where", ["missing", "read-only"])
def test_no_writable_temporary_directory_is_no_crash(
    tmp_path: pathlib.Path, synthetic_snapshot: pathlib.Path, where: str
) -> None:
    temporary = tmp_path / "synthetic-tmp"
    if where == "read-only":
        temporary.mkdir(mode=0o500)
    for args in (["check", "--from", str(synthetic_snapshot)], ["check", "--frameworks", "none", "--timeout", "5"]):
        result = gpudoctor(*args, env={"TMPDIR": str(temporary)})
        assert result.returncode in (0, 1, 2), result.stderr[-2000:]
        assert "Traceback" not in result.stderr
