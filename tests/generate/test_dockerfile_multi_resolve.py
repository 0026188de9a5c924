"""pip's own proof that the multi-framework goldens install as written: a shared venv resolves in one dry run with
dependencies; a split was needed (the joint resolution fails) and each venv resolves alone."""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from tests.generate.test_dockerfile_index import _UNREACHABLE
from tests.generate.test_dockerfile_multi import header
from tests.synthetic.sample_report import GOLDEN_DIR

# --------------------------------------------------------------------------- pip's own proof

PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(17, 40)] + ["manylinux2014_x86_64"]


def golden_requirements(name: str) -> dict[str, list[tuple[str, str | None]]]:
    """venv -> [(requirement, index or None for PyPI)] of a golden file's framework lines (not gpudoctor's wheel,
    not ipykernel/jupyterlab)."""
    text = (GOLDEN_DIR / "dockerfiles" / f"{name}.Dockerfile").read_text(encoding="utf-8")
    venvs: dict[str, list[tuple[str, str | None]]] = {}
    joined = re.sub(r"\\\n\s*", " ", text)
    for line in joined.splitlines():
        for part in re.split(r"&&|;", line):
            found = re.search(r"(?:(/opt/venv[\w-]*)/bin/)?pip install (.+)", part)
            if not found or line.lstrip().startswith("#"):
                continue
            words = shlex.split(found.group(2))
            index = words[words.index("--index-url") + 1] if "--index-url" in words else None
            reqs = [w for w in words if not w.startswith("-") and not w.startswith("http") and "==" in w]
            reqs = [r for r in reqs if not r.startswith(("ipykernel", "jupyterlab"))]
            venv = found.group(1) or "/opt/venv"
            venvs.setdefault(venv, []).extend((r, index) for r in reqs)
    return {venv: reqs for venv, reqs in venvs.items() if reqs}


def resolve(requirements: list[tuple[str, str | None]], scratch: pathlib.Path) -> tuple[int, str]:
    """pip's dry run of all ``requirements`` together, with dependencies, for Linux x86_64 and Python 3.12."""
    from gpudoctor.kb.torch_wheels import torch_release

    words: list[str] = []
    extra: list[str] = []
    for requirement, index in requirements:
        if index and "download.pytorch.org" in index:
            # download.pytorch.org may be out of reach where PyPI is not: its default variant is the same build as
            # PyPI's torch wheel (kb default_pypi_linux_x86_64), so PyPI stands in for that variant only.
            release = torch_release(requirement.split("==")[1].removesuffix(".*"))
            variant = index.rsplit("/", 1)[1]
            if not _reachable(index) and (release is None or release.default_pypi_linux_x86_64 != variant):
                pytest.skip(f"{index} cannot be reached from here and its {variant} build is not PyPI's torch")
            if _reachable(index):
                extra += ["--extra-index-url", index]
        words.append(requirement)
    command = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed"]
    # pip 23 checks Requires-Python against the interpreter running it, not --python-version: the wheel tags
    # (cp312, abi3) still hold every compiled wheel to Python 3.12.
    command += ["--only-binary=:all:", "--target", str(scratch), "--python-version", "3.12", "--timeout", "60"]
    command += ["--ignore-requires-python"]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    done = subprocess.run([*command, *extra, *words], capture_output=True, text=True, timeout=600, check=False, env=env)
    return done.returncode, done.stdout + done.stderr


def _reachable(index: str) -> bool:
    import socket
    import urllib.parse

    host = urllib.parse.urlparse(index).hostname or ""
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def skip_unless_resolvable(code: int, output: str) -> None:
    if code != 0 and any(word in output for word in _UNREACHABLE):
        pytest.skip("the package index cannot be reached from here")
    missing = re.search(r"No matching distribution found for (\S+)", output)
    if code != 0 and missing and "conflict" not in output.lower():
        pytest.skip(f"the index reachable here lacks {missing.group(1)} (a mirror behind PyPI?)")


SHARED = [
    "multi-tensorflow-jax-drv570-ubuntu24.04-runtime",
    "multi-torch-jax-drv580-ubuntu24.04-runtime",
    "multi-torch-tensorflow-jax-drv580-ubuntu24.04-runtime",
]
SPLIT = ["multi-tensorflow2.19-jax-drv570-ubuntu24.04-runtime"]
# Split by CUDA major: the wheels' names differ (nvidia-*-cu12 / -cu13), so pip alone would not refuse them together.
APART = ["multi-torch2.14-tensorflow2.21-jax0.12.0.1-drv580-ubuntu24.04-runtime"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SHARED)
def test_a_shared_venv_resolves_together(name, tmp_path):
    venvs = golden_requirements(name)
    assert list(venvs) == ["/opt/venv"] and len(venvs["/opt/venv"]) >= 2, venvs
    code, output = resolve(venvs["/opt/venv"], tmp_path)
    skip_unless_resolvable(code, output)
    assert code == 0, output[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", APART)
def test_each_venv_of_a_partial_split_resolves(name, tmp_path):
    venvs = golden_requirements(name)
    assert list(venvs) == ["/opt/venv", "/opt/venv-tensorflow"] and len(venvs["/opt/venv"]) == 2, venvs
    for venv, requirements in venvs.items():
        code, output = resolve(requirements, tmp_path / venv.rsplit("/", 1)[1])
        skip_unless_resolvable(code, output)
        assert code == 0, (venv, output[-2000:])


@pytest.mark.slow
@pytest.mark.parametrize("name", SPLIT)
def test_a_split_was_needed_and_each_venv_resolves_alone(name, tmp_path):
    venvs = golden_requirements(name)
    assert len(venvs) >= 2, venvs
    for venv, requirements in venvs.items():
        code, output = resolve(requirements, tmp_path / venv.rsplit("/", 1)[1])
        skip_unless_resolvable(code, output)
        assert code == 0, (venv, output[-2000:])
    code, output = resolve([r for reqs in venvs.values() for r in reqs], tmp_path / "together")
    if any(word in output for word in _UNREACHABLE):
        pytest.skip("the package index cannot be reached from here")
    assert code != 0 and ("ResolutionImpossible" in output or "conflicting dependencies" in output), output[-2000:]
    # pip stops at the first conflict it meets: one of those the header names.
    text = (GOLDEN_DIR / "dockerfiles" / f"{name}.Dockerfile").read_text(encoding="utf-8")
    named = set(re.findall(r"pins (nvidia-[\w-]+)", re.sub(r"\n#\s+", " ", header(text))))
    assert named and any(package in output for package in named), (named, output[-2000:])
