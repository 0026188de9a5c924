"""``--python`` must name a Python: a program that is not one is a usage error (one line, exit 2) before anything
runs it; a real Python without any framework installed stays a valid target."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from gpudoctor.errors import UsageError
from gpudoctor.evidence.target_python import HOW_OPTION, looks_like_python, resolve_target_python
from tests.e2e.test_cli import as_json, gpudoctor

NOT_A_PYTHON = shutil.which("true") or "/bin/true"


@pytest.mark.parametrize(
    "argv",
    [
        ("check", "--python", NOT_A_PYTHON),
        ("check", "--python", "true"),  # a name on PATH resolves to the same program
        ("smoke", "--python", NOT_A_PYTHON),
        ("collect", "-o", "{tmp}/snapshot", "--python", NOT_A_PYTHON),
    ],
)
def test_a_program_that_is_not_python_is_a_usage_error(argv, tmp_path):
    result = gpudoctor(*(part.replace("{tmp}", str(tmp_path)) for part in argv), timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a Python interpreter" in lines[0], result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "snapshot").exists()


def test_a_bare_python_without_frameworks_stays_valid(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    result = gpudoctor("check", "--python", str(venv), "--select", "FW001", "--format", "json", timeout=120)
    assert result.returncode in (0, 1), result.stderr
    report = as_json(result)
    assert report["machine"]["python"]["how"] == HOW_OPTION
    assert report["machine"]["python"]["executable"].startswith(str(venv))


def test_the_check_reads_the_program_without_running_it(tmp_path):
    # synthetic: a script is accepted (pyenv shims are scripts), an executable that is neither a script nor
    # a binary with a Python runtime in it is not.
    script = tmp_path / "python-wrapper"
    script.write_text('#!/bin/sh\nexec python3 "$@"\n')
    script.chmod(0o755)
    junk = tmp_path / "python"
    junk.write_bytes(b"\x7fELF synthetic binary with no runtime")
    junk.chmod(0o755)
    assert looks_like_python(str(script))
    assert looks_like_python(sys.executable)
    assert not looks_like_python(NOT_A_PYTHON)
    assert not looks_like_python(str(junk))
    with pytest.raises(UsageError, match="not a Python interpreter"):
        resolve_target_python(str(junk), {})
    prefix = tmp_path / "env"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3").write_bytes(junk.read_bytes())
    (prefix / "bin" / "python3").chmod(0o755)
    with pytest.raises(UsageError, match="not a Python interpreter"):
        resolve_target_python(str(prefix), {})  # an environment's directory whose interpreter is not one
