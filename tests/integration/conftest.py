"""Fixtures for the live framework-probe tests: the real framework venv, and throw-away venvs for synthetic packages.

The real one (torch CPU, tensorflow-cpu, jax) is made by ``scripts/setup-framework-venv.sh`` and found
through ``GPUDOCTOR_FRAMEWORK_PYTHON``; without it those tests skip, saying how to get it.  Synthetic
frameworks (a ``torch`` package whose import raises, crashes or hangs) live in a fresh
``python -m venv --without-pip`` made per test: a real interpreter and a real environment, only the
package is hand-written, and every such package says "synthetic" in its source.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import pytest


class SyntheticVenv:
    """A real, empty venv (no pip) whose site-packages takes hand-written synthetic packages."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120, capture_output=True
        )
        self.python = str(root / "bin" / "python")
        purelib = subprocess.run(
            [self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            timeout=60,
            capture_output=True,
            text=True,
        ).stdout.strip()
        self.site_packages = pathlib.Path(purelib)

    def add_package(self, name: str, init_source: str) -> pathlib.Path:
        package = self.site_packages / name
        package.mkdir(parents=True, exist_ok=True)
        source = textwrap.dedent(init_source)
        assert "synthetic" in source, "hand-written packages must say they are synthetic"
        (package / "__init__.py").write_text(source, encoding="utf-8")
        return package

    def add_dist_info(
        self, dist_dir_name: str, name: str, version: str, files: dict[str, str] | None = None
    ) -> pathlib.Path:
        """A metadata directory as pip writes it (METADATA, INSTALLER, ...), for a synthetic distribution."""
        directory = self.site_packages / dist_dir_name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: synthetic\n", encoding="utf-8"
        )
        for file_name, text in (files or {}).items():
            (directory / file_name).write_text(text, encoding="utf-8")
        return directory

    def add_conda_record(self, record: dict) -> None:
        meta = self.root / "conda-meta"
        meta.mkdir(exist_ok=True)
        file_name = f"{record['name']}-{record['version']}-{record['build']}.json"
        (meta / file_name).write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture
def synthetic_venv(tmp_path: pathlib.Path) -> SyntheticVenv:
    return SyntheticVenv(tmp_path / "venv")
