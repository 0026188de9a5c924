"""Frames: a node's report as short tagged lines through a scheduler's output, and back."""

from __future__ import annotations

import json
import pathlib

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.fleet.frames import CHUNK_CHARS, TAG, decode, encode, report_text

RECORDED = pathlib.Path(__file__).resolve().parent.parent / "recorded" / "h100-80gb-hbm3-vm" / "nvml.json"


def _synthetic_report(size: int) -> dict[str, object]:
    """A synthetic report-shaped dict, padded with non-ASCII text (JSON escapes it) to about ``size``."""
    return {"schema_version": 1, "summary": {"exit_code": 1}, "pad": "é→" * (size // 2)}


def test_round_trip_through_labelled_interleaved_output() -> None:
    a, b = _synthetic_report(5000), _synthetic_report(3000)
    lines_a = [f"0: {line}" for line in encode("node1", 0, a)]
    lines_b = [f"1: {line}" for line in encode("node2", 1, b)]
    mixed = [x for pair in zip(lines_a, lines_b) for x in pair] + lines_a[len(lines_b) :]
    mixed.insert(3, "srun: error: something else entirely")
    got = decode(reversed(mixed))
    assert got["node1"].report_text == report_text(a) and got["node1"].exit_code == 0
    assert got["node2"].report_text == report_text(b) and got["node2"].exit_code == 1
    assert all(len(line) <= CHUNK_CHARS + 40 for line in encode("node1", 0, a))
    assert all(line.isascii() for line in encode("node1", 0, a))


def test_a_lost_part_a_damaged_part_and_a_missing_header_are_each_reported() -> None:
    lines = list(encode("node1", 0, _synthetic_report(3000)))
    assert "did not arrive" in (decode(lines[:2] + lines[3:])["node1"].error or "")
    damaged = lines[:2] + [lines[2][:-1] + ("x" if lines[2][-1] != "x" else "y")] + lines[3:]
    assert "checksum" in (decode(damaged)["node1"].error or "")
    assert "no report header" in (decode(lines[1:])["node1"].error or "")


def test_a_real_recorded_file_round_trips() -> None:
    report = {"nvml": json.loads(RECORDED.read_text())} if RECORDED.is_file() else _synthetic_report(1000)
    assert decode(encode("gpu-7", 3, report))["gpu-7"].report_text == report_text(report)


@given(st.lists(st.text(max_size=300), max_size=40))
def test_decode_takes_garbage(lines: list[str]) -> None:
    decode(lines)


@given(
    st.lists(
        st.sampled_from(["", "0", "1/2", "header", "exit=1", "chunks=2", "sha256=" + "a" * 64, "{", "x"]), max_size=8
    )
)
def test_decode_takes_near_frames(words: list[str]) -> None:
    line = " ".join([TAG, "node1", *words])
    for got in decode([line, line + " 0/1 {}", f"{TAG} node1 header exit=0 chunks=1 sha256={'0' * 64}"]).values():
        assert got.report_text is None or got.error is None


def test_a_node_without_a_report_says_why_through_the_same_stream(tmp_path: pathlib.Path) -> None:
    """The real node-side command with a per-node snapshot that is missing on that node: one tagged line."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "gpudoctor", "fleet", "node-check", "--from", str(tmp_path / "{node}")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "SLURMD_NODENAME": "gpu7"},
        check=False,
    )
    assert done.returncode == 2 and "does not exist" in done.stderr
    got = decode(f"3: {line}" for line in done.stdout.splitlines())
    assert got["gpu7"].report_text is None and got["gpu7"].exit_code == 2
    assert (
        got["gpu7"].error is not None and "failed" in got["gpu7"].error and "gpu7 does not exist" in got["gpu7"].error
    )
