"""Third-party checks: a real plugin distribution, installed with pip, runs through the entry-point group."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

PLUGIN_SOURCE = pathlib.Path(__file__).resolve().parent.parent / "plugin_example"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> str:
    target = tmp_path_factory.mktemp("plugin-site")
    build = tmp_path_factory.mktemp("plugin-build")
    # Build from a copy so the source tree gets no build/ or egg-info droppings.
    shutil.copytree(PLUGIN_SOURCE, build, dirs_exist_ok=True)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(target),
            str(build),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        pytest.fail(f"could not install the example plugin: {result.stderr[-2000:]}")
    return str(target)


def run(plugin_path: str, *args: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [plugin_path, os.environ.get("PYTHONPATH")])))
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_plugin_check_is_listed_and_explained(plugin_path):
    listed = run(plugin_path, "list-checks")
    assert "XMPL001" in listed.stdout and "XMPL002" in listed.stdout
    assert "DRV001" in listed.stdout, "built-ins still load beside plugins"
    assert "Why it matters:" in run(plugin_path, "explain", "XMPL001").stdout


def test_plugin_runs_and_a_crash_is_contained(plugin_path):
    result = run(plugin_path, "check", "--format", "json", "--select", "XMPL,DRV004")
    report = json.loads(result.stdout)
    by_code = {r["code"]: r for r in report["results"]}
    assert by_code["XMPL001"]["status"] == "ok"
    assert by_code["XMPL001"]["area"] == "example"
    assert by_code["XMPL002"]["status"] == "crashed"
    assert "deliberate failure" in by_code["XMPL002"]["traceback"]
    assert by_code["DRV004"]["status"] != "crashed"
    assert result.returncode == 3, "a crashed check with nothing worse found is exit 3"


def test_crash_traceback_only_with_verbose(plugin_path):
    quiet = run(plugin_path, "check", "--select", "XMPL002")
    assert "deliberate failure" in quiet.stdout  # the one-line summary names the error
    assert "Traceback" not in quiet.stdout
    verbose = run(plugin_path, "check", "-v", "--select", "XMPL002")
    assert "Traceback (most recent call last)" in verbose.stdout
