"""Shared test fixtures.

Real captured outputs live in ``../shared/fixtures`` beside the checkout (or
wherever ``GPUDOCTOR_FIXTURES`` points).  They are read in place, never copied
into the project; where they are absent the tests that need them skip.
"""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.fixtures import real_fixtures_dir

# Parsers are judged on what they survive, not how fast a shared 2-core CI box runs them.
settings.register_profile("gpudoctor", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("gpudoctor")


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    path = real_fixtures_dir()
    if not path.is_dir() or not any(path.iterdir()):
        pytest.skip(f"real captured fixtures not found at {path} (set GPUDOCTOR_FIXTURES)")
    return path


@pytest.fixture(scope="session")
def framework_python() -> str:
    path = os.environ.get("GPUDOCTOR_FRAMEWORK_PYTHON")
    if not path:
        pytest.skip(
            "GPUDOCTOR_FRAMEWORK_PYTHON is not set: run scripts/setup-framework-venv.sh and point it at "
            "that venv's bin/python (scripts/test.sh does both)"
        )
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"GPUDOCTOR_FRAMEWORK_PYTHON={path} is not an executable (run scripts/setup-framework-venv.sh)")
    return path
