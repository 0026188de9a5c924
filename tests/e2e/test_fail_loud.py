"""gpudoctor's own failures are reported for what they are (exit 3), never as a clean "ok" run.

Real subprocesses: a copy of the source tree run without installing it (no entry points, no
``gpudoctor_checks`` package), a copy without its checks, and a plugin that fails to import.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def dependencies_only(tmp_path_factory) -> str:
    """A folder with gpudoctor's dependencies but not gpudoctor itself: links to every entry of
    site-packages except gpudoctor's own (its dist-info, its editable-install finder)."""
    folder = tmp_path_factory.mktemp("deps")
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.lower().startswith(("gpudoctor", "__editable__")) or entry.suffix == ".pth":
            continue
        (folder / entry.name).symlink_to(entry)
    return str(folder)


def _source_copy(tmp_path: pathlib.Path, with_checks: bool) -> pathlib.Path:
    root = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "gpudoctor", root / "gpudoctor", ignore=ignore)
    if with_checks:
        shutil.copytree(REPO / "checks", root / "checks", ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def _python(root: pathlib.Path, deps: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``PYTHONPATH=. python ...`` in the checkout; -S keeps site-packages (where gpudoctor is
    installed) off the path, the dependencies come through PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR")}
    env["PYTHONPATH"] = os.pathsep.join([str(root), deps])
    return subprocess.run(
        [sys.executable, "-S", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=180,
    )


def _uninstalled(root: pathlib.Path, deps: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _python(root, deps, "-m", "gpudoctor", *args)


def test_a_source_checkout_that_was_never_installed_runs_every_check(tmp_path, dependencies_only):
    root = _source_copy(tmp_path, with_checks=True)
    where = "import gpudoctor, importlib.util; print(gpudoctor.__file__, importlib.util.find_spec('gpudoctor_checks'))"
    probe = _python(root, dependencies_only, "-c", where)
    assert probe.stdout.split() == [str(root / "gpudoctor" / "__init__.py"), "None"], probe.stderr
    listed = _uninstalled(root, dependencies_only, "list-checks", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    codes = {row["code"] for row in json.loads(listed.stdout)}
    assert {"PCI001", "DRV001", "TOPO001", "GATE001", "COL001"} <= codes
    checked = _uninstalled(root, dependencies_only, "check", "--frameworks", "none", "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    report = json.loads(checked.stdout)
    assert report["internal_errors"] == []
    assert {r["code"] for r in report["results"]} == codes
    assert report["summary"]["counts"]["crashed"] == 0


def test_a_checkout_without_its_checks_fails_with_one_line_and_exit_3(tmp_path, dependencies_only):
    root = _source_copy(tmp_path, with_checks=False)
    for args in (("check", "--frameworks", "none"), ("list-checks",)):
        result = _uninstalled(root, dependencies_only, *args)
        assert result.returncode == 3, (args, result.stdout, result.stderr)
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("gpudoctor: internal error: no checks found"), lines
        assert "install gpudoctor" in lines[0]


@pytest.fixture
def broken_plugin(tmp_path) -> str:
    """A distribution whose registered check module raises on import, laid out as pip installs one."""
    site = tmp_path / "site"
    info = site / "gpudoctor_broken_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gpudoctor-broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[gpudoctor.checks]\nbroken = gpudoctor_broken_plugin\n")
    (site / "gpudoctor_broken_plugin.py").write_text('raise ImportError("this plugin is broken on purpose")\n')
    return str(site)


def _with_plugin(site: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")])))
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args], capture_output=True, text=True, env=env, timeout=180
    )


def test_a_plugin_that_fails_to_import_makes_the_run_exit_3_after_reporting(broken_plugin):
    result = _with_plugin(broken_plugin, "check", "--frameworks", "none", "--format", "json")
    report = json.loads(result.stdout)
    assert len(report["results"]) > 30, "the other checks still ran"
    assert len(report["internal_errors"]) == 1
    assert "gpudoctor_broken_plugin" in report["internal_errors"][0]
    assert "this plugin is broken on purpose" in report["internal_errors"][0]
    assert "gpudoctor_broken_plugin" in result.stderr and "failed to load" in result.stderr
    worse = report["summary"]["counts"]["problem"] > 0
    assert result.returncode == (1 if worse else 3)
    assert report["summary"]["exit_code"] == result.returncode


def test_a_plugin_that_fails_to_import_fails_list_checks_too(broken_plugin):
    result = _with_plugin(broken_plugin, "list-checks")
    assert result.returncode == 3
    assert "DRV001" in result.stdout, "the built-ins are still listed"
    assert "failed to load" in result.stderr
