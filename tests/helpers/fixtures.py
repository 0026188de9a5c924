"""Helpers the tests share: where the real captured fixtures are, and how to read them.

Real captured outputs live in ``../shared/fixtures`` beside the checkout (or wherever
``GPUDOCTOR_FIXTURES`` points).  They are read in place, never copied into the project; where
they are absent the tests that need them skip, saying why.
"""

from __future__ import annotations

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
SYNTHETIC = REPO / "tests" / "synthetic"


def real_fixtures_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("GPUDOCTOR_FIXTURES", REPO.parent / "shared" / "fixtures"))


def fixture_files(subdir: str, pattern: str = "*.txt") -> list[pathlib.Path]:
    """Fixture files for parametrising at collection time (empty when the corpus is absent)."""
    base = real_fixtures_dir() / subdir
    return sorted(base.glob(pattern)) if base.is_dir() else []


def read_fixture(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def fixture_text(relative: str) -> str:
    """One real fixture's text by its path under the corpus (``"B/nccl-1439-....txt"``); skips when absent."""
    full = real_fixtures_dir() / relative
    if not full.exists():
        pytest.skip(f"real fixture {relative} not available")
    return read_fixture(full)


KB_DATA = REPO / "gpudoctor" / "kb" / "data"


def load_script(name: str):
    """A module from ``scripts/`` (not a package), loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def validate_broken_copy(tmp_path: pathlib.Path, filename: str, change) -> list[str]:
    """kb_validate's errors for a copy of the shipped data in which ``change(data)`` altered one file."""
    import json
    import shutil

    target = tmp_path / "data"
    shutil.copytree(KB_DATA, target)
    path = target / filename
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_script("kb_validate").validate(target)


def xdist_worker() -> tuple[str, int]:
    """This test process's pytest-xdist worker name and number ("gw0", 0 without xdist): what keeps the state
    folders and ports of the local clusters apart when workers run at once."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return worker, int("".join(ch for ch in worker if ch.isdigit()) or 0)
