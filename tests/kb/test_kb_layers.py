"""The knowledge base is a bottom layer: it imports neither the generators nor the CLI, and its errors are its own
(a ``KnowledgeError`` that shares only the small ``InputError`` base with the CLI's ``UsageError``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpudoctor.errors import InputError, UsageError
from gpudoctor.kb.docker_choice import choose_cuda_image
from gpudoctor.kb.errors import KnowledgeError, KnowledgeRefused

_MODULES = (
    "gpudoctor.kb",
    "gpudoctor.kb.describe",
    "gpudoctor.kb.docker_images",
    "gpudoctor.kb.fix_catalogue",
    "gpudoctor.kb.frameworks",
    "gpudoctor.kb.versions",
)


def test_importing_the_kb_loads_no_generator_and_no_cli() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {_MODULES!r}: importlib.import_module(name)\n"
        "from gpudoctor.kb import describe, docker_choice\n"
        "describe.render_kb_text(topic='docker')\n"
        "try:\n    docker_choice.choose_cuda_image(driver_version='440.33.01', cuda=None)\nexcept Exception:\n    pass\n"
        "bad = sorted(m for m in sys.modules if m.startswith(('gpudoctor.generate', 'gpudoctor.cli', "
        "'gpudoctor.app', 'gpudoctor.commands')))\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_kb_errors_are_their_own() -> None:
    assert issubclass(KnowledgeError, InputError) and issubclass(KnowledgeError, ValueError)
    assert not issubclass(KnowledgeError, UsageError) and not issubclass(UsageError, KnowledgeError)
    with pytest.raises(KnowledgeRefused) as refused:
        choose_cuda_image(driver_version="440.33.01", cuda=None)
    assert refused.value.reason and refused.value.nearest
    assert str(refused.value).endswith(f"; nearest that works: {refused.value.nearest}")
