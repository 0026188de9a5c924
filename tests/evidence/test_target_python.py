"""resolve_target_python over real temp venvs (``python -m venv --without-pip`` is cheap)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from gpudoctor.errors import UsageError
from gpudoctor.evidence.target_python import (
    HOW_CONDA,
    HOW_OPTION,
    HOW_OWN,
    HOW_VIRTUAL_ENV,
    TargetPython,
    interpreter_in_prefix,
    resolve_target_python,
)

OWN = "/opt/gpudoctor/bin/python"  # stands for gpudoctor's interpreter; never run


def _make_venv(path: pathlib.Path) -> pathlib.Path:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, capture_output=True, timeout=120
    )
    return path


@pytest.fixture(scope="module")
def venvs(tmp_path_factory) -> tuple[pathlib.Path, pathlib.Path]:
    base = tmp_path_factory.mktemp("envs")
    return _make_venv(base / "work-venv"), _make_venv(base / "conda-like-env")


def test_a_requested_interpreter_path_is_kept_unresolved(venvs):
    venv, _ = venvs
    python = venv / "bin" / "python"
    assert python.is_symlink()  # a venv's python links to the base one; resolving it would lose the venv
    target = resolve_target_python(str(python), {}, current=OWN)
    assert target == TargetPython(str(python), HOW_OPTION)


def test_a_requested_environment_directory_gives_its_interpreter(venvs):
    venv, _ = venvs
    target = resolve_target_python(str(venv), {}, current=OWN)
    assert target.executable == str(venv / "bin" / "python3") and target.how == HOW_OPTION


def test_a_relative_request_becomes_absolute(venvs, monkeypatch):
    venv, _ = venvs
    monkeypatch.chdir(venv.parent)
    target = resolve_target_python(os.path.join(venv.name, "bin", "python"), {}, current=OWN)
    assert target.executable == str(venv / "bin" / "python")


def test_synthetic_windows_layout_prefix(tmp_path):
    # synthetic: a conda-on-Windows prefix keeps python.exe at its root; an executable file stands in for it.
    exe = tmp_path / "python.exe"
    exe.write_text("synthetic")
    exe.chmod(0o755)
    assert interpreter_in_prefix(str(tmp_path)) == str(exe)


def test_a_directory_without_interpreter_is_one_clear_line(tmp_path):
    with pytest.raises(UsageError) as caught:
        resolve_target_python(str(tmp_path), {}, current=OWN)
    message = str(caught.value)
    assert message == (
        f"--python {tmp_path}: no Python interpreter there "
        "(looked for bin/python3, bin/python, python.exe, Scripts/python.exe)"
    )
    assert "\n" not in message


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"^--python .*/nope/python: no such file or directory$"):
        resolve_target_python(str(tmp_path / "nope" / "python"), {}, current=OWN)


def test_a_file_that_is_not_executable_is_refused(tmp_path):
    path = tmp_path / "python"
    path.write_text("not a program")
    with pytest.raises(UsageError, match="not an executable file"):
        resolve_target_python(str(path), {}, current=OWN)


def test_a_bare_name_is_looked_up_on_the_given_path(venvs):
    venv, _ = venvs
    target = resolve_target_python("python3", {"PATH": str(venv / "bin")}, current=OWN)
    assert target.executable == str(venv / "bin" / "python3") and target.how == HOW_OPTION


def test_a_bare_name_not_on_path_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"^--python python3\.99: no such interpreter on PATH"):
        resolve_target_python("python3.99", {"PATH": str(tmp_path)}, current=OWN)


def test_the_activated_venv_is_the_default(venvs):
    venv, _ = venvs
    target = resolve_target_python(None, {"VIRTUAL_ENV": str(venv)}, current=OWN)
    assert target == TargetPython(str(venv / "bin" / "python3"), HOW_VIRTUAL_ENV)


def test_a_venv_activated_inside_a_conda_env_wins(venvs):
    venv, conda = venvs
    environ = {"VIRTUAL_ENV": str(venv), "CONDA_PREFIX": str(conda), "CONDA_DEFAULT_ENV": "base"}
    assert resolve_target_python(None, environ, current=OWN).how == HOW_VIRTUAL_ENV


def test_the_activated_conda_env_even_base_comes_next(venvs):
    _, conda = venvs
    target = resolve_target_python(None, {"CONDA_PREFIX": str(conda), "CONDA_DEFAULT_ENV": "base"}, current=OWN)
    assert target == TargetPython(str(conda / "bin" / "python3"), HOW_CONDA)


def test_a_stale_virtual_env_is_passed_over_with_a_note(venvs, tmp_path):
    _, conda = venvs
    gone = tmp_path / "deleted-venv"
    target = resolve_target_python(None, {"VIRTUAL_ENV": str(gone), "CONDA_PREFIX": str(conda)}, current=OWN)
    assert target.how == HOW_CONDA
    assert target.note == f"VIRTUAL_ENV={gone} has no Python interpreter; passed over"


def test_nothing_activated_means_gpudoctors_own_interpreter():
    assert resolve_target_python(None, {"PATH": "/usr/bin"}, current=OWN) == TargetPython(OWN, HOW_OWN)
    assert resolve_target_python("", {"VIRTUAL_ENV": ""}, current=OWN).how == HOW_OWN


def test_the_default_current_is_this_interpreter():
    assert resolve_target_python(None, {}).executable == sys.executable
